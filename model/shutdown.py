"""What lets a controlled shutdown through under
Rule.CONTROLLED_SHUTDOWN_WAITS_FOR_ACTIVE_BROKERS, as Kafka's broker gets there:
it asks first (``BeginControlledShutdown``), then each broker its shutdown waits
for applies the metadata log (``ReplicateMetadata``), one at a time. A trace
written without the rule (a chapters' scenario, one reduced before the rule came
in) is carried over to it with these steps before its ``ControlledShutdown``."""

from __future__ import annotations

from .actions import Action, BeginControlledShutdown, ReplicateMetadata
from .controller import controlled_shutdown_wait, next_heartbeat_shutdown_wait
from .profile import Rule
from .state import BrokerStatus, ClusterState
from .step import step


def let_go_steps(state: ClusterState, broker: int) -> list[Action]:
    """The actions after which ``broker``'s ``ControlledShutdown`` no longer waits
    (module doc); empty when it need not wait, or the rule is off. Raises
    ActionNotEnabled when a broker it waits for cannot catch up (one that stopped:
    its session must expire first)."""
    if not state.config.follows(Rule.CONTROLLED_SHUTDOWN_WAITS_FOR_ACTIVE_BROKERS) \
            or state.broker(broker).status != BrokerStatus.RUNNING:
        return []
    if next_heartbeat_shutdown_wait(state, broker) is None:
        return []
    steps: list[Action] = [] if state.broker(broker).shutting_down else [BeginControlledShutdown(broker)]
    for action in steps:
        state = step(state, action)
    while (wait := controlled_shutdown_wait(state, broker)) is not None:
        steps.append(ReplicateMetadata(wait[0], state.pending_metadata(wait[0])))
        state = step(state, steps[-1])
    return steps

"""The minimal counterexample of every protocol-flaw variant (``check.scenarios``).

For each ``Variant``: the scenario's actions, replayed from ``initial_state``,
(a) keep every property under the correct protocol, and (b) under the variant
break the expected property at the end, and nothing before the flaw shows.

Four variants only relax the guard of ``ProposeIsrExpand`` (directly, or through
the follower state that guard alone reads). The correct protocol reaches exactly the
same state and then refuses the flawed expansion, so for them (a) checks that the
correct protocol runs every earlier step cleanly and refuses that step, naming the
condition the variant drops.

A liveness-only variant's scenario ends in ``Heal``: the healing phase runs
(``model.healing.apply``) and the liveness goals are judged after it, beside
the safety properties (``_names``).
"""

from __future__ import annotations

import attrs
import pytest

import properties
from check.scenarios import MINIMAL, MinimalScenario
from check.reduce import rebase, sends
from model import (KAFKA, LIVENESS_VARIANTS, PROFILES, rules_without, VARIANT_DOCS, Action, ClusterState, Config, Heal,
                   ProposeIsrExpand, Produce, Reassign, ReceiveFetchRequest, ReceiveFetchResponse, ReplicateMetadata,
                   Rule, SendFetch, Variant, initial_state, why_not_enabled)
from model.healing import apply as step
from properties.liveness import LIVENESS, check_liveness

# Variant -> the reason (a substring) the correct protocol gives for refusing the flawed
# ProposeIsrExpand of its scenario.
REFUSED_BY_CORRECT_PROTOCOL: dict[Variant, str] = {
    Variant.ISR_JOIN_WITHOUT_LESO: "is below the LESO",
    Variant.ISR_JOIN_WITHOUT_CURRENT_EPOCH_FETCH: "has not fetched in leader epoch",
    Variant.NO_FOLLOWER_STATE_RESET_ON_NEW_EPOCH: "has not fetched in leader epoch",
    # The zombie fetch is answered FENCED_LEADER_EPOCH, so the leader still has the
    # recreated replica's old fetch offset 0.
    Variant.NO_FETCH_LEADER_EPOCH_FENCING: "is below the HWM",
}

# A flaw shows at most this many steps before the end of its scenario.
MAX_STEPS_FROM_FLAW_TO_END = 3


def _id(v: Variant) -> str:
    sc = MINIMAL.get(v)
    return f"{v.name}-{len(sc.actions)}steps" if sc is not None else v.name


def _names(state: ClusterState, action: Action | None = None) -> list[str]:
    """The properties ``state`` breaks; after a ``Heal``, the liveness goals too."""
    live = check_liveness(state) if isinstance(action, Heal) else ()
    return sorted({v.property for v in properties.check_all(state) + live})


def _refusal(state: ClusterState, action: Action) -> str | None:
    """Why ``action`` is not enabled in ``state`` (None: it is; the directive Heal always is)."""
    return None if isinstance(action, Heal) else why_not_enabled(state, action)


def test_catalogue_covers_every_variant():
    assert set(MINIMAL) == set(Variant)
    assert all(isinstance(sc, MinimalScenario) for sc in MINIMAL.values())
    assert set(REFUSED_BY_CORRECT_PROTOCOL) <= set(Variant)


@pytest.mark.parametrize("variant", list(Variant), ids=_id)
def test_scenario_is_well_formed(variant: Variant):
    sc = MINIMAL[variant]
    assert isinstance(sc.config, Config) and sc.config.variants == frozenset(), "the test adds the variant"
    assert sc.actions, "a scenario needs actions"
    assert sc.expected in VARIANT_DOCS[variant][1], (
        f"{sc.expected} is not among the properties expected to fail: {VARIANT_DOCS[variant][1]}")
    # A liveness-only flaw is shown by healing, and breaks liveness goals alone.
    goals = {g.name for g in LIVENESS}
    if variant in LIVENESS_VARIANTS:
        assert isinstance(sc.actions[-1], Heal) and set(VARIANT_DOCS[variant][1]) <= goals
    else:
        assert not any(isinstance(a, Heal) for a in sc.actions) and not set(VARIANT_DOCS[variant][1]) & goals
    lines = sc.story.strip().splitlines()
    assert 2 <= len(lines) <= 5, f"story has {len(lines)} lines"
    # Properties are promised: no unguarded election mechanism is switched on.
    assert not sc.config.unclean_leader_election and sc.config.unclean_recovery != "proactive"


@pytest.mark.parametrize("variant", list(Variant), ids=_id)
def test_correct_protocol_keeps_every_property(variant: Variant):
    """(a) Under the correct protocol every action is enabled and every property holds
    after every step — or, for a guard-only variant, exactly the flawed ISR expansion
    is refused."""
    sc = MINIMAL[variant]
    state = initial_state(sc.config)
    assert properties.check_all(state) == ()
    for i, action in enumerate(sc.actions):
        reason = _refusal(state, action)
        if reason is not None:
            assert variant in REFUSED_BY_CORRECT_PROTOCOL, f"step {i + 1} {action!r} not enabled: {reason}"
            assert isinstance(action, ProposeIsrExpand), f"step {i + 1} {action!r} refused: {reason}"
            assert REFUSED_BY_CORRECT_PROTOCOL[variant] in reason, reason
            # The expansion is the flaw's step: it comes right before the end.
            assert len(sc.actions) - i <= MAX_STEPS_FROM_FLAW_TO_END
            return
        state = step(state, action)
        assert _names(state, action) == [], (
            f"correct protocol violates {_names(state, action)} after step {i + 1} {action!r}")
    assert variant not in REFUSED_BY_CORRECT_PROTOCOL, "expected the correct protocol to refuse a step"


@pytest.mark.parametrize("variant", list(Variant), ids=_id)
def test_variant_breaks_expected_property(variant: Variant):
    """(b) Under the variant every action is enabled, the properties stay promised
    (fault budget, no unguarded election), no property fails before the flaw shows
    (within the last few steps), and the expected property fails after the last step."""
    sc = MINIMAL[variant]
    state = initial_state(attrs.evolve(sc.config, variants=frozenset({variant})))
    first_violation = None
    for i, action in enumerate(sc.actions):
        reason = _refusal(state, action)
        assert reason is None, f"step {i + 1} {action!r} not enabled under {variant.name}: {reason}"
        state = step(state, action)
        assert properties.guarantees_apply(state), f"step {i + 1} {action!r} leaves the fault model"
        if first_violation is None and _names(state, action):
            first_violation = i
    assert first_violation is not None, f"{variant.name}: no property violated"
    assert len(sc.actions) - first_violation <= MAX_STEPS_FROM_FLAW_TO_END, (
        f"{variant.name}: first violation at step {first_violation + 1} of {len(sc.actions)}: not minimal")
    assert sc.expected in _names(state, sc.actions[-1]), (
        f"{variant.name}: expected {sc.expected}, got {_names(state, sc.actions[-1])} after the last step")


# --------------------------------------------------------- under the Kafka profile

#: What each minimal scenario shows under the Kafka profile. A tuple of property
#: names: the flaw breaks them there too. A ``Rule`` (a frozenset of rules): one
#: of Kafka's own rules (each of them) stops the story, and switching that rule
#: (all of them) off lets the flaw show again. A string:
#: why the scenario cannot run there.
KAFKA_OUTCOME: dict[Variant, object] = {
    Variant.TRUNCATE_TO_HWM: ("LeaderCandidateCompleteness", "StrongIsr"),
    Variant.NO_LAST_FETCHED_EPOCH: ("LogMatching",),
    Variant.NO_FETCH_LEADER_EPOCH_FENCING: ("StrongIsr",),
    # The caught-up follower outside the ISR holds the HWM the Maximal ISR would have.
    Variant.NO_MAXIMAL_ISR: Rule.HWM_WAITS_FOR_CAUGHT_UP_FOLLOWERS,
    Variant.ISR_JOIN_WITHOUT_LESO: ("LeaderCandidateCompleteness", "StrongIsr"),
    # Kafka proposes an expansion only serving a fetch, which is in the current leader epoch.
    Variant.ISR_JOIN_WITHOUT_CURRENT_EPOCH_FETCH: Rule.EXPAND_ISR_ON_FETCH,
    # The leader itself does not propose a follower its metadata has fenced.
    Variant.ALTER_PARTITION_WITHOUT_BROKER_EPOCH: Rule.LEADER_CHECKS_ISR_ELIGIBILITY,
    # Kafka takes a broker back from an unclean shutdown out of the ISR and ELR.
    Variant.NO_ELR: Rule.LAST_KNOWN_LEADER,
    Variant.UNCLEAN_REGISTRATION_KEEPS_ELR: Rule.LAST_KNOWN_LEADER,
    Variant.ELR_KEPT_WHEN_ISR_REACHES_MIN_ISR: ("ReplicationQuorumSuperset",),
    Variant.HWM_ADVANCES_BELOW_MIN_ISR: ("LeaderCandidateCompleteness",),
    Variant.BALANCED_RECOVERY_ANY_MEMBER: "Kafka has no unclean.recovery.strategy (Rule.LAST_KNOWN_LEADER)",
    Variant.LIST_OFFSETS_BEFORE_LESO: ("AppliedHwmMonotonicity",),
    # Kafka answers a fetch with the HWM read before it: the stale answer carries HWM 0, so
    # the misplaced value is not below it; one fetch round more shows the flaw (below).
    Variant.NO_FETCH_RESPONSE_VALIDATION: Rule.FETCH_ANSWER_HWM_BEFORE_UPDATE,
    # The same: the stale last-fetch marker is never read without a fetch in the new epoch.
    Variant.NO_FOLLOWER_STATE_RESET_ON_NEW_EPOCH: Rule.EXPAND_ISR_ON_FETCH,
    # Shrinking the replica set, Kafka waits for every target replica in the ISR.
    Variant.REASSIGNMENT_COMPLETES_BELOW_MIN_ISR: Rule.REASSIGNMENT_COMPLETION,
    Variant.MIN_ISR_CHANGE_KEEPS_ELR: ("ValidPartitionMetadata",),
    # The liveness-only flaws stop Kafka's cluster the same way.
    Variant.ELR_MEMBER_NOT_ELECTED_ON_UNFENCE: ("HwmReachesLeo", "IsrRestored", "LeaderElected"),
    Variant.REREGISTERED_BROKER_STAYS_FENCED: ("BrokersStarted", "BrokersUnfenced", "IsrRestored"),
    # Kafka's leader proposes an expansion only serving a fetch, and never one of a broker its metadata fences.
    Variant.EXPANSION_ABANDONED_AFTER_REJECTION: frozenset({Rule.EXPAND_ISR_ON_FETCH, Rule.LEADER_CHECKS_ISR_ELIGIBILITY}),
    Variant.FOLLOWER_STOPS_FETCHING_AFTER_DIVERGENCE: ("AcknowledgedWritesReplicated", "HwmReachesLeo", "IsrRestored"),
}


def _run(sc: MinimalScenario, config: Config, variant: Variant | None = None) -> tuple[str, ...] | str:
    """The properties broken after the first step that breaks any, () when none
    does, or the refusal of a step (its reason). Under another profile than the
    scenario's, the trace of ``variant``'s run there is carried over first
    (``check.reduce.rebase``): a ``ProposeIsrExpand`` whose AlterPartition
    Kafka's leader sent serving a fetch (Rule.EXPAND_ISR_ON_FETCH) is that one,
    and a controlled shutdown waits for the active brokers
    (Rule.CONTROLLED_SHUTDOWN_WAITS_FOR_ACTIVE_BROKERS)."""
    actions = sc.actions
    if config.profile != sc.config.profile:
        own = attrs.evolve(sc.config, variants=frozenset({variant} if variant else ()))
        sent = sends(actions, own)
        # leniently when a step must give way (a controlled shutdown's wait inserted
        # before it leaves less for a later ReplicateMetadata to apply)
        actions = rebase(actions, [True] * len(actions), config, sent) \
            or rebase(actions, [True] * len(actions), config, sent, lenient=True) or actions
    state = initial_state(config)
    for i, action in enumerate(actions):
        reason = _refusal(state, action)
        if reason is not None:
            return f"step {i + 1} {action!r}: {reason}"
        state = step(state, action)
        if (names := _names(state, action)):
            return tuple(names)
    return ()


def _kafka(sc: MinimalScenario, variant: Variant | None, without: Rule | frozenset[Rule] | None = None) -> Config:
    """The Kafka profile on the scenario's cluster, ``without`` a rule or a set of
    rules (and the rules that require one of them)."""
    off = () if without is None else (without,) if isinstance(without, Rule) else tuple(without)
    rules = rules_without(PROFILES[KAFKA], *off)
    return attrs.evolve(sc.config, profile=KAFKA, rules=rules, variants=frozenset({variant} if variant else ()))


def test_unvalidated_fetch_responses_break_log_matching_under_kafkas_rules_one_fetch_later():
    """NO_FETCH_RESPONSE_VALIDATION's scenario with a second fetch round before the
    stale fetch: that fetch is answered with HWM 1 under Kafka's rules too, and the
    flaw shows (15 steps)."""
    sc = MINIMAL[Variant.NO_FETCH_RESPONSE_VALIDATION]
    sc = attrs.evolve(sc, actions=(
        Produce(1, 1), SendFetch(2), ReceiveFetchRequest(1), ReceiveFetchResponse(2),
        SendFetch(2), ReceiveFetchRequest(3), ReceiveFetchResponse(4),
        Produce(1, 2), SendFetch(2), ReceiveFetchRequest(5),
        Reassign((1,)), Reassign((1, 2)), ReplicateMetadata(2, 1), ReplicateMetadata(2, 1), ReceiveFetchResponse(6)))
    variant = Variant.NO_FETCH_RESPONSE_VALIDATION
    assert _run(sc, _kafka(sc, None), variant) == ()
    assert _run(sc, _kafka(sc, variant), variant) == ("LogMatching",)


def test_kafka_outcome_covers_every_variant():
    assert set(KAFKA_OUTCOME) == set(Variant)


@pytest.mark.parametrize("variant", list(Variant), ids=_id)
def test_minimal_scenario_under_the_kafka_profile(variant: Variant):
    """Under Kafka's rules the correct protocol keeps every property on the
    scenario (or refuses the same flawed expansion as the chapters' one), and the
    variant shows its flaw, or one of Kafka's rules stops it (KAFKA_OUTCOME)."""
    sc, outcome = MINIMAL[variant], KAFKA_OUTCOME[variant]
    if isinstance(outcome, str):
        with pytest.raises(ValueError, match="unclean_recovery"):
            _kafka(sc, variant)
        return
    correct = _run(sc, _kafka(sc, None), variant)
    flawed = _run(sc, _kafka(sc, variant), variant)
    assert not isinstance(correct, tuple) or correct == (), f"Kafka profile breaks {correct}"
    if isinstance(correct, str):  # the flawed step is the guard the variant relaxes
        assert variant in REFUSED_BY_CORRECT_PROTOCOL or isinstance(outcome, (Rule, frozenset)), correct
    if isinstance(outcome, (Rule, frozenset)):
        assert not isinstance(flawed, tuple) or flawed == (), f"{outcome} should stop it: {flawed}"
        shown = _run(sc, _kafka(sc, variant, without=outcome), variant)
        assert isinstance(shown, tuple) and shown, f"without {outcome} the flaw should show: {shown}"
    else:
        assert flawed == outcome, flawed

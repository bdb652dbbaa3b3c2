"""Protocol coverage: which corners of the protocol a step reached, reported
through ``hypothesis.event`` (shown by ``--hypothesis-show-statistics``) and
counted per run for the corpus."""

from __future__ import annotations

from model import (NO_LEADER, Action, AlterPartitionResponse, CancelReassignment, ClusterState,
                   FetchResponse, Heal, ListOffsets, StartBroker, UncleanShutdown)


def events_between(before: ClusterState, after: ClusterState, action: Action) -> list[str]:
    """Names of the protocol events ``action`` caused going from ``before`` to ``after``."""
    out: list[str] = []
    p0, p1 = before.partition, after.partition
    h0, h1 = before.history, after.history
    for b0, b1 in zip(before.brokers, after.brokers):
        if b0.replica is not None and b1.replica is not None and b1.replica.leo < b0.replica.leo \
                and not isinstance(action, UncleanShutdown):
            out.append("follower truncated on a diverging epoch")
    if p1.leader == NO_LEADER and p0.leader != NO_LEADER:
        out.append("partition has no leader")
    if p1.elr and not p0.elr:
        out.append("ELR became non-empty")
    if p1.last_known_elr and not p0.last_known_elr:
        out.append("LastKnownELR became non-empty")
    if p1.leader_epoch > p0.leader_epoch and p1.leader != p0.leader and p1.leader != NO_LEADER:
        out.append("leader elected")
    if p1.reassigning and not p0.reassigning:
        out.append("reassignment started")
    if p0.reassigning and not p1.reassigning:
        out.append("reassignment cancelled" if isinstance(action, CancelReassignment) else "reassignment completed")
    if len(h1.unclean_elections) > len(h0.unclean_elections):
        out.append(f"unclean election: {h1.unclean_elections[-1].mechanism}")
    if h1.true_hwm > h0.true_hwm:
        out.append("True HWM advanced")
    if len(h1.acked) > len(h0.acked):
        out.append("write acknowledged")
    if len(h1.nacked) > len(h0.nacked):
        out.append("write negatively acknowledged")
    if isinstance(action, UncleanShutdown):
        out.append("lossy unclean shutdown" if action.lossy else "non-lossy unclean shutdown")
    if isinstance(action, StartBroker) and len(h1.unclean) > len(h0.unclean):
        out.append("unclean registration (empty broker epoch)")
    if isinstance(action, ListOffsets) and h1.list_offsets and h1.list_offsets[-1].hwm is None:
        out.append("ListOffsets answered unknown (HWM below LESO)")
    if isinstance(action, Heal):
        out.append("healing phase")
    # the message this step sent, if still in flight (a healing phase delivers its own)
    sent = after.network.next_id > before.network.next_id and after.network.messages
    new = after.network.messages[-1] if sent else None
    if isinstance(new, AlterPartitionResponse):
        out.append(f"AlterPartition rejected: {new.error}" if new.error else "AlterPartition accepted")
    elif isinstance(new, FetchResponse):
        if new.diverging_epoch is not None:
            out.append("fetch response with a diverging epoch")
        elif new.error is not None:
            out.append(f"fetch rejected: {new.error}")
    return out

"""The space-time diagram from a row alone (no Spark): fetch arcs follow the
recorded message ids, cells, truncations, elections and spans come from the
recorded timeline, a row without one is drawn from its steps without guessing,
tolerant decoding, and a PNG for anything."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from check.subject import Subject
from model_rows import scenario_row
from spark_reports.diagram import (build_timeline, decode_config, decode_state, parse_steps, parse_timeline,
                                   space_time_png)

T = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)


def _timeline(row):
    return build_timeline(parse_steps(row["steps"]), parse_timeline(row.get("timeline")),
                          decode_state(row["final_state_json"]), decode_config(row["config_json"]))


def _check_messages_against_model(config, actions):
    """Every fetch arc the diagram draws from a replay's recorded timeline ends
    where the model delivered that follower's response, and started at that
    follower's SendFetch."""
    from check.replay import replay
    from store.codec import action_args, encode_timeline, to_jsonable
    from model import FetchResponse, ReceiveFetchResponse, initial_state, step
    state = initial_state(config)
    delivered = {}
    for i, a in enumerate(actions):
        if isinstance(a, ReceiveFetchResponse):
            msg = state.network.get(a.msg)
            assert isinstance(msg, FetchResponse)
            delivered[i] = msg.dst
        state = step(state, a)
    moments = replay(actions, Subject.at(config, compare=False), timeline=True).timeline
    assert len(moments) == len(actions)
    row = {"steps": [{"idx": i, "family": "x", "action": type(a).__name__, "args_json": json.dumps(action_args(a))}
                     for i, a in enumerate(actions)],
           "timeline": encode_timeline(moments), "final_state_json": json.dumps(to_jsonable(state)),
           "config_json": json.dumps({"brokers": list(config.brokers), "assignment": list(config.assignment)})}
    tl = _timeline(row)
    assert tl.recorded and not tl.notes
    ends = {arc.end: arc for arc in tl.arcs if arc.outcome == "delivered"}
    assert set(ends) == set(delivered)
    for i, follower in delivered.items():
        arc = ends[i]
        assert arc.lane == follower
        assert actions[arc.start].__class__.__name__ == "SendFetch" and actions[arc.start].follower == follower
        assert arc.start < arc.served < arc.end
    return tl


def test_fetch_arcs_follow_the_recorded_messages_in_every_minimal_scenario():
    import attrs
    from check.scenarios import MINIMAL
    from check.replay import replay
    from model import Heal
    for variant, sc in MINIMAL.items():
        config = attrs.evolve(sc.config, variants=frozenset({variant}))
        # up to the story's first violation, where a replay stops; before a healing
        # phase, whose fetches are drawn within its one step
        upto = [a for a in replay(sc.actions, Subject.at(config, compare=False)).trace if not isinstance(a, Heal)]
        _check_messages_against_model(config, upto)


def test_a_healing_phase_is_drawn_as_a_band_at_its_step():
    row, _, sc = scenario_row("REREGISTERED_BROKER_STAYS_FENCED", T)
    tl = _timeline(row)
    assert row["kind"] == "liveness" and len(sc.actions) == 2
    assert tl.healing == [1] and (1, "controller", "HEAL") in [(m.step, m.lane, m.label) for m in tl.marks]
    # broker 2 is offline from its crash to the healing, which restarts it, and fenced from there to the end
    assert (tl.offline, tl.fenced) == ([(2, 0, 1)], [(2, 1, 2)])
    assert space_time_png(row).startswith(b"\x89PNG")
    row, _, _ = scenario_row("TRUNCATE_TO_HWM", T)
    assert _timeline(row).healing == []


def test_fetch_arcs_follow_the_recorded_messages_on_a_long_random_walk():
    from check.random_walk import random_walk
    from model import Config, DropMessage
    config = Config(brokers=(1, 2, 3, 4), assignment=(1, 2, 3), min_isr=2, unclean_recovery="balanced")
    actions = [a for a, _ in random_walk(config, 400, seed=11, policy="weighted")]
    assert any(isinstance(a, DropMessage) for a in actions)
    tl = _check_messages_against_model(config, actions)
    assert any(arc.outcome == "dropped" for arc in tl.arcs)


def test_cells_truncation_and_election_truncate_to_hwm():
    row, state, _ = scenario_row("TRUNCATE_TO_HWM", T)
    tl = _timeline(row)
    # Produce(1, 1) at step 0: offset 0, epoch 1 on broker 1, acknowledged at step 5, still there at the end
    assert [(c.step, c.lane, c.offset, c.epoch, c.status, c.acked) for c in tl.cells] == [(0, 1, 0, 1, "kept", True)]
    assert (5, "controller", "ack v1@0") in [(m.step, m.lane, m.label) for m in tl.marks]
    # broker 2 (LEO 1) truncates to its HWM (0) when it applies the new leader epoch (ReplicateMetadata, step 8)
    assert [(m.step, m.lane, m.label) for m in tl.marks if m.kind == "loss"] == [(8, 2, "✂ LEO 1→0")]
    assert [(a.lane, a.start, a.served, a.end, a.outcome) for a in tl.arcs] == [
        (2, 1, 2, 3, "delivered"), (2, 4, 5, None, "in flight")]
    # the cancelled reassignment bumps the leader epoch; broker 1 stays the leader
    assert tl.elections == [(7, False, "LE2")]
    assert tl.epoch_leaders == {1: (1, 0), 2: (1, 7)}


def test_lossy_shutdown_loss_and_unclean_election():
    row, _, _ = scenario_row("BALANCED_RECOVERY_ANY_MEMBER", T)
    tl = _timeline(row)
    assert [(m.step, m.lane, m.label) for m in tl.marks if m.kind == "loss"] == [(6, 1, "lost LEO 1→0")]
    # the record reached broker 2 when it applied the fetch response at step 3
    assert [(c.step, c.lane, c.status) for c in tl.cells] == [(0, 1, "lost"), (3, 2, "replicated")]
    assert sorted(tl.elections) == [(7, False, "LE2"), (9, False, "LE3"), (16, True, "UNCLEAN RECOVERY")]
    assert tl.epoch_leaders == {1: (1, 0), 2: (2, 7), 4: (1, 16)}
    # crash at 6 / 8 until StartBroker at 10 / 11; fenced at 7 / 9 until UnfenceBroker at 13 / 15
    assert sorted(tl.offline) == [(1, 6, 10), (2, 8, 11)]
    assert sorted(tl.fenced) == [(1, 7, 13), (2, 9, 15)]


def test_a_row_without_a_timeline_is_drawn_from_its_steps_and_says_what_is_missing():
    row, _, _ = scenario_row("BALANCED_RECOVERY_ANY_MEMBER", T)
    tl = _timeline(row | {"timeline": None})
    assert not tl.recorded and tl.notes[0].startswith("no timeline in this row")
    assert tl.arcs == [] and tl.offline == [] and [m for m in tl.marks if m.kind == "loss"] == []
    assert tl.elections == [(16, True, "UNCLEAN RECOVERY")]
    assert [(c.step, c.lane, c.status) for c in tl.cells] == [(0, 1, "lost")]


def test_decode_state_accepts_other_encodings():
    st = {"controller": {"partition": {"leader": 2, "leader_epoch": 3, "isr": [2, 1]},
                         "registrations": [{"broker": 1, "fenced": True}]},
          "brokers": {"1": {"status": "BrokerStatus.OFFLINE_DIRTY", "replica": {"log": [[1, 5], [2, 6]], "hwm": 1}},
                      "2": {"status": "RUNNING", "replica": {"log": ["e1:5", "e3:9"], "role": "Role.LEADER",
                                                             "followers": {"1": {"fetch_offset": 2}}}}},
          "history": {"committed": [{"epoch": 1, "value": 5}], "acked": [[5, 0]]}}
    v = decode_state(json.dumps(st))
    assert v.problem is None and v.leader == 2 and v.isr == [1, 2] and v.true_hwm == 1 and v.acked == {5: 0}
    assert v.replicas[1].log == [(1, 5), (2, 6)] and v.replicas[1].fenced and v.replicas[1].status == "OFFLINE_DIRTY"
    assert v.replicas[2].log == [(1, 5), (3, 9)] and v.replicas[2].role == "LEADER"
    assert v.replicas[2].follower_fetch_offsets == {1: 2}
    assert decode_state("{not json").problem.startswith("final_state_json is not JSON")
    assert decode_state("{}").problem == "final_state_json holds no state"
    assert decode_state(json.dumps({"brokers": [{"id": 1, "replica": {"log": [{"x": 1}]}}]})).replicas[1].log == []


@pytest.mark.parametrize("final_state", ["{}", "garbage", json.dumps({"brokers": "?"})])
def test_png_for_anything(final_state):
    row = {"steps": [{"idx": 0, "family": "f", "action": "Teleport", "args_json": '{"broker": 9}'},
                     {"idx": 1, "family": "fetch", "action": "ReceiveFetchResponse", "args_json": '{"msg": 42}'},
                     {"idx": 2, "family": "client", "action": "Produce", "args_json": "not json"}],
           "final_state_json": final_state, "config_json": "", "property": "P", "signature": "s",
           "violation": "v" * 500, "variants": [], "sut_bugs": ["b"], "counterexample_id": "x"}
    png = space_time_png(row)
    assert png.startswith(b"\x89PNG")
    assert not _timeline(row).recorded
    garbled = row | {"timeline": [{"idx": 0, "received": 42, "sent": [{"id": None}], "outcome_json": "{",
                                   "brokers": [{"broker": None}, {"broker": 9, "leo": "x"}]}]}
    assert space_time_png(garbled).startswith(b"\x89PNG")


def test_the_diagram_numbers_steps_as_replay_does(monkeypatch):
    """The x axis counts from 1, so the failing step replay names ("after step N")
    is the last tick, N."""
    import matplotlib.axes

    from store.decode import decode_counterexample
    from check.replay import replay
    labels: list[list[str]] = []
    original = matplotlib.axes.Axes.set_xticklabels

    def record(self, ticks, *args, **kwargs):
        labels.append([str(t) for t in ticks])
        return original(self, ticks, *args, **kwargs)

    monkeypatch.setattr(matplotlib.axes.Axes, "set_xticklabels", record)
    row, _, _ = scenario_row("NO_ELR", T)
    assert space_time_png(row)[:8] == b"\x89PNG\r\n\x1a\n"
    decoded = decode_counterexample(row)
    failed_at = replay(decoded.actions, Subject.at(decoded.config, compare=False)).failed_at
    (shown,) = labels
    assert shown[0] == "1" and shown[-1] == str(failed_at) == str(row["step_count"])


def test_a_shrink_of_several_followers_is_marked_on_the_leader():
    steps = parse_steps([{"idx": 0, "family": "isr", "action": "ProposeIsrShrinkMany",
                          "args_json": json.dumps({"leader": 1, "followers": [2, 3]})}])
    tl = build_timeline(steps, None, decode_state(None), {"brokers": [1, 2, 3], "assignment": [1, 2, 3]})
    assert [(m.step, m.lane, m.label, m.kind) for m in tl.marks] == [(0, 1, "ISR−2,3", "isr")]

"""The action registry (``model.actions.ACTIONS``) describes every action class
once, and truly: its message and broker fields are what the model does."""

from __future__ import annotations

import inspect
import typing

import attrs
import pytest

import model.actions as actions
import model.state as state
from model import ACTION_TYPES, ACTIONS, DIRECTIVE_FAMILIES, KAFKA, Config, kind_of
from model.step import HANDLERS


def test_every_action_class_is_registered_once():
    defined = {c for c in vars(actions).values()
               if inspect.isclass(c) and attrs.has(c) and c.__module__ == actions.__name__ and c is not actions.ActionKind}
    assert {k.cls for k in ACTIONS} == defined and len(ACTIONS) == len(defined)
    assert set(typing.get_args(actions.Action)) == defined


def test_each_kind_names_real_fields_and_messages():
    messages = {t.__name__ for t in typing.get_args(state.Message)}
    for k in ACTIONS:
        fields = {f.name for f in attrs.fields(k.cls)}
        assert set(k.broker_fields) <= fields, k.name
        assert (k.receives is not None) == ("msg" in fields), k.name
        assert k.receives in messages | {None, "any"} and k.sends in messages | {None}, k.name
        directive = k.family in DIRECTIVE_FAMILIES   # never drawn by a walk (weight 0): the check expands it
        assert (k.weight == 0 if directive else k.weight > 0) and k.family_weight >= 1 and k.swarm[0] == 1, k.name


def test_each_tag_formats_its_fields_or_its_outcome():
    """A diagram tag (``ActionKind.tag``) names only the action's own fields or,
    for a client's read, its ``Outcome``'s."""
    import string

    from model import Outcome
    outcome = {f.name for f in attrs.fields(Outcome)}
    for k in ACTIONS:
        named = {field for _, field, _, _ in string.Formatter().parse(k.tag or "") if field}
        assert named <= {f.name for f in attrs.fields(k.cls)} | outcome, k.name


def test_every_registered_action_has_a_guard_and_an_effect_in_both_engines():
    from sut.cluster import Cluster
    assert set(HANDLERS) == set(ACTION_TYPES)
    assert set(Cluster._DISPATCH) == set(ACTION_TYPES)


def test_kind_of_a_non_action_names_the_allowed_ones():
    with pytest.raises(ValueError, match=r"not a replicheck action: 'x'; allowed: \['StartBroker'"):
        kind_of("x")


def test_sends_and_receives_are_what_the_model_does_on_a_long_walk():
    """Each step of a 600-step weighted walk, under each profile (some actions are
    the Kafka profile's only, ``ProposeIsrShrinkMany``), sends exactly the
    registered message (or none; or the one it may send first, which the Kafka
    walk does) and takes the registered one off the network."""
    from check.random_walk import random_walk
    from check.timeline import model_timeline
    seen = set()
    cluster = dict(brokers=(1, 2, 3, 4), assignment=(1, 2, 3), min_isr=2)
    for config, seed in ((Config(**cluster, unclean_recovery="balanced"), 5), (Config(**cluster, profile=KAFKA), 26)):
        trace = [a for a, _ in random_walk(config, 600, seed=seed, policy="weighted")]
        before = {}
        for action, m in zip(trace, model_timeline(config, trace)):
            k = kind_of(action)
            sent = [s.type for s in m.sent]
            assert sent in ([k.sends] if k.sends else [], [k.may_send, k.sends]), action
            if k.may_send in sent:
                seen.add(k.may_send)
            assert (m.received is not None) == (k.receives is not None), action
            if k.receives not in (None, "any"):
                assert before[m.received] == k.receives, action
            before.update({s.id: s.type for s in m.sent})
            seen.add(type(action))
    assert {k.cls for k in ACTIONS if k.sends or k.receives} | {k.may_send for k in ACTIONS if k.may_send} <= seen


def test_every_drawn_action_class_has_one_enumeration_segment():
    # enabled_actions(state, classes) runs only the segments whose classes meet
    # ``classes``: a class in no segment would never be enumerated, one in two twice.
    from model.enumeration import _SEGMENTS
    listed = [c for yields, _ in _SEGMENTS for c in yields]
    drawn = {k.cls for k in ACTIONS if k.family not in DIRECTIVE_FAMILIES}
    assert len(listed) == len(set(listed)) and set(listed) == drawn

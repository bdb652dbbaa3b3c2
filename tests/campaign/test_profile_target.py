"""The campaign's target for the correct protocol under Kafka's profile
(``profile:kafka-X``): in the default campaign beside ``correct``, the bundled SUT
compared with the model under Kafka's rules, going on past the profile's own
findings as a run of Kafka's code does (detached there, not failed)."""

from __future__ import annotations

import attrs
import pytest

from campaign.targets import Target, all_targets
from check.replay import replay
from model import KAFKA
from reproducers.findings import finding

PROFILE_TARGET = Target("profile", KAFKA)


def test_the_default_campaign_searches_the_correct_protocol_under_kafkas_profile_too():
    labels = [t.label for t in all_targets()]
    assert labels[:2] == ["correct", f"profile:{KAFKA}"] and PROFILE_TARGET.runs_whole_share
    assert [t.label for t in all_targets(include_correct=False)] == labels[2:]   # --no-correct
    assert [t.label for t in all_targets(variants=["NO_ELR"])] == ["correct", "variant:NO_ELR"]
    assert all_targets(correct_only=True) == [Target("correct")]
    assert Target.parse(f"profile:{KAFKA}#1") == Target("profile", KAFKA, 1)
    assert PROFILE_TARGET.test_id == f"campaign[profile:{KAFKA}]"


def test_a_bad_profile_target_is_named_with_the_allowed_values():
    with pytest.raises(ValueError, match=rf"^unknown profile 'chapters'; allowed: {KAFKA}$"):
        Target.parse("profile:chapters")   # that one is the target `correct`


def test_the_profile_target_puts_the_bundled_sut_under_kafkas_rules_and_goes_on_past_its_findings():
    """Finding 12 (an acknowledged write lost under Kafka 4.4.0's rules) fails a
    property of the Kafka profile: the profile's target replays it to the end with
    the SUT compared up to there, where a subject that did not detach fails."""
    f = finding(12)
    subject = PROFILE_TARGET.subject.with_config(f.config)
    assert (subject.profile, subject.compares, subject.implementation) == (KAFKA, True, None)
    went_on = replay(f.trace, subject)
    assert went_on.verdict is None and len(went_on.trace) == len(f.trace)
    stopped = replay(f.trace, attrs.evolve(subject, detach_at_findings=False))
    assert stopped.verdict is not None and stopped.verdict.kind == "property"

"""The regression rule of ``--replay-corpus`` (pytest_replicheck.plugin):
counterexamples recorded against a protocol variant (a property) or a SUT bug (a
divergence) must still fail the same way; counterexamples of the correct
protocol and SUT must now pass (the bug was fixed and must stay fixed)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from sut import Bug

from replicheck_cli.commands import main
from store.decode import decode_counterexample
from store.reader import read_counterexamples
from campaign.regression import regression_failure
from check.replay import replay
from check.subject import Subject

from corpus_support import HWM_CONFIG, HWM_TRACE, PRODUCE_CONFIG, PRODUCE_TRACE, rows_for, run_pytest, write_corpus


def as_correct_protocol(row):
    """The row as if it had been found with no variant on (a real bug of the
    correct protocol, since fixed: the trace no longer fails)."""
    config = json.loads(row["config_json"])
    config["variants"] = []
    return dict(row, variants=[], config_json=json.dumps(config), counterexample_id="c" * 64)


def stale(row, keep):
    """The row with its trace cut to ``keep`` steps: it no longer fails."""
    return dict(row, steps=row["steps"][:keep], step_count=keep, counterexample_id="d" * 64)


@pytest.mark.parametrize("kind, variants, bugs, expected", [
    ("property", ["NO_ELR"], [], True),
    ("property", [], [], False),
    ("property", [], ["PRODUCE_IGNORES_MIN_ISR"], False),   # the model alone failed: a real bug
    ("divergence", [], ["PRODUCE_IGNORES_MIN_ISR"], True),
    ("divergence", [], [], False),
    ("harness_error", ["NO_ELR"], ["PRODUCE_IGNORES_MIN_ISR"], False),
])
def test_which_counterexamples_are_expected_to_still_fail(kind, variants, bugs, expected):
    (row,) = rows_for(HWM_TRACE, HWM_CONFIG)
    config = json.loads(row["config_json"])
    config["variants"] = variants
    row.update(kind=kind, variants=variants, sut_bugs=bugs, config_json=json.dumps(config))
    assert decode_counterexample(row).expected_to_fail is expected


def test_regression_verdicts():
    (variant_row,) = rows_for(HWM_TRACE, HWM_CONFIG)
    decoded = decode_counterexample(variant_row)
    failing = replay(decoded.actions, Subject.at(decoded.config, variants=decoded.variants))
    assert regression_failure(decoded, variant_row, failing) is None            # still detected

    cut = stale(variant_row, 3)
    d = decode_counterexample(cut)
    msg = regression_failure(d, cut, replay(d.actions, Subject.at(d.config, variants=d.variants)))
    assert "recorded with variant HWM_ADVANCES_BELOW_MIN_ISR: expected LeaderCandidateCompleteness (property) " \
           "to still fail, but the replay of 3 steps found no failure" in msg

    fixed = as_correct_protocol(variant_row)
    d = decode_counterexample(fixed)
    assert not d.expected_to_fail
    assert regression_failure(d, fixed, replay(d.actions, Subject.at(d.config))) is None    # fixed stays fixed
    msg = regression_failure(d, fixed, failing)                                 # … or it is back
    assert "a counterexample of the correct protocol fails again: LeaderCandidateCompleteness after step 4" in msg
    assert variant_row["violation"] in msg

    (bug_row,) = rows_for(PRODUCE_TRACE, PRODUCE_CONFIG, frozenset({Bug.PRODUCE_IGNORES_MIN_ISR}))
    d = decode_counterexample(bug_row)
    assert regression_failure(d, bug_row, replay(d.actions, Subject.at(d.config, bugs=d.bugs))) is None
    msg = regression_failure(d, bug_row, replay(d.actions, Subject.at(d.config)))            # bug "lost"
    assert "recorded with SUT bug PRODUCE_IGNORES_MIN_ISR: expected SutDiffersFromModel (divergence)" in msg


def test_replay_corpus_applies_the_rule(tmp_path):
    root = tmp_path / "corpus"
    (variant_row,) = rows_for(HWM_TRACE, HWM_CONFIG)
    (bug_row,) = rows_for(PRODUCE_TRACE, PRODUCE_CONFIG, frozenset({Bug.PRODUCE_IGNORES_MIN_ISR}))
    write_corpus(root, [variant_row, bug_row, as_correct_protocol(variant_row)], run_id="one")
    write_corpus(root, [stale(variant_row, 3)], run_id="two")
    write_corpus(root, [variant_row], run_id="three")                            # a duplicate id: one test
    proc = run_pytest(tmp_path, "-v", "--replay-corpus", str(root))
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr
    assert "1 failed, 3 passed" in out, out
    assert f"corpus::LeaderCandidateCompleteness[correct-{'c' * 12}] PASSED" in out
    assert f"corpus::LeaderCandidateCompleteness[HWM_ADVANCES_BELOW_MIN_ISR-{'d' * 12}] FAILED" in out
    assert "but the replay of 3 steps found no failure" in out


def test_cli_says_when_a_counterexample_no_longer_fails(tmp_path):
    (variant_row,) = rows_for(HWM_TRACE, HWM_CONFIG)
    write_corpus(tmp_path, [as_correct_protocol(variant_row)])
    result = CliRunner().invoke(main, ["replay", str(tmp_path), "--id", "c" * 10, "--steps"])
    assert result.exit_code == 0, result.output
    assert "not reproduced: LeaderCandidateCompleteness no longer fails on this trace" in result.output
    assert "no failure: all 4 steps replayed, every property holds and the SUT matches the model" in result.output
    assert "  1. Produce(broker=1, value=1)" in result.output
    listing = CliRunner().invoke(main, ["replay", str(tmp_path), "--list"])
    assert listing.exit_code == 0 and "1 counterexample(s), 1 signature(s)" in listing.output
    assert read_counterexamples(tmp_path).rows[0]["counterexample_id"][:16] in listing.output


def test_cli_reduces_a_reproduced_counterexample(tmp_path):
    from model import ListOffsets
    padded = (ListOffsets(), HWM_TRACE[0], ListOffsets(), *HWM_TRACE[1:])
    (row,) = rows_for(padded, HWM_CONFIG)
    write_corpus(tmp_path, [row])
    result = CliRunner().invoke(main, ["replay", str(tmp_path), "--id", row["counterexample_id"][:12],
                                       "--reduce", "10"])
    assert result.exit_code == 1, result.output
    assert "reproduced: LeaderCandidateCompleteness" in result.output
    assert "reduced: 4 of 6 steps fail the same way" in result.output
    reduced = result.output.split("reduced:")[1]
    assert "1. Produce(broker=1, value=1)\n    2. ProposeIsrShrink(leader=1, follower=2)" in reduced
    assert "ListOffsets" not in reduced
    refused = CliRunner().invoke(main, ["replay", str(tmp_path), "--id", row["counterexample_id"][:12],
                                        "--reduce", "-1"])
    assert refused.exit_code == 2 and "--reduce" in refused.output and "-1" in refused.output


def test_cli_reduction_names_the_smaller_configuration(tmp_path):
    import attrs
    # The same counterexample on 4 brokers: broker 4 plays no part.
    (row,) = rows_for(HWM_TRACE, attrs.evolve(HWM_CONFIG, brokers=(1, 2, 3, 4)))
    write_corpus(tmp_path, [row])
    result = CliRunner().invoke(main, ["replay", str(tmp_path), "--id", row["counterexample_id"][:12],
                                       "--reduce", "10"])
    assert result.exit_code == 1, result.output
    assert "reduced: 4 of 4 steps fail the same way in a smaller configuration (without broker 4):" in result.output
    assert "Config(brokers=(1, 2, 3), assignment=(1, 2), min_isr=2" in result.output.split("reduced:")[1]

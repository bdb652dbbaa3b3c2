"""Every analysis on the toy corpus of conftest.py, with exact expected rows
(worked out by hand in the comments)."""

from __future__ import annotations

import datetime as dt

import pytest
from pyspark.testing import assertDataFrameEqual

from corpus_factory import counterexample, make_corpus, run, ts
from spark_reports import (LIFT_COLUMNS, action_lift, kill_matrix, kill_matrix_wide, load_corpus, ngram_motifs,
                           protocol_coverage, shrunk_length_distribution, signature_buckets, summary_table,
                           time_to_failure)


#: One JVM is enough: with ``pytest -n N --dist loadgroup`` these tests share one worker.
pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]


def test_kill_matrix(toy):
    # c3 has two variants and counts for both; c5 has none: target "correct"
    assertDataFrameEqual(kill_matrix(toy), [
        ("LeaderCompleteness", "correct", "correct", 1, 1),
        ("LogMatching", "variant", "NO_ELR", 1, 1),
        ("LogMatching", "variant", "TRUNCATE_TO_HWM", 3, 1),
        ("StrongIsr", "bug", "hwm_off_by_one", 1, 1),
    ])
    wide = kill_matrix_wide(toy)
    assert wide.columns == ["property", "correct", "variant:NO_ELR", "variant:TRUNCATE_TO_HWM", "bug:hwm_off_by_one",
                            "total"]
    assertDataFrameEqual(wide, [
        ("LeaderCompleteness", 1, 0, 0, 0, 1),
        ("LogMatching", 0, 1, 3, 0, 3),
        ("StrongIsr", 0, 0, 0, 1, 1),
    ], checkRowOrder=True)


def test_kill_matrix_keeps_a_variant_and_a_bug_of_the_same_name_apart(spark, tmp_path):
    # The catalogue has UNCLEAN_REGISTRATION_KEEPS_ELR both as a variant and as a SUT bug.
    name = "UNCLEAN_REGISTRATION_KEEPS_ELR"
    corpus = load_corpus(spark, make_corpus(tmp_path, [
        counterexample("v", prop="UncleanExclusion", variants=[name]),
        counterexample("b1", prop="SutDiffersFromModel", bugs=[name]),
        counterexample("b2", signature="other", prop="SutDiffersFromModel", bugs=[name]),
    ], [run("run1")]))
    wide = kill_matrix_wide(corpus)
    assert wide.columns == ["property", f"variant:{name}", f"bug:{name}", "total"]
    assertDataFrameEqual(wide, [("SutDiffersFromModel", 0, 2, 2), ("UncleanExclusion", 1, 0, 1)], checkRowOrder=True)


def test_a_profiles_and_an_implementations_campaign_rows_are_their_own_targets(spark, tmp_path):
    """Rows with no variant and no bug are the correct target's, unless their test
    id names a profile's or an implementation's campaign target: Kafka's profile
    searched with the bundled SUT, and Kafka's own code, are not the correct protocol."""
    profile, kafka = "campaign[profile:kafka-4.4.0]", "campaign[implementation:kafka]"
    corpus = load_corpus(spark, make_corpus(tmp_path, [
        dict(counterexample("p", prop="SutDiffersFromModel"), test_id=profile),
        dict(counterexample("k1", prop="SutDiffersFromModel"), test_id=kafka),
        dict(counterexample("k2", signature="other", prop="SutDiffersFromModel"), test_id=kafka),
        counterexample("c", prop="LogMatching"),
        dict(counterexample("v", prop="LogMatching", variants=["NO_ELR"]), test_id="campaign[variant:NO_ELR]"),
    ], [dict(run("r1"), test_id=profile), dict(run("r2", failed=True), test_id=kafka), run("r3")]))
    wide = kill_matrix_wide(corpus)
    assert wide.columns == ["property", "correct", "profile:kafka-4.4.0", "implementation:kafka", "variant:NO_ELR",
                            "total"]
    assertDataFrameEqual(wide, [("LogMatching", 1, 0, 0, 1, 2), ("SutDiffersFromModel", 0, 1, 2, 0, 3)],
                         checkRowOrder=True)
    by_target = {(r.target_kind, r.target): (r.runs, r.failures) for r in time_to_failure(corpus).collect()}
    assert by_target == {("correct", "correct"): (1, 1), ("profile", "kafka-4.4.0"): (1, 1),
                         ("implementation", "kafka"): (1, 2), ("variant", "NO_ELR"): (0, 1)}
    assert {r.signature: r.targets for r in signature_buckets(corpus).collect()} == \
        {"sig": ["NO_ELR", "correct", "kafka", "kafka-4.4.0"], "other": ["kafka"]}


def local(minutes: float) -> dt.datetime:
    """``ts(minutes)`` as PySpark returns a timestamp: naive, in the Python process's local time."""
    return dt.datetime.fromtimestamp(ts(minutes).timestamp())


def test_signature_buckets(toy):
    # LM:a: c2 and c3 both have 2 steps; c3 was found first (ts 2 < ts 5) and represents
    assertDataFrameEqual(signature_buckets(toy), [
        ("LM:a", "LogMatching", "property", 3, local(0), local(5), "c3", 2, ["NO_ELR", "TRUNCATE_TO_HWM"]),
        ("LC:c", "LeaderCompleteness", "property", 1, local(10), local(10), "c5", 2, ["correct"]),
        ("SI:b", "StrongIsr", "property", 1, local(3), local(3), "c4", 4, ["hwm_off_by_one"]),
    ], checkRowOrder=True)


def test_shrunk_length_distribution(toy):
    # TRUNCATE_TO_HWM lengths 3, 2, 2: linear interpolation gives p25 2, median 2, p75 2.5
    assertDataFrameEqual(shrunk_length_distribution(toy), [
        ("LeaderCompleteness", "correct", "correct", 1, 2, 2.0, 2.0, 2.0, 2, 2.0),
        ("LogMatching", "variant", "NO_ELR", 1, 2, 2.0, 2.0, 2.0, 2, 2.0),
        ("LogMatching", "variant", "TRUNCATE_TO_HWM", 3, 2, 2.0, 2.0, 2.5, 3, 7 / 3),
        ("StrongIsr", "bug", "hwm_off_by_one", 1, 4, 4.0, 4.0, 4.0, 4, 4.0),
    ])


def test_time_to_failure(toy):
    # NO_ELR never ran (runs 0, kill rate null); c4 recorded no time (null medians)
    assertDataFrameEqual(time_to_failure(toy), [
        ("bug", "hwm_off_by_one", 1, 1, 1.0, 1, 1, None, None, 4),
        ("correct", "correct", 1, 0, 0.0, 1, 1, 5.0, 7.0, 2),
        ("variant", "NO_ELR", 0, 0, None, 1, 1, 30.0, 300.0, 2),
        ("variant", "TRUNCATE_TO_HWM", 2, 1, 0.5, 3, 1, 20.0, 200.0, 2),
    ], checkRowOrder=True)


def test_protocol_coverage(toy):
    # r4 reports "leader elected" 0 times: not a run reaching it; "partition has no leader" is expected but unseen
    got = protocol_coverage(toy, expected_events=("leader elected", "partition has no leader"))
    assertDataFrameEqual(got, [
        ("write acknowledged", 2, 15, 0.5, False),
        ("fetch rejected: FENCED_LEADER_EPOCH", 1, 2, 0.25, False),
        ("leader elected", 1, 3, 0.25, True),
        ("partition has no leader", 0, 0, 0.0, True),
    ], checkRowOrder=True)


def test_ngram_motifs(toy):
    # LM:a: FenceBroker → Produce in all three members; Produce → UncleanShutdown only in c1
    assertDataFrameEqual(ngram_motifs(toy, n=2, min_support=2), [
        ("LM:a", "LogMatching", "FenceBroker → Produce", 3, 3, 1.0),
    ])
    # an n-gram repeated inside one member (c4: SendFetch → ReceiveFetchRequest twice) counts once
    assertDataFrameEqual(ngram_motifs(toy, n=2, min_support=1).where("signature = 'SI:b'"), [
        ("SI:b", "StrongIsr", "ReceiveFetchRequest → SendFetch", 1, 1, 1.0),
        ("SI:b", "StrongIsr", "SendFetch → ReceiveFetchRequest", 1, 1, 1.0),
    ])
    assertDataFrameEqual(ngram_motifs(toy, n=2, min_support=1, key_args=True, top_k=2).where("signature = 'LM:a'"), [
        ("LM:a", "LogMatching", "FenceBroker(broker=1) → Produce(broker=2)", 2, 3, 2 / 3),
        ("LM:a", "LogMatching", "FenceBroker(broker=1) → Produce(broker=1)", 1, 3, 1 / 3),
    ])
    assert ngram_motifs(toy, n=5, min_support=1).count() == 0
    assert ngram_motifs(toy, n=2, min_support=1, min_share=0.5).where("signature = 'LM:a'").count() == 1
    with pytest.raises(ValueError):
        ngram_motifs(toy, n=0)


# Failing steps per target: TRUNCATE_TO_HWM (c1, c2, c3): FenceBroker 3, Produce 3 (broker 2 twice, broker 1
# once), UncleanShutdown 1 = 7; NO_ELR (c3): FenceBroker 1, Produce 1 = 2; hwm_off_by_one (c4): SendFetch 2,
# ReceiveFetchRequest 2 = 4; correct (c5): UncleanRecovery 1, Consume 1 = 2.
# Baselines (runs): TRUNCATE_TO_HWM r1 + r2: FenceBroker 10, Produce 160, UncleanShutdown 10, SendFetch 20 = 200
# (lifecycle 20, client 160, fetch 20); hwm_off_by_one r3: SendFetch 30, ReceiveFetchRequest 30,
# ReceiveFetchResponse 30, Produce 10 = 100 (fetch 90, client 10); correct r4: Produce 50; NO_ELR: no runs.
FAMILY_ROWS = [
    # target_kind, target, family, F, Ftot, B, Btot, fail_share, base_share, lift, Failure, Context, Increase
    ("variant", "TRUNCATE_TO_HWM", "lifecycle", 4, 7, 20, 200, 4 / 7, 0.1, 40 / 7, 0.2, 0.035, 0.165),
    ("variant", "TRUNCATE_TO_HWM", "client", 3, 7, 160, 200, 3 / 7, 0.8, 15 / 28, 3 / 160, 0.035, 3 / 160 - 0.035),
    ("variant", "TRUNCATE_TO_HWM", "fetch", 0, 7, 20, 200, 0.0, 0.1, 0.0, 0.0, 0.035, -0.035),
    ("variant", "NO_ELR", "lifecycle", 1, 2, 0, 0, 0.5, None, None, None, None, None),
    ("variant", "NO_ELR", "client", 1, 2, 0, 0, 0.5, None, None, None, None, None),
    ("bug", "hwm_off_by_one", "fetch", 4, 4, 90, 100, 1.0, 0.9, 1 / 0.9, 4 / 90, 0.04, 4 / 90 - 0.04),
    ("bug", "hwm_off_by_one", "client", 0, 4, 10, 100, 0.0, 0.1, 0.0, 0.0, 0.04, -0.04),
    ("correct", "correct", "recovery", 1, 2, 0, 50, 0.5, 0.0, None, None, 0.04, None),
    ("correct", "correct", "client", 1, 2, 50, 50, 0.5, 1.0, 0.5, 0.02, 0.04, -0.02),
]
ACTION_ROWS = [
    # Context is the family's Failure: lifecycle 4/20, client 3/160, fetch 0/20 for TRUNCATE_TO_HWM
    ("variant", "TRUNCATE_TO_HWM", "lifecycle", "FenceBroker", 3, 7, 10, 200, 3 / 7, 0.05, 60 / 7, 0.3, 0.2, 0.1),
    ("variant", "TRUNCATE_TO_HWM", "client", "Produce", 3, 7, 160, 200, 3 / 7, 0.8, 15 / 28, 3 / 160, 3 / 160, 0.0),
    ("variant", "TRUNCATE_TO_HWM", "lifecycle", "UncleanShutdown", 1, 7, 10, 200, 1 / 7, 0.05, 20 / 7, 0.1, 0.2,
     -0.1),
    ("variant", "TRUNCATE_TO_HWM", "fetch", "SendFetch", 0, 7, 20, 200, 0.0, 0.1, 0.0, 0.0, 0.0, 0.0),
    ("variant", "NO_ELR", "lifecycle", "FenceBroker", 1, 2, 0, 0, 0.5, None, None, None, None, None),
    ("variant", "NO_ELR", "client", "Produce", 1, 2, 0, 0, 0.5, None, None, None, None, None),
    ("bug", "hwm_off_by_one", "fetch", "SendFetch", 2, 4, 30, 100, 0.5, 0.3, 5 / 3, 2 / 30, 4 / 90, 2 / 30 - 4 / 90),
    ("bug", "hwm_off_by_one", "fetch", "ReceiveFetchRequest", 2, 4, 30, 100, 0.5, 0.3, 5 / 3, 2 / 30, 4 / 90,
     2 / 30 - 4 / 90),
    ("bug", "hwm_off_by_one", "fetch", "ReceiveFetchResponse", 0, 4, 30, 100, 0.0, 0.3, 0.0, 0.0, 4 / 90, -4 / 90),
    ("bug", "hwm_off_by_one", "client", "Produce", 0, 4, 10, 100, 0.0, 0.1, 0.0, 0.0, 0.0, 0.0),
    ("correct", "correct", "recovery", "UncleanRecovery", 1, 2, 0, 50, 0.5, 0.0, None, None, None, None),
    ("correct", "correct", "client", "Consume", 1, 2, 0, 50, 0.5, 0.0, None, None, 0.02, None),
    ("correct", "correct", "client", "Produce", 0, 2, 50, 50, 0.0, 1.0, 0.0, 0.0, 0.02, -0.02),
]
# Key arguments against all targets' failing steps (15; c3 counts for both its variants): FenceBroker(broker=1) 4,
# Produce(broker=2) 3, Produce(broker=1) 1, UncleanShutdown(...) 1, SendFetch(follower=2) 2,
# ReceiveFetchRequest 2, UncleanRecovery 1, Consume 1. Context: the action's share, e.g. TRUNCATE_TO_HWM has 3 of
# the 4 failing Produce steps.
KEY_ROWS = [
    ("variant", "TRUNCATE_TO_HWM", "lifecycle", "FenceBroker(broker=1)", 3, 7, 4, 15, 3 / 7, 4 / 15, 45 / 28, 0.75,
     0.75, 0.0),
    ("variant", "TRUNCATE_TO_HWM", "client", "Produce(broker=2)", 2, 7, 3, 15, 2 / 7, 0.2, 10 / 7, 2 / 3, 0.75,
     2 / 3 - 0.75),
    ("variant", "TRUNCATE_TO_HWM", "client", "Produce(broker=1)", 1, 7, 1, 15, 1 / 7, 1 / 15, 15 / 7, 1.0, 0.75, 0.25),
    ("variant", "TRUNCATE_TO_HWM", "lifecycle", "UncleanShutdown(broker=2,lossy=true)", 1, 7, 1, 15, 1 / 7, 1 / 15,
     15 / 7, 1.0, 1.0, 0.0),
    ("variant", "NO_ELR", "lifecycle", "FenceBroker(broker=1)", 1, 2, 4, 15, 0.5, 4 / 15, 1.875, 0.25, 0.25, 0.0),
    ("variant", "NO_ELR", "client", "Produce(broker=2)", 1, 2, 3, 15, 0.5, 0.2, 2.5, 1 / 3, 0.25, 1 / 3 - 0.25),
    ("bug", "hwm_off_by_one", "fetch", "SendFetch(follower=2)", 2, 4, 2, 15, 0.5, 2 / 15, 3.75, 1.0, 1.0, 0.0),
    ("bug", "hwm_off_by_one", "fetch", "ReceiveFetchRequest", 2, 4, 2, 15, 0.5, 2 / 15, 3.75, 1.0, 1.0, 0.0),
    ("correct", "correct", "recovery", "UncleanRecovery", 1, 2, 1, 15, 0.5, 1 / 15, 7.5, 1.0, 1.0, 0.0),
    ("correct", "correct", "client", "Consume", 1, 2, 1, 15, 0.5, 1 / 15, 7.5, 1.0, 1.0, 0.0),
]


def test_action_lift(toy):
    got = action_lift(toy)
    assert tuple(got.columns) == LIFT_COLUMNS
    expected = [("family", tk, t, fam, fam, *rest, "runs") for tk, t, fam, *rest in FAMILY_ROWS]
    expected += [("action", *r, "runs") for r in ACTION_ROWS]
    expected += [("key_arg", *r, "all_counterexamples") for r in KEY_ROWS]
    # expected as a DataFrame of the same schema: float tolerances apply field by field
    assertDataFrameEqual(got, got.sparkSession.createDataFrame(expected, got.schema), rtol=1e-9, atol=1e-12)


def test_action_lift_single_level_and_bad_level(toy):
    assert {r.level for r in action_lift(toy, ["family"]).collect()} == {"family"}
    with pytest.raises(ValueError, match="levels"):
        action_lift(toy, ["nope"])


def test_summary_table(toy):
    text = summary_table(toy)
    assert "5 counterexamples in 3 signatures over 3 properties and 4 targets; 4 runs (2 failed)" in text
    lines = text.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("signature"))
    assert lines[header + 2].split()[:4] == ["LM:a", "LogMatching", "3", "2"]


def test_analyses_on_runs_only_corpus(spark, tmp_path):
    from corpus_factory import make_corpus, run
    from spark_reports import load_corpus
    make_corpus(tmp_path, runs=[run("r1", variants=["NO_ELR"], actions={"Produce": 4})])
    c = load_corpus(spark, tmp_path)
    assert kill_matrix(c).count() == 0 and signature_buckets(c).count() == 0 and ngram_motifs(c).count() == 0
    assertDataFrameEqual(time_to_failure(c), [("variant", "NO_ELR", 1, 0, 0.0, 0, 0, None, None, None)])
    assertDataFrameEqual(action_lift(c, ["action"]),
                         [("action", "variant", "NO_ELR", "client", "Produce", 0, 0, 4, 4, None, 1.0, None, 0.0, 0.0,
                           0.0, "runs")])
    assert "0 counterexamples" in summary_table(c)

"""One local SparkSession (local[2]) for the whole spark_reports test session,
and the hand-made corpora the analyses are checked on."""

from __future__ import annotations

import pytest

from corpus_factory import counterexample, make_corpus, run, steps, ts


@pytest.fixture(scope="session")
def spark():
    pytest.importorskip("pyspark")
    from spark_reports import session
    s = session("local[2]", spark_sql_adaptive_enabled=False, spark_sql_codegen_wholeStage=False, spark_sql_shuffle_partitions=1, spark_driver_memory="1g")
    yield s
    s.stop()


def toy_rows():
    """Five counterexamples over three signatures and four targets (one
    counterexample has two variants, one has none), and four runs."""
    ces = [
        counterexample("c1", "LM:a", "LogMatching", variants=["TRUNCATE_TO_HWM"], found_at=ts(0), ttf=10.0, etf=100,
                       trace=steps(("FenceBroker", {"broker": 1}), ("Produce", {"broker": 2, "value": 1}),
                                   ("UncleanShutdown", {"broker": 2, "lossy": True}))),
        counterexample("c2", "LM:a", "LogMatching", variants=["TRUNCATE_TO_HWM"], found_at=ts(5), ttf=20.0, etf=200,
                       trace=steps(("FenceBroker", {"broker": 1}), ("Produce", {"broker": 1, "value": 2}))),
        counterexample("c3", "LM:a", "LogMatching", variants=["TRUNCATE_TO_HWM", "NO_ELR"], found_at=ts(2),
                       ttf=30.0, etf=300,
                       trace=steps(("FenceBroker", {"broker": 1}), ("Produce", {"broker": 2, "value": 3}))),
        counterexample("c4", "SI:b", "StrongIsr", bugs=["hwm_off_by_one"], found_at=ts(3), ttf=None, etf=None,
                       trace=steps(("SendFetch", {"follower": 2}), ("ReceiveFetchRequest", {"msg": 1}),
                                   ("SendFetch", {"follower": 2}), ("ReceiveFetchRequest", {"msg": 3}))),
        counterexample("c5", "LC:c", "LeaderCompleteness", found_at=ts(10), ttf=5.0, etf=7,
                       trace=steps("UncleanRecovery", "Consume")),
    ]
    runs = [
        run("r1", variants=["TRUNCATE_TO_HWM"], failed=True,
            actions={"FenceBroker": 10, "Produce": 60, "UncleanShutdown": 10, "SendFetch": 20},
            events={"leader elected": 3, "write acknowledged": 5}),
        run("r2", variants=["TRUNCATE_TO_HWM"], actions={"Produce": 100}, events={"write acknowledged": 10}),
        run("r3", bugs=["hwm_off_by_one"], failed=True,
            actions={"SendFetch": 30, "ReceiveFetchRequest": 30, "ReceiveFetchResponse": 30, "Produce": 10},
            events={"fetch rejected: FENCED_LEADER_EPOCH": 2}),
        run("r4", actions={"Produce": 50}, events={"leader elected": 0}),
    ]
    return ces, runs


@pytest.fixture(scope="session")
def toy_dir(tmp_path_factory):
    ces, runs = toy_rows()
    return make_corpus(tmp_path_factory.mktemp("toy"), ces, runs)


@pytest.fixture(scope="session")
def toy(spark, toy_dir):
    from spark_reports import load_corpus
    return load_corpus(spark, toy_dir)

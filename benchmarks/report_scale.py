"""How spark_reports scales: synthetic corpora of 10k, 100k (and, with
``--sizes``, 1M) counterexamples, each analysis and the whole HTML report timed
on ``local[2]``.

    python benchmarks/report_scale.py                      # 10k,100k
    python benchmarks/report_scale.py --sizes 10k,100k,1M

Corpora are schema-valid (``store.schema``) and generated vectorized with
numpy/pyarrow in a child process (so the driver's peak RSS below is the
report's, not the generator's), then cached under ``--work`` (``--regen`` to
rebuild). Distributions: 20 signatures over 14 properties with Zipf-like
popularity, each tied to 1–3 targets (16 protocol variants, 6 SUT bugs, a rare
"correct"); step_count 5–60 (log-normal per signature); actions drawn from a
per-signature mix with a signature motif planted in 70 % of members; args_json
realistic per action; a pool of final states and configs; ~1 run per 40
counterexamples plus passing runs, with action/rule/event count maps.

Printed per size: generation time, each analysis's wall time (collecting its
result, as the report does) and rows/s (counterexamples per second), the whole
report, the driver (Python) peak RSS from ``resource.getrusage`` and the JVM's
peak heap (sum of heap pools' peak usage via JMX) and peak RSS (VmHWM of the
JVM process; both reset between sizes) — JVM memory is separate from the
Python driver's.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import model  # noqa: E402  (the action registry)

VARIANTS = ["TRUNCATE_TO_HWM", "NO_LAST_FETCHED_EPOCH", "NO_FETCH_LEADER_EPOCH_FENCING", "NO_MAXIMAL_ISR",
            "ISR_JOIN_WITHOUT_LESO", "ISR_JOIN_WITHOUT_CURRENT_EPOCH_FETCH", "ALTER_PARTITION_WITHOUT_BROKER_EPOCH",
            "NO_ELR", "UNCLEAN_REGISTRATION_KEEPS_ELR", "ELR_KEPT_WHEN_ISR_REACHES_MIN_ISR",
            "HWM_ADVANCES_BELOW_MIN_ISR", "BALANCED_RECOVERY_ANY_MEMBER", "LIST_OFFSETS_BEFORE_LESO",
            "NO_FETCH_RESPONSE_VALIDATION", "NO_FOLLOWER_STATE_RESET_ON_NEW_EPOCH",
            "REASSIGNMENT_COMPLETES_BELOW_MIN_ISR"]
BUGS = ["hwm_off_by_one", "leso_not_reset", "isr_shrink_skips_epoch", "fetch_offset_max_not_min",
        "elr_not_cleared", "truncate_one_past"]
PROPERTIES = ["LeaderCompleteness", "LogMatching", "LeaderCandidateCompleteness", "ReplicationQuorumSuperset",
              "UncleanExclusion", "AppliedHwmMonotonicity", "MinIsrRecoveryQuorum", "MetadataLogMatching",
              "ConsistentRead", "NoCommittedRecordLostGlobally", "AckedWritesLinearizable", "StrongIsr",
              "SutDiffersFromModel", "HarnessError"]
#: action -> (family, weight): the action registry's families and random-walk weights.
ACTIONS = {k.name: (k.family, k.weight) for k in model.ACTIONS}
EVENTS = ["follower truncated on a diverging epoch", "partition has no leader", "ELR became non-empty",
          "LastKnownELR became non-empty", "leader elected", "reassignment started", "reassignment completed",
          "unclean election: balanced", "True HWM advanced", "write acknowledged", "write negatively acknowledged",
          "lossy unclean shutdown", "non-lossy unclean shutdown", "AlterPartition accepted",
          "AlterPartition rejected: FENCED_LEADER_EPOCH", "fetch response with a diverging epoch",
          "fetch rejected: NOT_LEADER_OR_FOLLOWER"]
N_SIGNATURES = 20


def parse_size(text: str) -> int:
    t = text.strip().lower()
    mult = {"k": 1_000, "m": 1_000_000}.get(t[-1:], 1)
    return int(float(t[:-1] if t[-1:] in "km" else t) * mult)


def _args_vocab(action: str) -> list[str]:
    b = range(1, 6)
    if action in ("StartBroker", "UnfenceBroker", "FenceBroker", "ControlledShutdown", "Flush"):
        return [json.dumps({"broker": x}) for x in b]
    if action == "UncleanShutdown":
        return [json.dumps({"broker": x, "lossy": lossy}) for x in b for lossy in (False, True)]
    if action == "ReplicateMetadata":
        return [json.dumps({"broker": x, "count": c}) for x in b for c in range(1, 6)]
    if action == "SendFetch":
        return [json.dumps({"follower": x}) for x in b]
    if action in ("ReceiveFetchRequest", "ReceiveFetchResponse", "ReceiveAlterPartition",
                  "ReceiveAlterPartitionResponse", "DropMessage"):
        return [json.dumps({"msg": m}) for m in range(1, 81)]
    if action in ("ProposeIsrShrink", "ProposeIsrExpand"):
        return [json.dumps({"leader": x, "follower": y}) for x in b for y in b if x != y]
    if action == "Reassign":
        return [json.dumps({"target": t}) for t in ([1, 2, 3], [1, 2, 4], [2, 3, 4], [1, 2], [3, 4, 5])]
    if action == "Produce":
        return [json.dumps({"broker": x, "value": v}) for x in b for v in range(1, 61)]
    return ["{}"]


def _state_pool(rng, k: int = 64) -> list[str]:
    """Final states shaped like the model's ClusterState as the harness serializes it."""
    out = []
    for _ in range(k):
        n = int(rng.integers(3, 6))
        brokers = list(range(1, n + 1))
        rf = int(rng.integers(2, min(n, 4) + 1))
        epochs = int(rng.integers(1, 6))
        committed = [{"epoch": int(rng.integers(1, epochs + 1)), "value": v} for v in range(1, int(rng.integers(0, 12)))]
        committed.sort(key=lambda r: r["epoch"])
        bs = []
        for b in brokers:
            if b > rf:
                bs.append({"id": b, "status": "RUNNING", "broker_epoch": b, "replica": None})
                continue
            log = committed[: int(rng.integers(0, len(committed) + 1))]
            if rng.random() < 0.3:
                log = log + [{"epoch": epochs, "value": 100 + b}]
            bs.append({"id": b, "status": str(rng.choice(["RUNNING", "OFFLINE_DIRTY", "STARTING"])),
                       "broker_epoch": b, "replica": {
                           "log": log, "flushed": len(log), "hwm": int(rng.integers(0, len(log) + 1)),
                           "role": "LEADER" if b == 1 else "FOLLOWER", "leader": 1, "leader_epoch": epochs,
                           "partition_epoch": epochs + 1, "leso": None, "isr": [], "followers": []}})
        state = {"controller": {"registrations": [{"broker": b, "broker_epoch": b, "fenced": False} for b in brokers],
                                "partition": {"replicas": list(range(1, rf + 1)), "isr": [1], "leader": 1,
                                              "leader_epoch": epochs, "partition_epoch": epochs + 1, "elr": [],
                                              "last_known_elr": []}},
                 "brokers": bs, "network": {"messages": [], "next_id": 40},
                 "history": {"committed": committed, "acked": [{"value": r["value"], "offset": i}
                                                              for i, r in enumerate(committed)], "nacked": []}}
        out.append(json.dumps(state))
    return out


def generate(path: Path, n: int, seed: int = 7, files: int = 0) -> None:
    """Write a corpus of ``n`` counterexamples (and its runs) under ``path``."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from store.schema import COUNTEREXAMPLE_SCHEMA, RUN_SCHEMA, SCHEMA_VERSION, STEP

    rng = np.random.default_rng(seed)
    names = list(ACTIONS)
    fam_of = [ACTIONS[a][0] for a in names]
    base_w = np.array([ACTIONS[a][1] for a in names])
    vocab: list[str] = []
    vocab_off, vocab_len = [], []
    for a in names:
        v = _args_vocab(a)
        vocab_off.append(len(vocab))
        vocab_len.append(len(v))
        vocab.extend(v)
    vocab_arr, vocab_off, vocab_len = pa.array(vocab), np.array(vocab_off), np.array(vocab_len)
    names_arr, fam_arr = pa.array(names), pa.array(fam_of)

    # signatures: property, targets, length profile, action mix, motif
    sig_prop = [PROPERTIES[i % len(PROPERTIES)] for i in range(N_SIGNATURES)]
    sig_names = [f"{p}:{k:02d}:{'%08x' % rng.integers(0, 2**32)}" for k, p in enumerate(sig_prop)]
    all_targets = VARIANTS + BUGS
    sig_targets = []
    for k in range(N_SIGNATURES):
        if k == N_SIGNATURES - 1:
            sig_targets.append([([], [])])
            continue
        opts = []
        for _ in range(int(rng.integers(1, 4))):
            t = all_targets[int(rng.integers(0, len(all_targets)))]
            opts.append(([t], []) if t in VARIANTS else ([], [t]))
        sig_targets.append(opts)
    popularity = 1.0 / np.arange(1, N_SIGNATURES + 1) ** 0.9
    popularity /= popularity.sum()
    sig_mu = rng.uniform(np.log(8), np.log(40), N_SIGNATURES)
    sig_mix = [rng.dirichlet(base_w * 2.0) for _ in range(N_SIGNATURES)]
    sig_motif = [rng.choice(len(names), 3, p=base_w / base_w.sum()) for _ in range(N_SIGNATURES)]
    states = pa.array(_state_pool(rng))
    configs = pa.array([json.dumps({"brokers": list(range(1, b + 1)), "assignment": list(range(1, rf + 1)),
                                    "min_isr": m, "unclean_recovery": u, "unclean_leader_election": False,
                                    "variants": []})
                        for b in (3, 4, 5) for rf in (2, 3) for m in (1, 2) for u in ("none", "balanced")])
    violations = [f"{p}: replica {{}} lacks committed offset {{}} (signature {k})" for k, p in enumerate(sig_prop)]

    files = files or max(2, min(8, n // 100_000 + 2))
    dates = ["2026-01-0%d" % d for d in range(1, 6)]
    t0 = np.datetime64("2026-01-01T00:00:00", "us").astype(np.int64)
    chunk = -(-n // files)
    run_ids = [f"run-{i:05d}" for i in range(max(1, n // 40))]
    for fi in range(files):
        m = min(chunk, n - fi * chunk)
        if m <= 0:
            break
        sig = rng.choice(N_SIGNATURES, m, p=popularity)
        lengths = np.clip(np.rint(rng.lognormal(sig_mu[sig], 0.35)), 5, 60).astype(np.int32)
        offsets = np.zeros(m + 1, dtype=np.int32)
        np.cumsum(lengths, out=offsets[1:])
        total = int(offsets[-1])
        row_of_step = np.repeat(np.arange(m), lengths)
        sig_of_step = sig[row_of_step]
        act = np.empty(total, dtype=np.int32)
        for s in range(N_SIGNATURES):
            mask = sig_of_step == s
            act[mask] = rng.choice(len(names), int(mask.sum()), p=sig_mix[s])
        plant = rng.random(m) < 0.7
        pos = (rng.random(m) * (lengths - 2)).astype(np.int32)
        motifs = np.array(sig_motif)[sig]
        for k in range(3):
            act[(offsets[:-1] + pos + k)[plant]] = motifs[plant, k]
        idx = (np.arange(total, dtype=np.int32) - np.repeat(offsets[:-1], lengths)).astype(np.int32)
        arg_pick = vocab_off[act] + (rng.random(total) * vocab_len[act]).astype(np.int64)
        steps_struct = pa.StructArray.from_arrays(
            [pa.array(idx), fam_arr.take(pa.array(act)), names_arr.take(pa.array(act)),
             vocab_arr.take(pa.array(arg_pick))], fields=list(STEP))
        steps = pa.ListArray.from_arrays(pa.array(offsets), steps_struct)
        choice = np.array([int(rng.integers(0, len(sig_targets[s]))) for s in range(N_SIGNATURES)])
        tgt_pick = (rng.random(m) * np.array([len(sig_targets[s]) for s in sig])).astype(int)
        variants = [sig_targets[s][t][0] for s, t in zip(sig, tgt_pick)]
        bugs = [sig_targets[s][t][1] for s, t in zip(sig, tgt_pick)]
        del choice
        ids = [f"{x:016x}" for x in rng.integers(0, 2**63, m)]
        found = t0 + np.sort(rng.integers(0, 30 * 86400 * 10**6, m))
        ttf = rng.lognormal(np.log(20) + 0.15 * sig, 1.0)
        etf = rng.geometric(1 / (5 + 3 * sig)).astype(np.int64)
        cfg_pick = rng.integers(0, len(configs), m)
        brokers = np.array([3, 4, 5])[cfg_pick // 8]
        rf = np.array([2, 3])[(cfg_pick // 4) % 2]
        min_isr = np.array([1, 2])[(cfg_pick // 2) % 2]
        table = pa.Table.from_arrays([
            pa.array(np.full(m, SCHEMA_VERSION, dtype=np.int32)), pa.array(ids),
            pa.array(sig_names, pa.string()).take(pa.array(sig)), pa.array(sig_prop).take(pa.array(sig)),
            pa.array(["divergence" if sig_prop[s] == "SutDiffersFromModel" else
                      "harness_error" if sig_prop[s] == "HarnessError" else "property" for s in range(N_SIGNATURES)])
            .take(pa.array(sig)),
            pa.array(violations).take(pa.array(sig)),
            pa.array(variants, pa.list_(pa.string())), pa.array(bugs, pa.list_(pa.string())),
            pa.array(brokers.astype(np.int32)), pa.array(rf.astype(np.int32)), pa.array(min_isr.astype(np.int32)),
            pa.array(["none", "balanced"]).take(pa.array(cfg_pick % 2)), pa.array(np.zeros(m, dtype=bool)),
            configs.take(pa.array(cfg_pick)), steps, pa.array(lengths),
            states.take(pa.array(rng.integers(0, len(states), m))),
            pa.array(np.full(m, None, dtype=object), pa.string()), pa.array(["6.100.0"] * m),
            pa.array(["0.1.0"] * m), pa.array(run_ids, pa.string()).take(pa.array(rng.integers(0, len(run_ids), m))),
            pa.array(["gw%d" % w for w in range(4)]).take(pa.array(rng.integers(0, 4, m))),
            pa.array(["tests/check/test_machine.py::TestVariants"] * m),
            pa.array(found, pa.timestamp("us", tz="UTC")), pa.array(ttf), pa.array(etf),
        ], schema=pa.schema(list(COUNTEREXAMPLE_SCHEMA)[:26]))
        for f in list(COUNTEREXAMPLE_SCHEMA)[26:]:   # the newer columns (all nullable): null, as in older rows
            table = table.append_column(f, pa.nulls(m, f.type))
        d = path / "counterexamples" / f"run_date={dates[fi % len(dates)]}"
        d.mkdir(parents=True, exist_ok=True)
        pq.write_table(table, d / f"part-bench-gw{fi}-0.parquet", row_group_size=64 * 1024)

    # runs: one per 40 counterexamples of each target, plus passing "correct" runs
    r = len(run_ids) + max(1, n // 400)
    tgt = rng.integers(0, len(all_targets) + 1, r)
    failed = rng.random(r) < 0.6
    examples = rng.integers(50, 2000, r)
    steps_per = examples * rng.integers(20, 60, r)
    w = base_w / base_w.sum()
    counts = np.rint(steps_per[:, None] * rng.dirichlet(w * 50, r)).astype(np.int64)
    fam_names = sorted(set(fam_of))
    fam_counts = np.stack([counts[:, [i for i, f in enumerate(fam_of) if f == fam]].sum(1) for fam in fam_names], 1)
    ev_counts = rng.poisson(np.linspace(0.1, 40, len(EVENTS)), (r, len(EVENTS))).astype(np.int64)

    def map_array(keys: list[str], values) -> pa.MapArray:
        rows, k = values.shape
        offs = pa.array(np.arange(0, rows * k + 1, k, dtype=np.int32))
        return pa.MapArray.from_arrays(offs, pa.array(keys * rows), pa.array(values.reshape(-1)))

    runs = pa.Table.from_arrays([
        pa.array(np.full(r, SCHEMA_VERSION, dtype=np.int32)), pa.array([f"run-{i:05d}" for i in range(r)]),
        pa.array(["tests/check/test_machine.py::TestVariants"] * r),
        pa.array(["gw%d" % w for w in range(4)]).take(pa.array(rng.integers(0, 4, r))), pa.array(["dev"] * r),
        pa.array([[all_targets[t]] if t < len(VARIANTS) else [] for t in tgt], pa.list_(pa.string())),
        pa.array([[all_targets[t]] if len(VARIANTS) <= t < len(all_targets) else [] for t in tgt],
                 pa.list_(pa.string())),
        pa.array(t0 + np.sort(rng.integers(0, 30 * 86400 * 10**6, r)), pa.timestamp("us", tz="UTC")),
        pa.array(rng.uniform(5, 600, r)), pa.array(examples.astype(np.int64)), pa.array(counts.sum(1)),
        pa.array(failed & (tgt < len(all_targets))),
        map_array(fam_names, fam_counts), map_array(names, counts), map_array(EVENTS, ev_counts),
    ], schema=RUN_SCHEMA)
    d = path / "runs" / "run_date=2026-01-01"
    d.mkdir(parents=True, exist_ok=True)
    pq.write_table(runs, d / "part-bench-0.parquet")


def _jvm_memory(spark, reset: bool = False) -> tuple[float, float]:
    """(peak heap MiB summed over heap pools, peak RSS MiB of the JVM process)."""
    jvm = spark._jvm
    heap = 0.0
    for pool in jvm.java.lang.management.ManagementFactory.getMemoryPoolMXBeans():
        if str(pool.getType().toString()) == "Heap memory":
            heap += pool.getPeakUsage().getUsed()
            if reset:
                pool.resetPeakUsage()
    rss = float("nan")
    try:
        pid = int(jvm.java.lang.ProcessHandle.current().pid())
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                rss = int(line.split()[1]) / 1024
        if reset:
            Path(f"/proc/{pid}/clear_refs").write_text("5")
    except Exception:
        pass
    return heap / 2**20, rss


def _fmt(x: float) -> str:
    return f"{x:,.0f}"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sizes", default="10k,100k", help="comma-separated sizes, e.g. 10k,100k,1M")
    p.add_argument("--master", default="local[2]")
    p.add_argument("--driver-memory", default="6g")
    p.add_argument("--work", default="/tmp/replicheck-report-scale", help="where corpora and reports go")
    p.add_argument("--regen", action="store_true", help="regenerate cached corpora")
    p.add_argument("--no-report", action="store_true", help="time the analyses only")
    p.add_argument("--generate", nargs=2, metavar=("N", "DIR"), help=argparse.SUPPRESS)
    import results  # benchmarks/results.py: --write into docs/results.md
    results.add_write_option(p, "report_scale")
    args = p.parse_args(argv)
    if args.generate:
        generate(Path(args.generate[1]), int(args.generate[0]))
        return 0

    sizes = [parse_size(s) for s in args.sizes.split(",") if s.strip()]
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    gen_times = {}
    for n in sizes:
        path = work / f"corpus-{n}"
        if args.regen or not (path / ".complete").exists():
            shutil.rmtree(path, ignore_errors=True)
            t = time.perf_counter()
            subprocess.run([sys.executable, __file__, "--generate", str(n), str(path)], check=True)
            gen_times[n] = time.perf_counter() - t
            (path / ".complete").write_text("ok")
    gen_rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024

    import spark_reports as S
    from spark_reports.report import build_report

    t = time.perf_counter()
    spark = S.session(args.master, spark_driver_memory=args.driver_memory)
    startup = time.perf_counter() - t
    print(f"Spark {spark.version} on {args.master}, driver memory {args.driver_memory}; session start {startup:.1f}s; "
          f"{os.cpu_count()} cores")
    if gen_times:
        print("generation (child process): " + ", ".join(f"{n:,}: {s:.1f}s" for n, s in gen_times.items())
              + f"; generator peak RSS {gen_rss:,.0f} MiB")
    analyses = [
        ("load_corpus", lambda c: None),
        ("kill_matrix", lambda c: S.kill_matrix(c).collect()),
        ("signature_buckets", lambda c: S.signature_buckets(c).collect()),
        ("action_lift", lambda c: S.action_lift(c).collect()),
        ("shrunk_length_distribution", lambda c: S.shrunk_length_distribution(c).collect()),
        ("time_to_failure", lambda c: S.time_to_failure(c).collect()),
        ("protocol_coverage", lambda c: S.protocol_coverage(c).collect()),
        ("ngram_motifs(n=3)", lambda c: S.ngram_motifs(c, n=3, min_support=2).collect()),
    ]
    results: dict[int, dict[str, float]] = {}
    memory: dict[int, tuple[float, float, float]] = {}
    steps_total: dict[int, int] = {}
    for n in sizes:
        path = work / f"corpus-{n}"
        _jvm_memory(spark, reset=True)
        res: dict[str, float] = {}
        t = time.perf_counter()
        corpus = S.load_corpus(spark, path)
        res["load_corpus"] = time.perf_counter() - t
        steps_total[n] = corpus.counterexamples.selectExpr("sum(step_count)").collect()[0][0]
        for name, fn in analyses[1:]:
            t = time.perf_counter()
            fn(corpus)
            res[name] = time.perf_counter() - t
            print(f"  {n:>9,} {name:<28} {res[name]:7.2f}s", flush=True)
        getattr(corpus, "release", lambda: None)()   # its cached tables (since the corpus is read once and cached)
        if not args.no_report:
            t = time.perf_counter()
            build_report(path, work / f"report-{n}", spark=spark)
            res["whole report"] = time.perf_counter() - t
            print(f"  {n:>9,} {'whole report':<28} {res['whole report']:7.2f}s", flush=True)
        heap, rss = _jvm_memory(spark)
        memory[n] = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, heap, rss)
        results[n] = res

    print()
    header = "| analysis | " + " | ".join(f"{n:,}: s | rows/s" for n in sizes) + " |"
    print(header)
    print("|---|" + "---:|---:|" * len(sizes))
    for name in results[sizes[0]]:
        cells = []
        for n in sizes:
            s = results[n][name]
            cells.append(f"{s:.2f} | {_fmt(n / s) if s > 0 else '-'}")
        print(f"| {name} | " + " | ".join(cells) + " |")
    print()
    print("| size | steps | driver peak RSS MiB (Python) | JVM peak heap MiB | JVM peak RSS MiB |")
    print("|---:|---:|---:|---:|---:|")
    for n in sizes:
        d, h, r = memory[n]
        print(f"| {n:,} | {steps_total[n]:,} | {d:,.0f} | {h:,.0f} | {r:,.0f} |")
    spark.stop()
    return 0


if __name__ == "__main__":
    import results
    raise SystemExit(results.run(main))

"""What the campaign's Spark report costs once Spark is warmed up: the figures
``replicheck_cli.report_job.report_reserve_s`` budgets it from.

    python benchmarks/report_budget.py                   # 2 idle cores
    python benchmarks/report_budget.py --busy 2          # two busy processes beside it

Corpora shaped as campaigns write them (``report_scale.generate``'s rows, in
many small files: a campaign adds about one counterexample file per 1.3 rows
and one run file per run) of ``--sizes`` counterexamples. Per size, a fresh
process starts Spark on ``local[2]`` (``spark_reports.session``), warms it up
on a sample corpus (``spark_reports.warm``) and builds the report
(``build_report``, timed): the JVM's start and the warm-up happen while the
search runs, the report after it. Printed: per size the files, the JVM's
start, the warm-up and the report in seconds of wall clock, then a line
fitted to the report's seconds per file (least squares). ``--busy N`` keeps N
processes spinning (``while True: pass``) for the whole measurement.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

#: A counterexample file per this many counterexample rows; a run per row, a file each (campaigns' corpora).
ROWS_PER_CE_FILE = 1.3
RUNS_PER_CE = 1.1


def campaign_shaped(path: Path, n: int) -> int:
    """Write a corpus of ``n`` counterexamples at ``path`` in campaign-sized
    files; returns how many files it has."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    import report_scale
    ce_files = max(1, round(n / ROWS_PER_CE_FILE))
    report_scale.generate(path, n, files=ce_files)
    runs_dir = path / "runs" / "run_date=2026-01-01"
    source = runs_dir / "part-bench-0.parquet"
    runs = pq.read_table(source)
    source.unlink()
    n_runs = max(1, round(n * RUNS_PER_CE))
    picked = runs.take(pa.array([i % runs.num_rows for i in range(n_runs)]))
    picked = picked.set_column(1, "run_id", pa.array([f"run-{i:05d}" for i in range(n_runs)]))
    for i in range(n_runs):
        pq.write_table(picked.slice(i, 1), runs_dir / f"part-bench-run{i}.parquet")
    return sum(1 for _ in path.glob("*/run_date=*/*.parquet"))


def _measure(corpus: str, out: str) -> None:
    """In a fresh process: Spark started, warmed up, the report built; prints
    one JSON line of seconds."""
    from replicheck_cli.report_job import REPORT_PROCESS_CONF
    from spark_reports import session
    from spark_reports.report import build_report
    from spark_reports.warm import warm_up
    t0 = time.perf_counter()
    spark = session("local[2]", **REPORT_PROCESS_CONF)   # as the campaign's report process starts it
    start = time.perf_counter() - t0
    warm = warm_up(spark)
    t1 = time.perf_counter()
    build_report(corpus, out, spark=spark, targets=["correct"])
    print(json.dumps({"start": start, "warm": warm, "report": time.perf_counter() - t1}), flush=True)
    spark.stop()


def _fit(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """Least squares ``y = a + b x``: (a, b)."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else 0.0
    return my - b * mx, b


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sizes", default="30,150,300,600", help="comma-separated counterexample counts")
    p.add_argument("--busy", type=int, default=0, help="busy processes kept running beside the measurement")
    p.add_argument("--work", default="/tmp/replicheck-report-budget", help="where corpora and reports go")
    p.add_argument("--measure", nargs=2, help=argparse.SUPPRESS)
    import results  # benchmarks/results.py: --write into docs/results.md
    results.add_write_option(p, "report_budget")
    args = p.parse_args(argv)
    if args.measure:
        _measure(*args.measure)
        return 0
    work = Path(args.work)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    files = {}
    for n in sizes:
        path = work / f"corpus-{n}"
        if not (path / ".complete").exists():
            subprocess.run(["rm", "-rf", str(path)], check=True)
            files[n] = campaign_shaped(path, n)
            (path / ".complete").write_text("ok")
        files[n] = sum(1 for _ in path.glob("*/run_date=*/*.parquet"))
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    try:
        measured = {n: json.loads(subprocess.run(
            [sys.executable, __file__, "--measure", str(work / f"corpus-{n}"), str(work / f"report-{n}")],
            check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]) for n in sizes}
    finally:
        for b in busy:
            b.kill()
            b.wait()
    print(f"local[2], {args.busy} busy process(es) beside it; seconds of wall clock")
    print()
    print("| counterexamples | files | JVM start | warm-up | report (warmed up) |")
    print("|---:|---:|---:|---:|---:|")
    for n in sizes:
        m = measured[n]
        print(f"| {n} | {files[n]} | {m['start']:.1f} | {m['warm']:.1f} | {m['report']:.1f} |")
    a, b = _fit([files[n] for n in sizes], [measured[n]["report"] for n in sizes])
    print()
    print(f"fit: report ≈ {a:.1f} s + {b * 1000:.1f} ms per file")
    return 0


if __name__ == "__main__":
    import results
    raise SystemExit(results.run(main))

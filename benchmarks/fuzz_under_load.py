"""The default main job under load: `replicheck fuzz` on several seeds while other
processes keep the cores busy, as on a developer's laptop or a shared CI runner.

Usage: python benchmarks/fuzz_under_load.py [--seeds 1-10] [--busy 2] [--minutes 5] [--write]

For each seed, ``--busy`` processes spinning in a loop (``while True: pass``) are
started, then ``replicheck fuzz --minutes M --seed S`` (the default targets,
workers and report), and the busy processes are stopped when it ends. Per seed:
the flaws found of those catalogued, the ones missed, whether the Spark report was
built, the exit status, the wall time and the load average at the end; then where
the workers' time went, from the corpus's ``runs`` table: worker seconds spent
searching (the runs' ``duration_s``) against the workers' wall time over the
search (the workers times the span from the first run's start to the last run's
end). The rest is what the workers did besides searching: the reduction of
each counterexample found (a unit of its own, ``campaign.scheduler``), writing
rows, the units' start.

Each seed's output is kept in a new temporary folder, named on stderr:
``seed-S.log``, ``seed-S/corpus``, ``seed-S/report``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def seeds_of(text: str) -> list[int]:
    """``1-10`` or ``1,3,7`` as a list of seeds; ValueError naming the option."""
    try:
        if "-" in text:
            first, last = (int(x) for x in text.split("-", 1))
            return list(range(first, last + 1))
        return [int(x) for x in text.split(",")]
    except ValueError:
        raise ValueError(f"--seeds: expected FIRST-LAST or S1,S2,..., got {text!r}") from None


@contextlib.contextmanager
def busy_cores(n: int) -> Iterator[None]:
    """``n`` processes spinning on a core each (``while True: pass``) for the
    block, killed after it: the load this and ``suite_under_load.py`` measure under."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        yield
    finally:
        for p in spinners:
            p.kill()
            p.wait()


def worker_time(corpus: Path, workers: int) -> tuple[float, float]:
    """(worker seconds in runs, worker seconds over the search's span) of a
    campaign's corpus; (0, 0) when it has no runs table."""
    import pyarrow.dataset as ds
    runs_dir = corpus / "runs"
    if not runs_dir.is_dir():
        return 0.0, 0.0
    runs = ds.dataset(runs_dir, format="parquet", partitioning="hive").to_table(
        columns=["started_at", "duration_s"]).to_pylist()
    if not runs:
        return 0.0, 0.0
    start = min(r["started_at"].timestamp() for r in runs)
    end = max(r["started_at"].timestamp() + r["duration_s"] for r in runs)
    return sum(r["duration_s"] for r in runs), workers * (end - start)


def one_seed(seed: int, minutes: float, n_busy: int, keep: Path) -> dict:
    """Run the default campaign of ``seed`` beside ``n_busy`` busy processes."""
    out = keep / f"seed-{seed}"
    log = keep / f"seed-{seed}.log"
    t0 = time.monotonic()
    with busy_cores(n_busy), open(log, "w") as fh:
        status = subprocess.call([sys.executable, "-m", "replicheck_cli.commands", "fuzz", "--minutes", str(minutes),
                                  "--seed", str(seed), "--corpus", str(out / "corpus"), "--report",
                                  str(out / "report"), "--no-live"], cwd=ROOT, stdout=fh, stderr=subprocess.STDOUT)
    wall = time.monotonic() - t0
    text = log.read_text(errors="replace")
    verdicts = re.search(r"^verdicts: (\d+) found, (\d+) not found.*\(of (\d+) targets\)", text, re.M)
    workers = re.search(r"targets on (\d+) workers", text)
    missed = re.findall(r"^((?:variant|bug):\S+)\s+(?:not found|not run|error)\b", text, re.M)
    searched, span = worker_time(out / "corpus", int(workers.group(1)) if workers else 2)
    # the kill matrix's lines of the flaws' targets (the correct targets are not flaws)
    flaws = re.findall(r"^(?:variant|bug):\S+\s+(\S+)", text, re.M)
    return {"seed": seed, "found": flaws.count("found") if verdicts else 0,
            "flaws": len(flaws) if verdicts else 0, "missed": missed,
            "report": bool(re.search(r"^report: ", text, re.M)), "status": status, "wall_s": wall,
            "load": os.getloadavg()[0], "searched_s": searched, "span_s": span}


def table(rows: list[dict]) -> str:
    lines = ["| seed | flaws found | missed | report | exit | wall s | load (1 min) | worker s in runs | "
             "worker s over the search | share in runs |",
             "|---:|---:|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        share = f"{100 * r['searched_s'] / r['span_s']:.0f}%" if r["span_s"] else "-"
        lines.append(f"| {r['seed']} | {r['found']} of {r['flaws']} | {', '.join(r['missed']) or '-'} | "
                     f"{'built' if r['report'] else 'NOT BUILT'} | {r['status']} | {r['wall_s']:.0f} | {r['load']:.1f} | "
                     f"{r['searched_s']:.0f} | {r['span_s']:.0f} | {share} |")
    every = sum(not r["missed"] and r["report"] for r in rows)
    lines.append(f"\nAll flaws found and the report built on {every} of {len(rows)} seeds.")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="1-10")
    ap.add_argument("--busy", type=int, default=2, help="processes keeping a core busy each (default 2)")
    ap.add_argument("--minutes", type=float, default=5.0)
    import results  # benchmarks/results.py: --write into docs/results.md
    results.add_write_option(ap, "fuzz_under_load")
    args = ap.parse_args()
    try:
        seeds = seeds_of(args.seeds)
    except ValueError as e:
        ap.error(str(e))
    keep = Path(tempfile.mkdtemp(prefix="fuzz-under-load-"))
    print(f"logs, corpora and reports: {keep}", file=sys.stderr, flush=True)
    rows = []
    for seed in seeds:
        rows.append(one_seed(seed, args.minutes, args.busy, keep))
        print(f"seed {seed}: {rows[-1]['found']} of {rows[-1]['flaws']} found, "
              f"report {'built' if rows[-1]['report'] else 'not built'}", file=sys.stderr, flush=True)
    print(f"`replicheck fuzz --minutes {args.minutes:g}` (default targets, workers and report) beside "
          f"{args.busy} busy processes:\n")
    print(table(rows))


if __name__ == "__main__":
    import results
    results.run(main)

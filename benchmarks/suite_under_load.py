"""The default suite under load: `make test`'s pytest run while other processes keep
the cores busy, as on a developer's laptop or a shared CI runner. No test may
depend on the machine's speed; CI's machine cannot show that, this can.

Usage: python benchmarks/suite_under_load.py [--busy 2] [--runs 1] [--write]

Each run starts ``--busy`` processes spinning in a loop (``while True: pass``),
then the suite as ``make test`` runs it (``pytest -n auto --dist worksteal``, the
Kafka bridge's tests required), and stops the busy processes when it ends. Per
run: passed, failed, skipped, errors, the wall time, the load average at the end,
and the failing tests by name.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fuzz_under_load import busy_cores  # noqa: E402  (benchmarks/, beside this script)

#: ``make test``'s pytest command (Makefile), without the interpreter.
SUITE = ["-m", "pytest", "-n", "auto", "--dist", "worksteal", "-p", "no:cacheprovider", "-q", "-rfE"]


def counts(text: str) -> dict[str, int]:
    """pytest's summary line as {"passed": n, "failed": n, ...}."""
    found = {}
    for line in reversed(text.splitlines()):
        if re.match(r"^=+ .*\d+ (passed|failed|error)", line) or re.match(r"^\d+ (passed|failed)", line):
            for n, what in re.findall(r"(\d+) (passed|failed|skipped|errors?|deselected)", line):
                found["errors" if what.startswith("error") else what] = int(n)
            break
    return found


def one_run(n_busy: int) -> dict:
    t0 = time.monotonic()
    with busy_cores(n_busy):
        done = subprocess.run([sys.executable, *SUITE], cwd=ROOT, capture_output=True, text=True,
                              env=dict(os.environ, REPLICHECK_REQUIRE_KAFKA="1"))
    text = done.stdout + done.stderr
    failing = sorted(set(re.findall(r"^(?:FAILED|ERROR) (\S+)", text, re.M)))
    return {"status": done.returncode, "wall_s": time.monotonic() - t0, "load": os.getloadavg()[0],
            "failing": failing, **counts(text)}


def table(rows: list[dict], busy: int) -> str:
    lines = [f"The default suite (`make test`'s pytest run) beside {busy} busy processes:", "",
             "| run | exit | passed | failed | errors | skipped | wall | load (1 min) | failing |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for i, r in enumerate(rows, 1):
        lines.append(f"| {i} | {r['status']} | {r.get('passed', 0):,} | {r.get('failed', 0)} | {r.get('errors', 0)} | "
                     f"{r.get('skipped', 0)} | {int(r['wall_s'] // 60)}:{int(r['wall_s'] % 60):02d} | "
                     f"{r['load']:.1f} | {', '.join(f'`{t}`' for t in r['failing']) or '-'} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--busy", type=int, default=2, help="processes keeping a core busy each (default 2)")
    ap.add_argument("--runs", type=int, default=1)
    import results  # benchmarks/results.py: --write into docs/results.md
    results.add_write_option(ap, "suite_under_load")
    args = ap.parse_args()
    rows = []
    for i in range(args.runs):
        rows.append(one_run(args.busy))
        print(f"run {i + 1}: exit {rows[-1]['status']}, {rows[-1].get('passed', 0)} passed, "
              f"{rows[-1].get('failed', 0)} failed", file=sys.stderr, flush=True)
    print(table(rows, args.busy))


if __name__ == "__main__":
    import results
    results.run(main)

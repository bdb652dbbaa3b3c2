"""Checked steps per CPU second of the campaign's explorer on another revision and on
the working tree, measured side by side.

Usage: python benchmarks/explore_ab.py [--against REV] [--rounds 3] [--bursts 100]
                                       [--seeds 0,1,2] [--write]

A shared machine's speed changes from one day to the next, so a rate measured
today does not compare with one on the results page from another day. This
measures both at once: REV (default HEAD) is checked out into a temporary git
worktree, and each round starts one process for REV and one for the working
tree together (on two cores, each has one), each timing the explorer runs of
``explore_throughput`` (its subjects, ``campaign.unit.UNGUIDED_SHARE``,
``--bursts`` bursts from each seed of ``--seeds``) in CPU seconds
(``time.process_time``). Per subject and side, the best of ``--rounds`` rounds
is kept; the ratio is the working tree's rate over REV's. The random streams of
two revisions may differ, so the runs compare by rate, not by steps.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from explore_throughput import SUBJECT_SOURCES  # noqa: E402  (benchmarks/explore_throughput.py)

ROOT = Path(__file__).resolve().parent.parent

#: One side's measurement, run in that side's code: argv[1] the root, argv[2] a
#: JSON list [bursts, seeds, [[name, subject expression], ...]]; prints a JSON
#: object name -> checked steps per CPU second (the best seed's run counted whole).
_CHILD = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
from campaign.unit import UNGUIDED_SHARE
from check.explore import Explorer
from check.machine import machine_for
from check.subject import Subject
from model import Variant
from sut.bugs import Bug
bursts, seeds, subjects = json.loads(sys.argv[2])
rates = {}
for name, source in subjects:
    subject = eval(source, {"Subject": Subject, "Variant": Variant, "Bug": Bug})
    steps = cpu = 0.0
    for seed in seeds:
        explorer = Explorer(machine_for(subject, name=f"AB{seed}"), seed, unguided_share=UNGUIDED_SHARE)
        t0 = time.process_time()
        result = explorer.run(1e9, stop=lambda: explorer.bursts >= bursts)
        cpu += time.process_time() - t0
        steps += result.steps
    rates[name] = steps / cpu
print(json.dumps(rates))
"""


def _round(roots: dict[str, Path], args: argparse.Namespace) -> dict[str, dict[str, float]]:
    """One round: both sides at once; side -> subject -> rate. RuntimeError with
    the side's error output when one fails."""
    spec = json.dumps([args.bursts, args.seeds, [list(s) for s in SUBJECT_SOURCES]])
    procs = {side: subprocess.Popen([sys.executable, "-c", _CHILD, str(root), spec], cwd=root,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for side, root in roots.items()}
    out = {}
    for side, proc in procs.items():
        stdout, stderr = proc.communicate()
        if proc.returncode != 0:
            raise RuntimeError(f"the {side} side failed (exit {proc.returncode}): {stderr.strip().splitlines()[-1:]}")
        out[side] = json.loads(stdout.strip().splitlines()[-1])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--against", default="HEAD", help="the revision to compare with (default HEAD)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds, the best of each side kept (default 3)")
    ap.add_argument("--bursts", type=int, default=100, help="bursts per explorer run (default 100)")
    ap.add_argument("--seeds", type=lambda v: [int(x) for x in v.split(",")], default=[0, 1, 2],
                    help="explorer seeds, comma-separated (default 0,1,2)")
    import results  # benchmarks/results.py: --write into docs/results.md
    results.add_write_option(ap, "explore_ab")
    args = ap.parse_args()
    rev = subprocess.run(["git", "rev-parse", "--short", args.against], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout.strip()
    best: dict[str, dict[str, float]] = {"rev": {}, "tree": {}}
    with tempfile.TemporaryDirectory(prefix="replicheck-ab-") as tmp:
        worktree = Path(tmp) / "rev"
        subprocess.run(["git", "worktree", "add", "--detach", "--quiet", str(worktree), rev], cwd=ROOT, check=True)
        try:
            for _ in range(args.rounds):
                for side, rates in _round({"rev": worktree, "tree": ROOT}, args).items():
                    for name, rate in rates.items():
                        best[side][name] = max(rate, best[side].get(name, 0.0))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(worktree)], cwd=ROOT, check=False)
    print(f"Checked steps per CPU second, {rev} and the working tree at the same time, the best of "
          f"{args.rounds} rounds of {args.bursts} bursts on seeds {','.join(map(str, args.seeds))}:\n")
    print(f"| subject | {rev} | working tree | ratio |")
    print("|---|---:|---:|---:|")
    for name, _ in SUBJECT_SOURCES:
        a, b = best["rev"][name], best["tree"][name]
        print(f"| {name} | {a:,.0f} | {b:,.0f} | {b / a:.2f} |")


if __name__ == "__main__":
    import results
    results.run(main)

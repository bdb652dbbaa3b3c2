"""The search's tail in CPU seconds: how long the campaign's explorer takes to
find the deepest flaws, measured so that a loaded machine does not change it.

Usage:
  python benchmarks/search_tail.py [--seeds 6] [--first-seed 0] [--cap 40] [--jobs 2]
                                   [--share 0.5] [FLAW ...]

For each flaw (default ``DEEP``: the flaws a default campaign under load missed
in the last measurements) and seed, the campaign unit's search alone: explorer
runs of ``campaign.unit.EXPLORE_RUN_S`` seconds with the run seeds a seeded
campaign gives them (``campaign.targets.run_seed``) and ``--share`` of their
steps on unguided examples (default ``campaign.unit.UNGUIDED_SHARE``), until
the first failure or ``--cap`` CPU seconds. No shortening, no reduction, no
corpus: the seconds are the search's, counted in the process's CPU time
(``time.process_time``), so other processes on the machine leave them as they
are, and ``--jobs N`` on N cores measures the same as one at a time.

Prints per flaw: found/seeds, the median and the worst CPU seconds (a seed that
found nothing counts as ``--cap``), the mean time to find — the total CPU
seconds spent over the finds, the estimate for a search that finds at a constant
rate (each second as likely as the next to find it, whatever came before: what
these runs show) — and the CPU seconds that rate needs for a 99 % chance of a
find (4.6 × the mean).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

#: The flaws a default campaign under load missed on some seed (docs/results.md,
#: "The main job under load"), and the deepest of the time-to-find tables.
DEEP = ("variant:NO_LAST_FETCHED_EPOCH", "variant:NO_FETCH_LEADER_EPOCH_FENCING", "variant:ISR_JOIN_WITHOUT_LESO",
        "variant:ISR_JOIN_WITHOUT_CURRENT_EPOCH_FETCH", "variant:NO_FOLLOWER_STATE_RESET_ON_NEW_EPOCH",
        "variant:ALTER_PARTITION_WITHOUT_BROKER_EPOCH", "variant:BALANCED_RECOVERY_ANY_MEMBER",
        "variant:NO_FETCH_RESPONSE_VALIDATION", "bug:TRUNCATE_TO_LEADER_OFFSET",
        "bug:EPOCH_ASSIGN_KEEPS_LATER_OFFSETS")


def search(args: tuple[str, int, float, float]) -> dict[str, Any]:
    """One (flaw, seed): the CPU seconds to the first failure (None: none within
    the cap), the runs and the checked steps."""
    label, seed, cap, share = args
    from campaign.targets import Target, run_seed
    from campaign.unit import EXPLORE_RUN_S
    from check.explore import Explorer
    target = Target.parse(label)
    start, steps, run = time.process_time(), 0, 0
    while (spent := time.process_time() - start) < cap:
        explorer = Explorer(target.machine(run, seed), run_seed(seed, target.key, run), unguided_share=share)
        result = explorer.run(min(EXPLORE_RUN_S, cap - spent))
        run, steps = run + 1, steps + result.steps
        if result.verdict is not None:
            # the run's wall seconds after the failure are not the search's
            found = time.process_time() - start - (result.seconds - (result.first_failure_s or 0.0))
            return {"label": label, "seed": seed, "cpu": max(0.0, found), "runs": run, "steps": steps}
    return {"label": label, "seed": seed, "cpu": None, "runs": run, "steps": steps}


def _fmt(x: Optional[float]) -> str:
    return "-" if x is None else f"{x:.1f}"


def table(rows: list[dict[str, Any]], cap: float) -> None:
    print("| flaw | found | median CPU s | worst CPU s | mean time to find, CPU s | CPU s for a 99% find |")
    print("|---|---:|---:|---:|---:|---:|")
    for label in dict.fromkeys(r["label"] for r in rows):
        rs = [r for r in rows if r["label"] == label]
        found = [r for r in rs if r["cpu"] is not None]
        spent = [cap if r["cpu"] is None else r["cpu"] for r in rs]
        mean = sum(spent) / len(found) if found else None
        print(f"| `{label}` | {len(found)}/{len(rs)} | {_fmt(statistics.median(spent))} | "
              f"{_fmt(max(spent)) if len(found) == len(rs) else f'> {cap:g}'} | {_fmt(mean)} | "
              f"{_fmt(None if mean is None else mean * math.log(100))} |")
    total = sum(cap if r["cpu"] is None else r["cpu"] for r in rows)
    print(f"\nfound {sum(r['cpu'] is not None for r in rows)} of {len(rows)}; "
          f"CPU seconds over every (flaw, seed), a miss counted as the cap: {total:,.0f}")


def main() -> None:
    from campaign.unit import UNGUIDED_SHARE
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("flaws", nargs="*", metavar="FLAW", help="variant:NAME or bug:NAME (default: DEEP)")
    ap.add_argument("--seeds", type=int, default=6)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--cap", type=float, default=40.0, help="CPU seconds per (flaw, seed) (default 40)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--share", type=float, default=UNGUIDED_SHARE, help="unguided share of the steps")
    import results  # benchmarks/results.py: --write into docs/results.md
    results.add_write_option(ap, "search_tail")
    args = ap.parse_args()
    from campaign.targets import Target
    for label in args.flaws:
        try:
            Target.parse(label)   # a bad name is one line before anything runs
        except ValueError as e:
            ap.error(str(e))
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    jobs = [(label, seed, args.cap, args.share) for label in (args.flaws or DEEP) for seed in seeds]
    with ProcessPoolExecutor(args.jobs) as pool:
        rows = list(pool.map(search, jobs))
    table(rows, args.cap)


if __name__ == "__main__":
    import results
    results.run(main)

"""Time to find every protocol variant and every SUT bug with the campaign's
engine, beside each of the explorer's two searches alone, the same machine
policy without guidance, and a plain uniform random walk.

Usage:
  python benchmarks/explore_time_to_find.py [--seeds 5] [--first-seed 0] [--cap 60] [--jobs 2]
                                            [--variant NAME ...] [--bug NAME ...] [--raw FILE]
  python benchmarks/explore_time_to_find.py --from-raw FILE [FILE ...]

For each flaw and seed, four searches, each up to ``--cap`` seconds:

- **campaign**: one campaign unit of the flaw's target with a share of
  ``--cap`` seconds (``campaign.unit.run_unit``, the explore engine, the
  campaign's seed ``seed``), writing to a temporary corpus: explorer runs of
  ``EXPLORE_RUN_S``, each with its own seed and ``UNGUIDED_SHARE`` of its steps
  on fresh examples beside the guided bursts; after the first failure,
  ``SHORTEN_S`` of search for a
  shorter one and the reduction of the shortest within the unit's reduction
  time. Gives the seconds to the first failure and the stored counterexample's
  length, against the flaw's best-known minimal scenario (the hand-written
  scenario's or the golden corpus's, whichever is shorter);
- **guided**: one ``Explorer(machine, seed)`` run, Go-Explore over
  ``cell_of``, for the whole cap;
- **unguided**: the same machine policy, every burst a fresh example of up to
  400 rule steps (``guided=False``): what the archive adds;
- **walk**: a uniform random walk over ``enabled_actions`` through the same
  lockstep check (``time_to_find.random_walk_run``), given the campaign's
  time (or the cap when it found nothing).

Prints one row per flaw: found/seeds, median and worst seconds to the first
failure for each search, and the stored length's median and worst ratio to the
minimal scenario. ``--jobs N`` runs N (flaw, seed) pairs at once in separate
processes: on a machine with N idle cores the seconds stay one-core figures.
``--raw`` keeps each measurement as a JSON line; ``--from-raw`` prints the table
of several such files.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))

from time_to_find import random_walk_run  # noqa: E402

from check.machine import machine_for  # noqa: E402
from campaign.targets import Target
from campaign.unit import EXPLORE, WorkUnit, run_unit  # noqa: E402
from check.explore import Explorer  # noqa: E402
from check.scenarios import MINIMAL  # noqa: E402
from check.subject import Subject
from model import Variant  # noqa: E402
from sut.bugs import Bug  # noqa: E402

GOLDEN = Path(__file__).resolve().parent.parent / "tests" / "golden" / "corpus"


def flaw_of(label: str) -> Any:
    kind, _, name = label.partition(":")
    return Variant[name] if kind == "variant" else Bug[name]


def label_of(flaw: Any) -> str:
    return f"{'variant' if isinstance(flaw, Variant) else 'bug'}:{flaw.name}"


def machine_of(flaw: Any) -> type:
    if isinstance(flaw, Variant):
        return machine_for(Subject(variants=frozenset({flaw})))
    return machine_for(Subject(bugs=frozenset({flaw}), compare=True))


def minimal_lengths() -> dict[str, int]:
    """Each flaw's best-known minimal scenario: the shorter of the hand-written
    one (variants, ``check.scenarios``) and the golden corpus's row."""
    from store.reader import read_counterexamples
    out: dict[str, int] = {label_of(v): len(s.actions) for v, s in MINIMAL.items()}
    for row in read_counterexamples(GOLDEN, warn=False).rows:
        names = list(row["variants"] or []) and [f"variant:{n}" for n in row["variants"]] or \
            [f"bug:{n}" for n in row["sut_bugs"] or []]
        for label in names:
            out[label] = min(out.get(label, row["step_count"]), row["step_count"])
    return out


def measure(args: tuple[str, int, float]) -> dict[str, Any]:
    """One (flaw, seed): the campaign's unit, the guided and the unguided
    explorer alone, and the walk (module doc)."""
    label, seed, cap = args
    flaw = flaw_of(label)
    with tempfile.TemporaryDirectory() as corpus:
        unit = run_unit(WorkUnit(Target.parse(label), cap, seed=seed, corpus_dir=corpus, engine=EXPLORE))
    out: dict[str, Any] = {"label": label, "seed": seed, "cap": cap, "campaign_s": unit.first_failure_s,
                           "campaign_runs": unit.runs, "found_steps": unit.shrunk_steps,
                           "reduced_steps": unit.reduced_steps,
                           "campaign_steps_per_s": unit.steps / max(unit.seconds, 1e-9)}
    for name, guided in (("guided", True), ("unguided", False)):
        result = Explorer(machine_of(flaw), seed, guided=guided).run(cap)
        out.update({f"{name}_s": result.first_failure_s,
                    f"{name}_steps_per_s": result.steps / max(result.seconds, 1e-9)})
    out["walk_s"] = random_walk_run(flaw, seed, unit.first_failure_s or cap, 400)
    return out


def _median(xs: list[Optional[float]]) -> Optional[float]:
    vals = [x for x in xs if x is not None]
    return statistics.median(vals) if vals else None


def _worst(xs: list[Optional[float]]) -> Optional[float]:
    """The worst over the seeds: None when any seed found nothing."""
    return None if any(x is None for x in xs) or not xs else max(xs)  # type: ignore[type-var]


def _fmt(x: Optional[float], spec: str = ".1f") -> str:
    return "-" if x is None else format(x, spec)


SEARCHES = ("campaign", "guided", "unguided", "walk")


def print_table(rows: list[dict[str, Any]]) -> None:
    minimal = minimal_lengths()
    by: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by.setdefault(r["label"], []).append(r)
    order = [label_of(f) for f in [*Variant, *Bug]]
    print("| flaw | " + " | ".join(f"{s} found | median s | worst s" for s in SEARCHES)
          + " | stored (median) | minimal | worst ratio |")
    print("|---|" + "---:|" * (3 * len(SEARCHES) + 3))
    for label in [lbl for lbl in order if lbl in by]:
        rs = sorted(by[label], key=lambda r: r["seed"])
        cells = []
        for search in SEARCHES:
            xs = [r[f"{search}_s"] for r in rs]
            cells += [f"{sum(x is not None for x in xs)}/{len(rs)}", _fmt(_median(xs)), _fmt(_worst(xs))]
        red = [r.get("reduced_steps") for r in rs]
        m = minimal.get(label)
        ratios = [x / m for x in red if x is not None and m]
        print(f"| `{label}` | " + " | ".join(cells) + f" | {_fmt(_median(red), '.0f')} | "
              f"{m if m is not None else '-'} | {_fmt(max(ratios) if ratios else None, '.2f')} |", flush=True)
    within = sum(1 for r in rows if r.get("reduced_steps") is not None and minimal.get(r["label"])
                 and r["reduced_steps"] <= 1.5 * minimal[r["label"]])
    print(f"\nstored counterexamples within 1.5x of the minimal scenario: {within}/"
          f"{sum(1 for r in rows if r.get('reduced_steps') is not None)}")
    print("checked steps/s (median over every search): " + ", ".join(
        f"{s} {statistics.median(r[f'{s}_steps_per_s'] for r in rows):,.0f}" for s in SEARCHES[1:3]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--cap", type=float, default=60.0, help="seconds each search may take at most")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--variant", action="append", default=[], choices=[v.name for v in Variant])
    ap.add_argument("--bug", action="append", default=[], choices=[b.name for b in Bug])
    ap.add_argument("--raw", help="append each measurement as a JSON line to this file")
    ap.add_argument("--from-raw", nargs="+", help="print the table of these raw files, measuring nothing")
    import results  # benchmarks/results.py: --write into docs/results.md
    results.add_write_option(ap, "explore_time_to_find")
    args = ap.parse_args()
    if args.from_raw:
        print_table([json.loads(line) for f in args.from_raw for line in Path(f).read_text().splitlines() if line])
        return
    flaws = [Variant[n] for n in args.variant] + [Bug[n] for n in args.bug] or [*Variant, *Bug]
    jobs = [(label_of(f), seed, args.cap) for f in flaws
            for seed in range(args.first_seed, args.first_seed + args.seeds)]
    rows = []
    with ProcessPoolExecutor(args.jobs) as pool:
        for row in pool.map(measure, jobs):
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
            if args.raw:
                with open(args.raw, "a") as fh:
                    fh.write(json.dumps(row) + "\n")
    print_table(rows)


if __name__ == "__main__":
    import results
    results.run(main)

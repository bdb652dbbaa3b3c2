"""What trace reduction (check.reduce) costs and gains on long traces.

Usage:
  python benchmarks/reduce_cost.py [--walks 3] [--steps 400] [--seeds 200]
  python benchmarks/reduce_cost.py --corpus DIR [DIR ...] [--seconds 10] [--jobs 2]

For each of a few protocol variants, weighted random walks (check.random_walk,
no Hypothesis, so no shrinking) run on RF 3 of 4 brokers, MinISR 2, until a walk
breaks a property. Each such walk's trace, which is long and unshrunk, is then
reduced twice: within its configuration (``reduce_trace``), and with smaller
configurations tried too (``reduce_counterexample``). The table gives the walk's
length, both reduced lengths, the hand-written minimal scenario's length, each
reduction's wall-clock seconds, and the configurations the second one ended in.

With ``--corpus``, the counterexamples of campaign corpora instead: each row's
trace as its search found it (``shrunk_steps``) is reduced again
(``reduce_counterexample``, the row's property, within ``--seconds``), and a row
per flaw gives the counterexamples, the found, stored and re-reduced lengths
(medians), the flaw's best-known minimal scenario
(``explore_time_to_find.minimal_lengths``), how many are within 1.5x of it
stored and re-reduced, and the re-reduction's seconds. The stored lengths are
what the reduction of the campaign that wrote the corpus reached, within its
share of the budget.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import properties
from check.scenarios import MINIMAL
from check.random_walk import random_walk
from check.reduce import reduce_counterexample, reduce_trace
from check.subject import Subject
from model import Config, Variant

VARIANTS = (Variant.HWM_ADVANCES_BELOW_MIN_ISR, Variant.ELR_KEPT_WHEN_ISR_REACHES_MIN_ISR, Variant.NO_ELR,
            Variant.REASSIGNMENT_COMPLETES_BELOW_MIN_ISR)


def failing_walks(config: Config, walks: int, steps: int, seeds: int) -> list[list]:
    """Up to ``walks`` traces of weighted walks that end at a property violation."""
    out: list[list] = []
    for seed in range(seeds):
        trace = []
        for action, state in random_walk(config, steps, seed, policy="weighted"):
            trace.append(action)
            if properties.check_all(state):
                out.append(trace)
                break
        if len(out) == walks:
            break
    return out


def shape(config: Config) -> str:
    """``RF r/n MinISR m``: replicas, brokers and MinISR of ``config``."""
    return f"RF {len(config.assignment)}/{len(config.brokers)} MinISR {config.min_isr}"


def timed(fn, *args):  # type: ignore[no-untyped-def]
    t0 = time.monotonic()
    return fn(*args), time.monotonic() - t0


def reduce_row(job: tuple[tuple, str, list[str], str, str, float]) -> tuple[int, float]:
    """A corpus row's found trace reduced again: (reduced length, seconds)."""
    from store.codec import bugs_from_names, config_from_json
    trace, config_json, bugs, prop, kind, seconds = job
    result, s = timed(lambda: reduce_counterexample(trace, Subject.at(config_from_json(config_json), bugs=bugs_from_names(bugs)), max_seconds=seconds, prop=prop if kind == "property" else None))
    return len(result.trace), s


def corpus_table(dirs: list[str], seconds: float, jobs: int) -> None:
    """The ``--corpus`` table (module doc)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from explore_time_to_find import minimal_lengths

    from store.reader import read_counterexamples
    from store.codec import decode_steps
    minimal = minimal_lengths()
    rows: list[dict[str, Any]] = [row for d in dirs for row in read_counterexamples(d, warn=False).rows
                                  if row["shrunk_steps"] is not None]
    work = [(decode_steps(r["shrunk_steps"]), r["shrunk_config_json"], list(r["sut_bugs"]), r["property"], r["kind"],
             seconds) for r in rows]
    by_flaw: dict[str, list[tuple[int, int, int, float]]] = defaultdict(list)
    with ProcessPoolExecutor(jobs) as pool:
        for row, (n, s) in zip(rows, pool.map(reduce_row, work)):
            label = ([f"variant:{v}" for v in row["variants"]] + [f"bug:{b}" for b in row["sut_bugs"]])[0]
            by_flaw[label].append((row["shrunk_step_count"], row["step_count"], n, s))
    header = (f"{'flaw':50} {'rows':>4} {'found':>6} {'stored':>6} {'again':>6} {'minimal':>7} "
              f"{'stored <=1.5x':>13} {'again <=1.5x':>12} {'median s':>8} {'max s':>6}")
    print(header)
    print("-" * len(header))
    totals: Counter = Counter()
    for label in sorted(by_flaw):
        got, least = by_flaw[label], minimal.get(label)
        within = [sum(1 for g in got if least is not None and g[k] <= 1.5 * least) for k in (1, 2)]
        totals.update(rows=len(got), stored=within[0], again=within[1])
        print(f"{label:50} {len(got):>4} {statistics.median(g[0] for g in got):>6.0f} "
              f"{statistics.median(g[1] for g in got):>6.0f} {statistics.median(g[2] for g in got):>6.0f} "
              f"{'-' if least is None else least:>7} {within[0]:>13} {within[1]:>12} "
              f"{statistics.median(g[3] for g in got):>8.1f} {max(g[3] for g in got):>6.1f}")
    print(f"within 1.5x of the minimal scenario: stored {totals['stored']}/{totals['rows']}, "
          f"reduced again {totals['again']}/{totals['rows']}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--walks", type=int, default=3, help="failing walks reduced per variant")
    ap.add_argument("--steps", type=int, default=400, help="steps per walk")
    ap.add_argument("--seeds", type=int, default=200, help="walk seeds tried per variant")
    ap.add_argument("--corpus", nargs="+", metavar="DIR", help="reduce the found traces of these corpora instead")
    ap.add_argument("--seconds", type=float, default=10.0, help="with --corpus: seconds each reduction may take")
    ap.add_argument("--jobs", type=int, default=1, help="with --corpus: reductions at once, in processes")
    import results  # benchmarks/results.py: --write into docs/results.md
    results.add_write_option(ap, "reduce_cost")
    args = ap.parse_args()
    if args.corpus:
        corpus_table(args.corpus, args.seconds, args.jobs)
        return
    header = (f"{'variant':40} {'walks':>5} {'walk steps':>10} {'reduced':>8} {'+config':>8} {'minimal':>8} "
              f"{'median s':>9} {'max s':>6} {'+config median s':>17} {'max s':>6}  configs reached")
    print(header)
    print("-" * len(header), flush=True)
    for variant in VARIANTS:
        config = Config(brokers=(1, 2, 3, 4), assignment=(1, 2, 3), min_isr=2, variants=frozenset({variant}))
        lengths, reduced, seconds, smaller, smaller_s, shapes = [], [], [], [], [], Counter()
        for trace in failing_walks(config, args.walks, args.steps, args.seeds):
            lengths.append(len(trace))
            within, s = timed(reduce_trace, trace, Subject.at(config))
            reduced.append(len(within))
            seconds.append(s)
            result, s = timed(reduce_counterexample, trace, Subject.at(config))
            smaller.append(len(result.trace))
            smaller_s.append(s)
            shapes[shape(result.config)] += 1
        if not lengths:
            print(f"{variant.name:40} {0:>5}   no walk failed", flush=True)
            continue
        print(f"{variant.name:40} {len(lengths):>5} {statistics.median(lengths):>10.0f} "
              f"{statistics.median(reduced):>8.0f} {statistics.median(smaller):>8.0f} "
              f"{len(MINIMAL[variant].actions):>8} {statistics.median(seconds):>9.1f} {max(seconds):>6.1f} "
              f"{statistics.median(smaller_s):>17.1f} {max(smaller_s):>6.1f}  "
              + ", ".join(f"{k} ×{v}" for k, v in shapes.most_common()), flush=True)


if __name__ == "__main__":
    import results
    results.run(main)

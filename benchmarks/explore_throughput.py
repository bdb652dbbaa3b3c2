"""Checked steps per second of the campaign's explorer, where its time goes, and
the model's own limit beside it.

Usage: python benchmarks/explore_throughput.py [--bursts 150] [--repeats 3] [--seed 0]

For each subject — the correct protocol on the model alone, the correct protocol
with the SUT compared, a protocol variant (model alone), a SUT bug (SUT
compared) — one ``check.explore.Explorer`` run of the campaign's kind
(``campaign.unit.UNGUIDED_SHARE``) stops after ``--bursts`` bursts: the same
seed takes the same steps on any machine, so runs compare by their CPU time
(the best of ``--repeats``, ``time.process_time``: other processes on the
machine do not count). A checked step = the model's step + every property +
the enablement probes + the SUT's apply and observation and their comparison,
as the lockstep does it.

The shares come from timing wrappers around the parts (one more run, not the
one timed): the machine's enablement (``enabled_actions``, what the explorer
and the machine ask to choose a step), the model's step, the properties, the
enablement probes, the SUT's apply and observe, and the rest (the explorer's
cells and archive, the machine's draws and compound steps, the lockstep's
comparisons, restoring snapshots). "model limit" is what the model's step and
the properties alone would allow: checked steps over their time.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import check.lockstep as lockstep  # noqa: E402
import check.machine as machine_module  # noqa: E402
import properties  # noqa: E402
import sut  # noqa: E402
from campaign.unit import UNGUIDED_SHARE  # noqa: E402
from check.explore import Explorer  # noqa: E402
from check.machine import machine_for  # noqa: E402
from check.subject import Subject  # noqa: E402
from model import Variant  # noqa: E402
from sut.bugs import Bug  # noqa: E402
from harness_throughput import timed  # noqa: E402  (benchmarks/harness_throughput.py)

PARTS = ("enablement", "model step", "properties", "probes", "SUT apply", "SUT observe")

#: name, the subject as an expression over Subject, Variant and Bug (benchmarks/explore_ab.py
#: builds the same subjects in another revision's code)
SUBJECT_SOURCES: tuple[tuple[str, str], ...] = (
    ("correct, model alone", "Subject(compare=False)"),
    ("correct, SUT compared", "Subject()"),
    ("variant NO_FETCH_LEADER_EPOCH_FENCING", "Subject(variants=frozenset({Variant.NO_FETCH_LEADER_EPOCH_FENCING}))"),
    ("bug EPOCH_ASSIGN_KEEPS_LATER_OFFSETS", "Subject(bugs=frozenset({Bug.EPOCH_ASSIGN_KEEPS_LATER_OFFSETS}))"),
)
#: name, subject
SUBJECTS: tuple[tuple[str, Subject], ...] = tuple(
    (name, eval(source, {"Subject": Subject, "Variant": Variant, "Bug": Bug})) for name, source in SUBJECT_SOURCES)


def _instrumented(timings: dict[str, float]) -> Callable[[], None]:
    """Wrap the parts' functions where the machine and the lockstep look them up;
    returns the undo."""
    parts = [(machine_module, "enabled_actions", "enablement"), (lockstep, "step", "model step"),
             (lockstep, "enablement_disagreements", "probes"), (sut.Cluster, "apply", "SUT apply"),
             (sut.Cluster, "observe", "SUT observe")]
    saved = [(owner, attr, getattr(owner, attr)) for owner, attr, _ in parts]
    for (owner, attr, fn), (_, _, name) in zip(saved, parts):
        setattr(owner, attr, timed(timings, name, fn))
    saved_props = lockstep.properties
    lockstep.properties = type("P", (), {  # type: ignore[assignment]
        "check_all": staticmethod(timed(timings, "properties", properties.check_all)),
        "check_some": staticmethod(timed(timings, "properties", properties.check_some))})

    def undo() -> None:
        for owner, attr, fn in saved:
            setattr(owner, attr, fn)
        lockstep.properties = saved_props  # type: ignore[assignment]
    return undo


def _run(subject: Subject, bursts: int, seed: int, tag: str) -> tuple[int, float]:
    """One explorer run of ``bursts`` bursts: (checked steps, CPU seconds)."""
    cls = machine_for(subject, name=f"Throughput_{tag}")
    explorer = Explorer(cls, seed, unguided_share=UNGUIDED_SHARE)
    t0 = time.process_time()
    result = explorer.run(1e9, stop=lambda: explorer.bursts >= bursts)
    return result.steps, time.process_time() - t0


def measure(name: str, subject: Subject, bursts: int, repeats: int, seed: int) -> dict[str, Any]:
    """The row of one subject: steps, the best CPU seconds, the parts' shares."""
    runs = [_run(subject, bursts, seed, f"{i}") for i in range(repeats)]
    steps, cpu = min(runs, key=lambda r: r[1])
    timings: dict[str, float] = defaultdict(float)
    undo = _instrumented(timings)
    try:
        _, timed_cpu = _run(subject, bursts, seed, "timed")
    finally:
        undo()
    shares = {p: timings.get(p, 0.0) / timed_cpu for p in PARTS}
    limit = steps / max(1e-9, (shares["model step"] + shares["properties"]) * cpu)
    return {"name": name, "steps": steps, "cpu": cpu, "shares": shares, "limit": limit}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bursts", type=int, default=150, help="bursts per run (default 150)")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per subject, the best kept (default 3)")
    ap.add_argument("--seed", type=int, default=0)
    import results  # benchmarks/results.py: --write into docs/results.md
    results.add_write_option(ap, "explore_throughput")
    args = ap.parse_args()
    print("| subject | checked steps | CPU s | checked steps/s | " + " | ".join(PARTS) + " | rest | model limit, steps/s |")
    print("|---|---:|---:|---:|" + "---:|" * (len(PARTS) + 2))
    for name, subject in SUBJECTS:
        row = measure(name, subject, args.bursts, args.repeats, args.seed)
        rest = 1 - sum(row["shares"].values())
        print(f"| {row['name']} | {row['steps']:,} | {row['cpu']:.2f} | {row['steps'] / row['cpu']:,.0f} | "
              + " | ".join(f"{100 * row['shares'][p]:.0f}%" for p in PARTS)
              + f" | {100 * rest:.0f}% | {row['limit']:,.0f} |", flush=True)


if __name__ == "__main__":
    import results
    results.run(main)

"""A seeded Kafka campaign on each release the bridge runs: what each disagrees on.

Usage: python benchmarks/kafka_releases.py [--releases 4.0.2,4.1.2,...] [--minutes 3]
       [--workers 1] [--seed 1] [--jobs 2] [--write]

For each release X (default: every one of ``model.KAFKA_RELEASES``, those whose
jars are missing reported as such: ``make kafka-jars KAFKA_VERSION=X``),
``replicheck fuzz --implementation kafka --kafka-version X`` with the seed, the
workers and the minutes given, ``--no-report``, and ``--known`` the signatures of
every change Kafka made after X (``kafka_bridge.changes.known_before``): the runs
go on past what is classified, so what the table calls unclassified is what is
behind it. ``--jobs`` campaigns run at once (each its own processes).

The table gives per release whether Kafka's ``Partition`` is in the loop, the
examples, each known change met (its JIRA, how many runs met it) and every
disagreement no change explains (its signature, the shortest reduced trace, the
row's id in the release's corpus, kept in the folder printed on stderr).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def campaign(release: str, minutes: float, workers: int, seed: int, keep: Path) -> dict[str, Any]:
    """One release's campaign (module doc), read back from its corpus."""
    from check.implementations import unavailable
    from check.subject import kafka_name
    from kafka_bridge.changes import known_before
    from kafka_bridge.releases import has_partition
    row: dict[str, Any] = {"release": release, "partition": has_partition(release)}
    why = unavailable(kafka_name(release))
    if why is not None:
        return row | {"missing": why}
    folder = keep / release
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "known.txt").write_text(known_before(release))
    with open(folder / "campaign.log", "w") as log:
        status = subprocess.call([sys.executable, "-m", "replicheck_cli.commands", "fuzz", "--implementation",
                                  "kafka", "--kafka-version", release, "--minutes", str(minutes), "--workers",
                                  str(workers), "--seed", str(seed), "--no-report", "--no-live", "--corpus",
                                  str(folder / "corpus"), "--known", str(folder / "known.txt")],
                                 cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    return row | {"status": status} | read_corpus(folder / "corpus", release)


def read_corpus(corpus: Path, release: str) -> dict[str, Any]:
    """The examples, the known changes met (change -> runs meeting one of its
    signatures; a signature two changes after ``release`` share counts for both,
    named together) and the unclassified disagreements (signature -> (shortest
    reduced steps, id)) of release ``release``'s campaign corpus."""
    from check.machine import KNOWN_EVENT
    from kafka_bridge.changes import CHANGES
    from kafka_bridge.releases import release as number
    from store.reader import read_counterexamples, read_runs
    after = [c for c in CHANGES if number(release) < number(c.since)]
    runs = read_runs(corpus, warn=False).rows if (corpus / "runs").is_dir() else []
    met: dict[str, int] = {}
    for run in runs:
        for event, _ in dict(run["event_counts"] or {}).items():
            if event.startswith(KNOWN_EVENT):
                label = " or ".join(c.issue for c in after if event[len(KNOWN_EVENT):] in c.signatures)
                met[label] = met.get(label, 0) + 1
    rows = read_counterexamples(corpus, warn=False).rows if (corpus / "counterexamples").is_dir() else []
    new: dict[str, tuple[int, str]] = {}
    for r in rows:
        steps = len(r["steps"] or [])
        if r["signature"] not in new or steps < new[r["signature"]][0]:
            new[r["signature"]] = (steps, r["counterexample_id"][:16])
    return {"examples": sum(r["examples"] for r in runs), "met": met, "new": new}


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| release | Kafka's `Partition` | examples | known changes met (runs) | unclassified disagreements |",
             "|---|---|---:|---|---|"]
    for r in rows:
        if "missing" in r:
            lines.append(f"| {r['release']} | {'yes' if r['partition'] else 'no'} | - | not run: jars missing "
                         f"(`make kafka-jars KAFKA_VERSION={r['release']}`) | - |")
            continue
        met = ", ".join(f"{issue} ({n})" for issue, n in sorted(r["met"].items())) or "-"
        new = "<br>".join(f"`{sig}` ({steps} steps, `{ident}`)" for sig, (steps, ident) in sorted(r["new"].items()))
        lines.append(f"| {r['release']} | {'yes' if r['partition'] else 'no'} | {r['examples']:,} | {met} | "
                     f"{new or 'none'} |")
    return "\n".join(lines)


def main() -> None:
    from model import KAFKA_RELEASES
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--releases", default=",".join(KAFKA_RELEASES))
    ap.add_argument("--minutes", type=float, default=3.0)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2, help="campaigns at once (default 2)")
    import results  # benchmarks/results.py: --write into docs/results.md
    results.add_write_option(ap, "kafka_releases")
    args = ap.parse_args()
    chosen = [r.strip() for r in args.releases.split(",") if r.strip()]
    unknown = [r for r in chosen if r not in KAFKA_RELEASES]
    if unknown:
        ap.error(f"--releases: {', '.join(unknown)} not among {', '.join(KAFKA_RELEASES)}")
    keep = Path(tempfile.mkdtemp(prefix="kafka-releases-"))
    print(f"corpora and logs: {keep}", file=sys.stderr, flush=True)
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        rows = list(pool.map(lambda r: campaign(r, args.minutes, args.workers, args.seed, keep), chosen))
    print(f"`replicheck fuzz --implementation kafka --kafka-version X --minutes {args.minutes:g} --workers "
          f"{args.workers} --seed {args.seed} --known` (the changes after X, `kafka_bridge.changes`), "
          f"{args.jobs} at once:\n")
    print(table(rows))


if __name__ == "__main__":
    import results
    results.run(main)

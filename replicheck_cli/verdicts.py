"""A campaign's outcome as the text a user reads: the kill matrix (one line per
target, its verdict first), the verdict counts and the final line naming the
targets that failed the campaign."""

from __future__ import annotations

from campaign.runner import CampaignResult
from campaign.scheduler import FOUND, NOT_RUN, STOPPED, TargetResult

COLUMNS = ("target", "verdict", "found by", "runs", "examples", "s to first failure", "shrunk steps",
           "reduced steps", "why")


def _cells(t: TargetResult) -> tuple[str, ...]:
    def n(v: object) -> str:
        return "-" if v is None else str(v)
    return (t.target.label, t.verdict, t.found or "-", str(t.runs), str(t.examples),
            "-" if t.first_failure_s is None else f"{t.first_failure_s:.1f}", n(t.shrunk_steps), n(t.reduced_steps),
            "" if t.verdict == FOUND else t.why)


def kill_matrix(result: CampaignResult) -> str:
    """One line per target: its verdict (found / not found / clean / not run / error / stopped),
    the properties of its first counterexample, runs, examples, worker seconds
    to the first failure, the shortest counterexample as shrunk and as reduced,
    and why (for any verdict but found)."""
    rows = [COLUMNS] + [_cells(t) for t in result.targets]
    widths = [max(len(r[i]) for r in rows) for i in range(len(COLUMNS))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows)


def counts_line(result: CampaignResult) -> str:
    """``verdicts: F found, N not found, C clean, R not run, E error (of T targets)``,
    with ``, S stopped`` before the parenthesis when targets were stopped (an
    interrupted campaign)."""
    counts = result.counts()
    if not counts.get(STOPPED):
        counts.pop(STOPPED, None)
    n = len(result.targets)
    return "verdicts: " + ", ".join(f"{k} {v}" for v, k in counts.items()) + f" (of {n} target{'s' if n != 1 else ''})"


def final_line(result: CampaignResult) -> str:
    """``campaign succeeded: …`` or ``campaign FAILED: …`` naming every target
    that failed it, grouped by how (the correct target or an implementation
    failed; a flaw not found; not run, with why; an error, with why; stopped by
    an interruption)."""
    flaws = [t for t in result.targets if not t.target.runs_whole_share]
    clean = [t.target.label for t in result.targets if t.target.runs_whole_share]
    if result.ok:
        parts = ([f"{', '.join(clean)} clean"] if clean else []) + \
            ([f"{len(flaws)} of {len(flaws)} flaws found"] if flaws else [])
        return "campaign succeeded: " + "; ".join(parts)
    groups: list[str] = []
    failed = [t for t in result.failures if t.failure == "failed"]
    if failed:
        groups.append("failed: " + ", ".join(f"{t.target.label} ({t.found})" for t in failed))
    not_found = [t.target.label for t in result.failures if t.failure == "not found"]
    if not_found:
        groups.append(f"not found ({len(not_found)}): " + ", ".join(not_found))
    by_why: dict[str, list[str]] = {}
    for t in result.failures:
        if t.failure == NOT_RUN:
            by_why.setdefault(t.why, []).append(t.target.label)
    for why, labels in by_why.items():
        groups.append(f"not run ({len(labels)}): {', '.join(labels)} ({why})")
    for t in result.failures:
        if t.failure == "error":
            groups.append(f"error: {t.target.label} ({t.why})")
    stopped = [t.target.label for t in result.failures if t.failure == STOPPED]
    if stopped:
        groups.append(f"stopped ({len(stopped)}): " + ", ".join(stopped))
    head = "campaign interrupted" if result.interrupted else "campaign FAILED"
    return f"{head}: " + "; ".join(groups) if groups else head

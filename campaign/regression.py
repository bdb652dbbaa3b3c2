"""The regression rule, as a Kafka engineer reads a corpus: a stored
counterexample replayed (``replay_row``) and judged (``regression_failure``).

- a property violation recorded with a protocol **variant** on, or a divergence
  recorded with a **SUT bug** on, is a known flaw put there on purpose: the replay
  must *still fail the same way* (same property; a divergence), so the checker
  keeps its teeth;
- a counterexample of the **correct protocol and correct SUT** (no variant, no
  bug — or a property failure under a SUT bug, which the model alone produced —
  or any harness error) was a real bug: the replay must now find *no* violation
  and no divergence, so a fixed bug stays fixed.

``pytest --replay-corpus`` (``pytest_replicheck.plugin``) and the golden corpus's
tests apply it to every row. A row of Kafka's own classes of a release other than
the one this process's JVM runs (one release a process) is replayed in a Python
process of its own (``check_regression_elsewhere``; this module run as
``python -m campaign.regression CORPUS ID``).
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any, Optional, Sequence

from check.replay import ReplayResult, replay, reproduces
from store.decode import DecodedCounterexample, decode_counterexample
from store.fs import open_corpus
from store.reader import find_by_id, read_counterexamples


def replay_row(row: dict[str, Any]) -> ReplayResult:
    """Replay a corpus ``counterexamples`` row (a dict as ``store.reader`` reads
    it) with the subject it was found with. Raises ``store.codec.TraceDecodeError``
    when it cannot be decoded, ``check.replay.TraceNotEnabled`` when a step is not
    enabled, ValueError when its implementation cannot be loaded."""
    decoded = decode_counterexample(row)
    return replay(decoded.actions, decoded.subject)


class CorpusRegression(AssertionError):
    """A replayed counterexample did not behave as the regression rule expects."""


def regression_failure(decoded: DecodedCounterexample, row: dict[str, Any], result: ReplayResult) -> Optional[str]:
    """Why replaying a counterexample breaks the regression rule (module doc), or
    None when it holds: a counterexample expected to fail (a variant's property, a
    SUT bug's divergence) must fail the same way; any other must not fail."""
    flaws = ", ".join([f"variant {v.name}" for v in sorted(decoded.variants, key=lambda v: v.name)]
                      + [f"SUT bug {b.name}" for b in sorted(decoded.bugs, key=lambda b: b.name)])
    where = f"counterexample {decoded.counterexample_id} ({row.get('test_id')}, {row.get('_file')})"
    if decoded.expected_to_fail:
        if reproduces(result, decoded.prop, decoded.kind):
            return None
        got = "no failure" if not result.failed else \
            f"{', '.join(result.property_names)} after step {result.failed_at}"
        return (f"{where}\nrecorded with {flaws}: expected {decoded.prop} ({decoded.kind}) to still fail, "
                f"but the replay of {len(decoded.actions)} steps found {got}.\n"
                f"recorded violation:\n  {row.get('violation')}\n\nreplay:\n{result.report()}")
    if not result.failed:
        return None
    return (f"{where}\na counterexample of the correct protocol" + (f" (run with {flaws})" if flaws else "")
            + f" fails again: {', '.join(result.property_names)} after step {result.failed_at}\n\n"
            + result.report())


def check_regression(row: dict[str, Any]) -> None:
    """Replay a ``counterexamples`` row and apply the regression rule: raises
    ``CorpusRegression`` saying why it breaks it; ``TraceNotEnabled``,
    ``TraceDecodeError`` or ValueError (``replay_row``) when it cannot be
    replayed."""
    decoded = decode_counterexample(row)
    problem = regression_failure(decoded, row, replay(decoded.actions, decoded.subject))
    if problem is not None:
        raise CorpusRegression(problem)


def check_regression_elsewhere(corpus: str, counterexample_id: str, timeout_s: float = 900) -> None:
    """``check_regression`` of the row ``counterexample_id`` of the corpus at
    ``corpus`` (a folder or a URI), run in a Python process of its own (a Kafka
    release other than the one this process runs). Raises ``CorpusRegression`` with
    that process's report when the rule breaks, RuntimeError with its message when
    the row could not be replayed there."""
    try:
        done = subprocess.run([sys.executable, "-m", "campaign.regression", corpus, counterexample_id],
                              capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"counterexample {counterexample_id}: its replay in a process of its own did not end "
                           f"within {timeout_s:.0f} s") from None
    if done.returncode == 0:
        return
    errors = done.stderr.strip().splitlines()
    text = done.stdout.strip() or (errors[-1] if errors else "")
    if done.returncode == 1:
        raise CorpusRegression(text)
    raise RuntimeError(f"counterexample {counterexample_id}: {text or f'exit status {done.returncode}'}")


def main(argv: Sequence[str]) -> int:
    """``CORPUS ID``: the regression rule on that row. Exit status 0 when it holds,
    1 with the report when it breaks, 2 with one line when the row cannot be
    replayed (or the corpus read)."""
    if len(argv) != 2:
        print("usage: python -m campaign.regression CORPUS COUNTEREXAMPLE_ID")
        return 2
    root, problem = open_corpus(argv[0])
    if root is None:
        print(f"{argv[0]}: {problem}")
        return 2
    try:
        check_regression(find_by_id(read_counterexamples(root, warn=False).rows, argv[1]))
    except CorpusRegression as e:
        print(e)
        return 1
    except Exception as e:   # one line: the row cannot be decoded, replayed or found
        print(f"{type(e).__name__}: {e}")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

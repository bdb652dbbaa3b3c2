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
tests apply it to every row.
"""

from __future__ import annotations

from typing import Any, Optional

from check.replay import ReplayResult, replay, reproduces
from store.decode import DecodedCounterexample, decode_counterexample


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

"""The campaign as pytest tests, one per target, so ``pytest -n auto`` spreads
the targets over workers. Collected only when the campaign runner points pytest
at this module (``pytest --pyargs harness.campaign_tests``) with the targets in
``REPLICHECK_CAMPAIGN_TARGETS`` (their keys: a shard's after ``#``)."""

from __future__ import annotations

import os

import pytest

from harness.campaign import (CORPUS_ENV, TARGETS_ENV, Target, mark_done, run_target, seed_from_env,
                              share_from_env)


def _targets() -> list[str]:
    raw = os.environ.get(TARGETS_ENV, "")
    return [t for t in raw.split(",") if t]


@pytest.mark.parametrize("label", _targets())
def test_campaign(label: str) -> None:
    target = Target.parse(label)
    share, deadline = share_from_env(target)
    try:
        result = run_target(target, share, deadline, os.environ.get(CORPUS_ENV), seed_from_env())
    finally:
        mark_done(target)
    print(f"\nCAMPAIGN {target.key} runs={result.runs} examples={result.examples} "
          f"found={result.found or '-'} shrunk={result.shrunk_steps or '-'} "
          f"reduced={result.reduced_steps or '-'} seconds={result.seconds:.1f}")
    if target.kind == "correct":
        assert result.found is None, f"the correct protocol + SUT failed: {result.found}"
    elif target.kind == "implementation":
        assert result.found is None, f"implementation {target.name} disagreed with the model: {result.found}"
    else:
        assert result.found is not None, (
            f"{target.label} was not found in {result.runs} runs ({result.examples} examples, "
            f"{result.seconds:.0f} s); give the campaign more minutes")

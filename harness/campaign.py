"""The fuzz campaign: the correct protocol and SUT, every protocol variant and
every SUT bug, each as its own series of machine runs, under a wall-clock
budget, exporting every run and every shrunk counterexample to the corpus, each
reduced further (``harness.reduce``) before it is written. Or, alone, an
implementation under test (``implementation:kafka``) in lockstep with the model.

A target is ``"correct"``, ``"variant:NAME"``, ``"bug:NAME"`` or
``"implementation:NAME"`` (NAME one of ``harness.implementations.NAMES``). Each
target gets a fair share of the budget (``minutes * workers / targets``); a
variant or bug target stops at its first (shrunk) counterexample, the correct
target and an implementation's run their whole share. An implementation's
target is split into shards, one per worker (``Target.shard``, written
``implementation:kafka#1`` in the campaign's target list), each drawing its own
examples. The campaign succeeds when the correct target and the implementations
never fail and every catalogued flaw is found.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import time
from typing import Optional

import attrs

TARGETS_ENV = "REPLICHECK_CAMPAIGN_TARGETS"
SHARE_ENV = "REPLICHECK_CAMPAIGN_SHARE_S"
DEADLINE_ENV = "REPLICHECK_CAMPAIGN_DEADLINE"
CORPUS_ENV = "REPLICHECK_CORPUS"
DONE_ENV = "REPLICHECK_CAMPAIGN_DONE_DIR"      # one empty file per finished target
WORKERS_ENV = "REPLICHECK_CAMPAIGN_WORKERS"
SEED_ENV = "REPLICHECK_CAMPAIGN_SEED"         # unset: fresh random seeds

EXAMPLES_PER_RUN = 25    # one machine run: this many examples, then the clock is checked
MIN_SHRINK_S = 10.0      # shrinking gets at least this long, even past the target's share
STEPS_PER_EXAMPLE = 400  # long examples reach the deep flaws (the §3.3, §6.5.1, §6.5.4 shapes)
#: Reduction of each exported counterexample: at most REDUCE_S seconds, cut to what
#: is left of the target's share when the run starts (as the shrink limit is) but not
#: below MIN_REDUCE_S. Most reductions end (1-minimal) within a few seconds
#: (benchmarks/reduce_cost.py).
REDUCE_S = 30.0
MIN_REDUCE_S = 5.0


def reduce_seconds(stop: float) -> float:
    """Seconds each counterexample of a run starting now may be reduced for, given
    the target's ``stop`` (time.time())."""
    return max(MIN_REDUCE_S, min(REDUCE_S, stop - time.time()))


@attrs.frozen
class Target:
    """One line of the campaign: the correct protocol, a variant, a SUT bug, or an
    implementation under test compared with the model (``implementation:kafka``:
    ``kafka_bridge.implementation`` under the Kafka profile, detached at the
    profile's findings, see ``harness.implementations.machine_options``)."""

    kind: str      # "correct" | "variant" | "bug" | "implementation"
    name: str = ""
    #: One of several series of runs of the same target (an implementation's, one
    #: per worker): shards share the label, and so the kill matrix's line and the
    #: corpus's test id, but each draws its own examples (``key`` seeds them).
    shard: int = 0

    @property
    def label(self) -> str:
        return "correct" if self.kind == "correct" else f"{self.kind}:{self.name}"

    @property
    def key(self) -> str:
        """The label, with ``#shard`` after it for a shard other than the first:
        what the campaign's target list holds and each run's seed derives from."""
        return self.label if self.shard == 0 else f"{self.label}#{self.shard}"

    @property
    def runs_whole_share(self) -> bool:
        """Whether the target runs its whole share and succeeds by never failing
        (the correct protocol + SUT; an implementation under test, whose every
        failure is a disagreement with the model), rather than stopping at the
        first counterexample of a flaw put there on purpose."""
        return self.kind in ("correct", "implementation")

    @classmethod
    def parse(cls, label: str) -> "Target":
        """``correct``, ``variant:NAME``, ``bug:NAME`` or ``implementation:NAME``
        (``harness.implementations.NAMES``), optionally followed by ``#SHARD`` (an
        integer >= 0, see ``key``); ValueError names the allowed values."""
        from model import Variant
        from sut.bugs import Bug

        from .implementations import NAMES
        label, hashed, raw_shard = label.partition("#")
        shard = int(raw_shard) if raw_shard.isdigit() else -1
        if hashed and shard < 0:
            raise ValueError(f"campaign target shard must be an integer >= 0 after '#', got {raw_shard!r}")
        if label == "correct":
            return cls("correct", shard=max(shard, 0))
        kind, _, name = label.partition(":")
        allowed = {"variant": [v.name for v in Variant], "bug": [b.name for b in Bug],
                   "implementation": list(NAMES)}
        if kind not in allowed:
            raise ValueError(f"campaign target must be 'correct', 'variant:NAME', 'bug:NAME' or "
                             f"'implementation:NAME', got {label!r}")
        if name not in allowed[kind]:
            raise ValueError(f"unknown {kind} {name!r}; allowed: {', '.join(allowed[kind])}")
        return cls(kind, name, max(shard, 0))

    def machine(self, run: int, seed: Optional[int] = None) -> type:
        """The machine class of the target's ``run``-th run (0-based), with its own
        Hypothesis seed (``@seed``): ``run_seed(seed, …)`` in a seeded campaign, a
        fresh random one otherwise. Always its own: under ``pytest -n`` every worker
        has a forced seed (conftest.py), with which each run would draw the same
        examples as the run before."""
        from hypothesis import seed as hypothesis_seed

        from model import Variant
        from sut.bugs import Bug

        from .machine import machine_for
        tag = (f"{self.kind}_{self.name}" if self.name else "correct") + \
            (f"_shard{self.shard}" if self.shard else "") + f"_run{run}"
        if self.kind == "implementation":
            from .implementations import machine_options
            cls = machine_for(**machine_options(self.name), name=f"Campaign_{tag}")
        elif self.kind == "variant":
            cls = machine_for(variants=frozenset({Variant[self.name]}), name=f"Campaign_{tag}")
        elif self.kind == "bug":
            cls = machine_for(bugs=frozenset({Bug[self.name]}), compare_sut=True, name=f"Campaign_{tag}")
        else:
            cls = machine_for(compare_sut=True, name=f"Campaign_{tag}")
        return hypothesis_seed(secrets.randbits(64) if seed is None else run_seed(seed, self.key, run))(cls)


def run_seed(seed: int, label: str, run: int) -> int:
    """The Hypothesis seed of one run of a seeded campaign (``label``: the
    target's ``key``): every (target, shard, run) draws its own examples, the
    same ones each time the campaign is run with ``seed`` (on the same code:
    Hypothesis also draws on constants of the loaded source)."""
    return int.from_bytes(hashlib.sha256(f"{seed}:{label}:{run}".encode()).digest()[:8], "big")


def all_targets(variants: Optional[list[str]] = None, bugs: Optional[list[str]] = None,
                include_correct: bool = True, implementation: Optional[str] = None,
                shards: int = 1) -> list[Target]:
    """The campaign's targets. With no ``variants`` and no ``bugs`` given: all of
    them; otherwise only those named (each validated). With ``implementation``
    (a name of ``harness.implementations.NAMES``): only its target, in ``shards``
    shards (at least one); ValueError names a bad name, or variants or bugs
    given with it."""
    from model import Variant
    from sut.bugs import Bug
    if implementation is not None:
        target = Target.parse(f"implementation:{implementation}")
        if variants or bugs:
            raise ValueError(f"an implementation campaign runs only {target.label}: give no variants or bugs "
                             f"with it (got {', '.join([*(variants or []), *(bugs or [])])})")
        return [attrs.evolve(target, shard=i) for i in range(max(1, shards))]
    if variants or bugs:
        out = [Target.parse(f"variant:{v}") for v in variants or []] + [Target.parse(f"bug:{b}") for b in bugs or []]
    else:
        out = [Target("variant", v.name) for v in Variant] + [Target("bug", b.name) for b in Bug]
    return ([Target("correct")] if include_correct else []) + out


@attrs.define
class TargetResult:
    target: Target
    runs: int = 0
    examples: int = 0
    found: Optional[str] = None       # property names or "divergence"
    shrunk_steps: Optional[int] = None
    reduced_steps: Optional[int] = None   # the shortest exported counterexample of the run
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.found is None if self.target.runs_whole_share else self.found is not None


def run_target(target: Target, share_s: float, deadline: float, corpus_dir: Optional[str],
               seed: Optional[int] = None) -> TargetResult:
    """Run ``target``'s machine again and again (fresh seeds, or those ``run_seed``
    derives from ``seed``) until its share of the budget is spent, the campaign
    deadline passes, or — for a flaw — it is found. Every run is recorded in the
    corpus when ``corpus_dir`` is given, under the test id ``campaign[LABEL]``
    (the shards of a target share it); a counterexample's row names the
    implementation it was found with, and was reduced by replaying that one
    (``harness.corpus.run_machine``, ``reduce_failure``)."""
    from hypothesis import HealthCheck, settings

    from .corpus import CorpusWriter, run_machine
    from .schema import COUNTEREXAMPLES
    from .failures import HarnessFailure, PropertyViolated, SutDiverged

    result = TargetResult(target)
    stop = min(deadline, time.time() + share_s)
    writer = CorpusWriter(corpus_dir, run_id=os.environ.get("REPLICHECK_CAMPAIGN_RUN_ID") or None) \
        if corpus_dir else None
    t0 = time.monotonic()
    # Shrinking a 400-step example can take minutes: the target's share bounds it
    # too. Hypothesis stops shrinking at this limit (a private setting of its
    # engine, five minutes by default) and reports the smallest failure so far.
    from hypothesis.internal.conjecture import engine
    default_shrink_s = getattr(engine, "MAX_SHRINKING_SECONDS", None)
    try:
        while time.time() < stop:
            if default_shrink_s is not None:
                engine.MAX_SHRINKING_SECONDS = max(MIN_SHRINK_S, stop - time.time())
            machine = target.machine(result.runs, seed)
            run_settings = settings(max_examples=EXAMPLES_PER_RUN, stateful_step_count=STEPS_PER_EXAMPLE,
                                    deadline=None, database=None, derandomize=False,
                                    suppress_health_check=list(HealthCheck))
            result.runs += 1
            try:
                if writer is not None:
                    run_machine(machine, run_settings, writer=writer, test_id=f"campaign[{target.label}]",
                                reduce_s=reduce_seconds(stop))
                else:
                    from hypothesis.stateful import run_state_machine_as_test
                    run_state_machine_as_test(machine, settings=run_settings)
            except (PropertyViolated, SutDiverged, HarnessFailure) as failure:
                # An implementation raising (a Java exception from Kafka's code) is a
                # disagreement like any other; elsewhere a harness error ends the test.
                if isinstance(failure, HarnessFailure) and target.kind != "implementation":
                    raise
                result.found = ",".join(failure.property_names) if isinstance(failure, PropertyViolated) \
                    else failure.kind
                result.shrunk_steps = len(failure.trace)
                if writer is not None and writer.rows[COUNTEREXAMPLES]:
                    result.reduced_steps = min(r["step_count"] for r in writer.rows[COUNTEREXAMPLES])
                if not target.runs_whole_share:
                    break
            finally:
                result.examples += machine.run_stats.examples
    finally:
        if default_shrink_s is not None:
            engine.MAX_SHRINKING_SECONDS = default_shrink_s
        if writer is not None:
            writer.flush()
        result.seconds = time.monotonic() - t0
    return result


def share_from_env(target: Optional[Target] = None) -> tuple[float, float]:
    """(share seconds, deadline epoch) for a campaign test, from the environment.

    A flaw found early leaves its time to the others: a variant or bug target
    starting now gets the larger of its fixed share and the time left divided
    fairly among the targets not yet finished (counted in the done directory).
    A target that runs its whole share (``Target.runs_whole_share``) keeps its
    fixed share."""
    deadline = float(os.environ.get(DEADLINE_ENV, time.time() + 60))
    share = float(os.environ.get(SHARE_ENV, max(1.0, deadline - time.time())))
    done_dir = os.environ.get(DONE_ENV)
    total = len([t for t in os.environ.get(TARGETS_ENV, "").split(",") if t])
    if done_dir and total and (target is None or not target.runs_whole_share):
        remaining = max(1, total - len(os.listdir(done_dir)))
        workers = int(os.environ.get(WORKERS_ENV, "1"))
        share = max(share, (deadline - time.time()) * min(workers, remaining) / remaining)
    return share, deadline


def seed_from_env() -> Optional[int]:
    """The campaign seed from ``REPLICHECK_CAMPAIGN_SEED`` (None when unset or
    empty); ValueError naming the variable for anything but an integer >= 0."""
    raw = os.environ.get(SEED_ENV, "").strip()
    if not raw:
        return None
    try:
        seed = int(raw)
    except ValueError:
        seed = -1
    if seed < 0:
        raise ValueError(f"{SEED_ENV} must be an integer >= 0, got {raw!r}")
    return seed


def mark_done(target: Target) -> None:
    """Record that ``target`` finished, for ``share_from_env``."""
    done_dir = os.environ.get(DONE_ENV)
    if done_dir:
        open(os.path.join(done_dir, target.key.replace(":", "_").replace("#", "_")), "w").close()

"""The fuzz campaign's targets.

A target is ``"correct"``, ``"profile:NAME"`` (NAME a profile of
``model.PROFILES`` other than the chapters'), ``"variant:NAME"``, ``"bug:NAME"``
or ``"implementation:NAME"`` (NAME one of ``check.implementations.NAMES``). A
variant or bug target searches for its flaw and stops at its first
counterexample; the correct target, a profile's and an implementation's run for
the whole budget and succeed by never failing (``Target.runs_whole_share``). Each names
its ``Subject`` (``Target.subject``) and the machine class of each of its runs.
"""

from __future__ import annotations

import hashlib
import secrets
from typing import Optional

import attrs
from hypothesis import seed as hypothesis_seed

from check.implementations import NAMES, subject_for
from check.machine import machine_for
from check.subject import Subject
from model import CHAPTERS, PROFILES, Variant
from store.schema import campaign_test_id
from sut.bugs import DOCS, Bug

#: The profiles a ``profile:NAME`` target searches under: every one but the chapters' (``correct``'s).
OTHER_PROFILES = tuple(p for p in PROFILES if p != CHAPTERS)


@attrs.frozen
class Target:
    """One line of the campaign: the correct protocol, the bundled SUT under
    another profile's rules (``profile:kafka-4.4.0``: Kafka's rules, detached at
    the profile's findings as Kafka's own code is), a variant, a SUT bug, or an
    implementation under test compared with the model (``implementation:kafka``:
    ``kafka_bridge.implementation`` under the Kafka profile, detached at the
    profile's findings, see ``check.implementations.subject_for``)."""

    kind: str      # "correct" | "profile" | "variant" | "bug" | "implementation"
    name: str = ""
    #: One of several series of runs of the same target running at once (the
    #: scheduler starts one when a worker has nothing else to do, say every worker
    #: of an implementation's campaign): shards share the label, and so the kill
    #: matrix's line and the corpus's test id, but each draws its own examples
    #: (``key`` seeds them).
    shard: int = 0

    @property
    def label(self) -> str:
        return "correct" if self.kind == "correct" else f"{self.kind}:{self.name}"

    @property
    def key(self) -> str:
        """The label, with ``#shard`` after it for a shard other than the first:
        what each run's seed derives from."""
        return self.label if self.shard == 0 else f"{self.label}#{self.shard}"

    @property
    def test_id(self) -> str:
        """The corpus's ``test_id`` of the target's runs and counterexamples:
        ``campaign[LABEL]`` (every shard's, ``store.schema.campaign_test_id``)."""
        return campaign_test_id(self.label)

    @property
    def runs_whole_share(self) -> bool:
        """Whether the target runs for the whole budget and succeeds by never
        failing (the correct protocol + SUT, under any profile; an implementation
        under test, whose every failure is a disagreement with the model), rather
        than stopping at the first counterexample of a flaw put there on purpose."""
        return self.kind in ("correct", "profile", "implementation")

    @classmethod
    def parse(cls, label: str) -> "Target":
        """``correct``, ``profile:NAME`` (``OTHER_PROFILES``), ``variant:NAME``,
        ``bug:NAME`` or ``implementation:NAME`` (``check.implementations.NAMES``),
        optionally followed by ``#SHARD`` (an integer >= 0, see ``key``);
        ValueError names the allowed values."""
        label, hashed, raw_shard = label.partition("#")
        shard = int(raw_shard) if raw_shard.isdigit() else -1
        if hashed and shard < 0:
            raise ValueError(f"campaign target shard must be an integer >= 0 after '#', got {raw_shard!r}")
        if label == "correct":
            return cls("correct", shard=max(shard, 0))
        kind, _, name = label.partition(":")
        allowed = {"profile": list(OTHER_PROFILES), "variant": [v.name for v in Variant],
                   "bug": [b.name for b in Bug], "implementation": list(NAMES)}
        if kind not in allowed:
            raise ValueError(f"campaign target must be 'correct', 'profile:NAME', 'variant:NAME', 'bug:NAME' or "
                             f"'implementation:NAME', got {label!r}")
        if name not in allowed[kind]:
            raise ValueError(f"unknown {kind} {name!r}; allowed: {', '.join(allowed[kind])}")
        return cls(kind, name, max(shard, 0))

    @property
    def subject(self) -> Subject:
        """What the target puts under test: the bundled SUT compared with the model
        under a profile's rules, detached at the profile's findings (a property its
        known findings break: ``Subject.detach_at_findings``), a variant in the model alone, a SUT bug
        in the bundled SUT (under the rules its code path needs, ``sut.BugDoc.needs``, then compared
        with the model only), an implementation as ``check.implementations.
        subject_for`` has it, the correct protocol and SUT otherwise."""
        if self.kind == "implementation":
            return subject_for(self.name)
        if self.kind == "profile":
            return Subject(compare=True, profile=self.name, detach_at_findings=True)
        if self.kind == "variant":
            return Subject(variants=frozenset({Variant[self.name]}))
        if self.kind == "bug":
            # A code path that runs only under some of Kafka's rules is searched with them on,
            # comparing the SUT with the model only: the model is the correct protocol, so its
            # properties can fail there only on the rules' own findings about Kafka (the ELR
            # feature level's, finding 8), never on the SUT's bug.
            needs = DOCS[Bug[self.name]].needs
            return Subject(bugs=frozenset({Bug[self.name]}), compare=True, rules=needs or None,
                           check_properties=not needs)
        return Subject(compare=True)

    def machine(self, run: int, seed: Optional[int] = None, known: frozenset[str] = frozenset()) -> type:
        """The machine class of the target's ``run``-th run (0-based), with its own
        Hypothesis seed (``@seed``): ``run_seed(seed, …)`` in a seeded campaign, a
        fresh random one otherwise. Always its own: under ``pytest -n`` every worker
        has a forced seed (conftest.py), with which each run would draw the same
        examples as the run before. ``known``: the disagreements the run goes on
        past (``Subject.known``)."""
        tag = (f"{self.kind}_{self.name}" if self.name else "correct") + \
            (f"_shard{self.shard}" if self.shard else "") + f"_run{run}"
        subject = self.subject if not known else attrs.evolve(self.subject, known=known)
        cls = machine_for(subject, name=f"Campaign_{tag}")
        return hypothesis_seed(secrets.randbits(64) if seed is None else run_seed(seed, self.key, run))(cls)


def run_seed(seed: int, label: str, run: int) -> int:
    """The Hypothesis seed of one run of a seeded campaign (``label``: the
    target's ``key``): every (target, shard, run) draws its own examples, the
    same ones each time the campaign is run with ``seed`` (on the same code:
    Hypothesis also draws on constants of the loaded source, see ``preload``)."""
    return int.from_bytes(hashlib.sha256(f"{seed}:{label}:{run}".encode()).digest()[:8], "big")


def all_targets(variants: Optional[list[str]] = None, bugs: Optional[list[str]] = None,
                include_correct: bool = True, implementation: Optional[str] = None,
                correct_only: bool = False) -> list[Target]:
    """The campaign's targets. With no ``variants`` and no ``bugs`` given: all of
    them, the correct protocol under every other profile too (``profile:NAME``,
    with ``include_correct``); otherwise only those named (each validated), and
    the correct protocol with ``include_correct``. With ``implementation``
    (a name of ``check.implementations.NAMES``): only its target. With
    ``correct_only``: only the correct protocol + SUT (a long search for new
    bugs). ValueError names a bad name, or variants or bugs given with an
    implementation or ``correct_only``."""
    if correct_only:
        if variants or bugs or implementation or not include_correct:
            raise ValueError("correct_only runs only the correct protocol + SUT: give no variants, bugs, "
                             "implementation or include_correct=False with it")
        return [Target("correct")]
    if implementation is not None:
        target = Target.parse(f"implementation:{implementation}")
        if variants or bugs:
            raise ValueError(f"an implementation campaign runs only {target.label}: give no variants or bugs "
                             f"with it (got {', '.join([*(variants or []), *(bugs or [])])})")
        return [target]
    if variants or bugs:
        out = [Target.parse(f"variant:{v}") for v in variants or []] + [Target.parse(f"bug:{b}") for b in bugs or []]
        correct = [Target("correct")]
    else:
        out = [Target("variant", v.name) for v in Variant] + [Target("bug", b.name) for b in Bug]
        correct = [Target("correct")] + [Target("profile", p) for p in OTHER_PROFILES]
    return (correct if include_correct else []) + out

"""What is under test, as one value: ``Subject``.

A subject names everything that decides what a check compares and judges: the
configuration (fixed, for a replay or a reduction) or the strategy configurations
are drawn from (profile, rules, variants, unclean leader election), the SUT bugs
switched on, the implementation compared with the model, whether the properties
are checked, whether a run detaches at the profile's findings, and the fault
budget. It is built once at a front door (the CLI, the pytest plugin, a campaign's
``WorkUnit``), carried by the lockstep, the machine, the explorer, replay and
reduction, and stored with every corpus row (``store.rows``), from which replay
builds it again (``store.reader``).

A plain value: it builds nothing. ``check.implementations.factory`` turns its
implementation into something that runs.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Union

import attrs

from model import CHAPTERS, KAFKA_RELEASE, PROFILES, Config, Rule, Variant, release_number

#: The implementation under test: None (the bundled SUT, ``sut.Cluster`` with the
#: subject's bugs), a name (``"kafka"``: Apache Kafka's own classes of the pinned
#: release, ``kafka_bridge.implementation``; ``"kafka@X"``: those of release X;
#: ``"module:qualname"`` of an importable factory), or a factory
#: ``Config -> implementation`` itself.
Implementation = Union[None, str, Callable[[Config], Any]]

#: The short name of Kafka's own classes in the loop.
KAFKA = "kafka"
#: Where that implementation's factory lives (``module:qualname``).
KAFKA_FACTORY = "kafka_bridge:implementation"


def kafka_name(release: str) -> str:
    """The name of Kafka ``release``'s own classes: ``"kafka"`` for the pinned
    ``model.KAFKA_RELEASE``, ``"kafka@X"`` for release X."""
    return KAFKA if release == KAFKA_RELEASE else f"{KAFKA}@{release}"


def kafka_release(name: Optional[str]) -> Optional[str]:
    """The Kafka release a name of Kafka's own classes runs (``"kafka"``: the
    pinned one; ``"kafka@X.Y.Z"``: X.Y.Z), None for any other name. Only the
    form is read: ``model.kafka_release_error`` says whether the bridge is built
    for it."""
    if name == KAFKA:
        return KAFKA_RELEASE
    head, at, release = (name or "").partition("@")
    return release if head == KAFKA and at and release_number(release) is not None else None


def implementation_name(implementation: Implementation) -> Optional[str]:
    """The name a corpus row records for ``implementation``: None for the bundled
    SUT, ``"kafka"`` for Kafka's own classes (``kafka_bridge.implementation``, the
    pinned release's: a subject of another release names it ``"kafka@X"``),
    ``"module:qualname"`` of any other factory (a name given as one is returned as
    it is)."""
    if implementation is None or isinstance(implementation, str):
        return implementation
    name = f"{implementation.__module__}:{implementation.__qualname__}"
    return KAFKA if name == KAFKA_FACTORY else name


def reports_properties(implementation: Implementation) -> bool:
    """Whether a property violation is a failure of ``implementation``'s runs
    (None, the bundled SUT: yes). Not for Kafka's own classes
    (``check.implementations.subject_for``): only a disagreement with the model
    is, so a replay of one of its disagreements checks no property, as a run with
    the properties off found it (a property the Kafka profile's findings break on
    the way would stop the replay before it)."""
    return kafka_release(implementation_name(implementation)) is None


def _check_profile(_: Any, attribute: Any, value: str) -> None:
    if value not in PROFILES:
        raise ValueError(f"{attribute.name} must be one of {tuple(PROFILES)}, got {value!r}")


def _check_budget(_: Any, attribute: Any, value: Optional[int]) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
        raise ValueError(f"{attribute.name} must be an integer >= 0 or None, got {value!r}")


@attrs.frozen
class Subject:
    """What is under test.

    config: the configuration every check of this subject starts from (a replay,
      a reduction), or None: each example draws one (``check.strategies.configs``)
      from ``profile``, ``rules``, ``variants`` and ``unclean_leader_election``.
    variants: protocol flaws switched into the model (``model.Variant``); a fixed
      ``config`` carries them too (``at``).
    bugs: SUT bugs switched on (``sut.Bug``); with another implementation they
      only name the run.
    implementation: see ``Implementation``.
    compare: whether an implementation is compared with the model at all; None:
      exactly when an implementation is named or no variant is on (a variant
      changes the model only, and the SUT implements the correct protocol). See
      ``compares``.
    profile, rules: whose rules the drawn configurations follow
      (``model.PROFILES``; rules None: the profile's).
    unclean_leader_election: None draws it per example.
    lossy_budget: lossy unclean shutdowns per example (None: MinISR - 1, the
      fault budget of §6.2).
    check_properties: False compares the implementation with the model only (a
      property the profile's known findings break is not what the run is about).
    only_properties: None checks every property; a set of names checks those
      only (the liveness goals are judged as ever): a reduction's screening
      replay (``check.reduce``), never a search.
    detach_at_findings: a property failing, or a liveness goal after healing,
      detaches the implementation and the model goes on alone
      (``check.lockstep.LockStep``) instead of failing.
    known: the signatures (``check.signature``) of disagreements the run goes on
      past: where the implementation disagrees so, it is detached and the model
      goes on alone, its properties still checked (a campaign's known
      disagreements, and those it has found already).

    Raises ValueError (naming the field and what it allows) for an unknown
    profile or a negative fault budget."""

    config: Optional[Config] = None
    variants: frozenset[Variant] = attrs.field(default=frozenset(), converter=frozenset)
    bugs: frozenset = attrs.field(default=frozenset(), converter=frozenset)
    implementation: Implementation = None
    compare: Optional[bool] = None
    profile: str = attrs.field(default=CHAPTERS, validator=_check_profile)
    rules: Optional[frozenset[Rule]] = attrs.field(
        default=None, converter=attrs.converters.optional(frozenset))
    unclean_leader_election: Optional[bool] = None
    lossy_budget: Optional[int] = attrs.field(default=None, validator=_check_budget)
    check_properties: bool = True
    only_properties: Optional[frozenset[str]] = attrs.field(
        default=None, converter=attrs.converters.optional(frozenset))
    detach_at_findings: bool = False
    known: frozenset[str] = attrs.field(default=frozenset(), converter=frozenset)

    @classmethod
    def at(cls, config: Config, **fields: Any) -> "Subject":
        """The subject whose checks start from ``config``: its variants, profile and
        rules are the config's, with ``fields``'s variants added to the config
        (a replay's ``variants``)."""
        variants = frozenset(fields.pop("variants", ())) | config.variants
        if variants != config.variants:
            config = attrs.evolve(config, variants=variants)
        return cls(config=config, variants=variants, profile=config.profile, rules=config.rules, **fields)

    def with_config(self, config: Config) -> "Subject":
        """This subject, starting from ``config`` instead (a smaller configuration
        reduction tries, the configuration an example drew)."""
        return attrs.evolve(self, config=config, variants=config.variants, profile=config.profile,
                            rules=config.rules)

    @property
    def compares(self) -> bool:
        """Whether an implementation is compared with the model (``compare``, or
        its default: an implementation is named, or no variant is on)."""
        if self.compare is not None:
            return self.compare
        return self.implementation is not None or not self.variants

    @property
    def implementation_name(self) -> Optional[str]:
        """``implementation_name(self.implementation)``."""
        return implementation_name(self.implementation)

    @property
    def label(self) -> str:
        """A short name for the subject: its variants and bugs (``correct``
        without), its implementation and a profile other than the chapters'."""
        parts = sorted(v.name for v in self.variants) + sorted(getattr(b, "name", str(b)) for b in self.bugs)
        label = "+".join(parts) or "correct"
        if self.implementation is not None:
            label += f"@{self.implementation_name}"
        return label if self.profile == CHAPTERS else f"{label}[{self.profile}]"

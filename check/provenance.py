"""Where a machine run's choices came from: its seed and its Hypothesis settings
profile, read from Hypothesis (the ``@seed`` a campaign gives each run, the seed
``--hypothesis-seed`` forced, the profile loaded). Some of it sits behind
Hypothesis's private names; this module is the one place that reads them."""

from __future__ import annotations

from typing import Any, Optional

from hypothesis import core
from hypothesis import settings as current_settings


def hypothesis_seed(settings: Any = None, machine_cls: Any = None) -> Optional[str]:
    """The seed of a run: the machine class's own (``@seed``, as the fuzz campaign
    gives every run), else the one Hypothesis was forced to (``--hypothesis-seed``,
    the per-worker seed of the root conftest), or None: random runs, and
    derandomized ones (``settings`` or the current profile), where a derandomized
    run's choices do not depend on it."""
    own = getattr(machine_cls, "_hypothesis_internal_use_seed", None)  # where @seed puts it
    if own is not None:
        return str(own)
    if getattr(settings if settings is not None else current_settings.default, "derandomize", False):
        return None
    seed = getattr(core, "global_force_seed", None)
    return None if seed is None else str(seed)


def hypothesis_profile() -> str:
    """The name of the Hypothesis settings profile loaded ("default" when none)."""
    try:
        return current_settings.get_current_profile_name() or "default"
    except Exception:  # pragma: no cover - older Hypothesis
        return str(getattr(current_settings, "_current_profile", None) or "default")

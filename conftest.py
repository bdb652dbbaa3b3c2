"""Hypothesis profiles and per-worker seeds for the whole suite.

Profiles (``--hypothesis-profile NAME``): ``dev`` (default) keeps ``make test``
under ten minutes on two cores; ``ci`` is the same budget derandomized and
without an example database; ``fuzz`` runs long campaigns.
"""

from __future__ import annotations

import hashlib
import os

import pytest
from hypothesis import HealthCheck, Phase, settings

# No explain phase: it replays a failing machine many times (about 30 s) to
# annotate lines, while the failure report already names the violation.
_COMMON = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                                      HealthCheck.data_too_large],
               phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink])

settings.register_profile("dev", max_examples=40, stateful_step_count=60, **_COMMON)
settings.register_profile("ci", max_examples=40, stateful_step_count=60, derandomize=True, database=None,
                          print_blob=True, **_COMMON)
settings.register_profile("fuzz", max_examples=2_000, stateful_step_count=400, **_COMMON)
settings.load_profile(os.environ.get("REPLICHECK_PROFILE", "dev"))

# The counterexample corpus (``--corpus-dir``, ``--no-corpus``) and ``--replay-corpus`` come
# from the installed package's pytest plugin (the ``pytest11`` entry point ``pytest_replicheck.plugin``).


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Under ``pytest -n N`` give each worker its own Hypothesis seed, derived from
    the run's seed (``--hypothesis-seed``, else the xdist run id) and the worker id,
    so workers running the same machine explore different interleavings."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    workerinput = getattr(config, "workerinput", None)
    if worker is None or workerinput is None:
        return
    run_seed = config.getoption("hypothesis_seed", None) or workerinput.get("testrunuid", "")
    digest = hashlib.sha256(f"{run_seed}:{worker}".encode()).hexdigest()
    config.option.hypothesis_seed = str(int(digest[:12], 16))

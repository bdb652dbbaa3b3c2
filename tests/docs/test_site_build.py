"""The site builds strictly: a broken link or anchor, a page missing from the
navigation, or any other warning fails the build (as ``make docs`` in CI)."""

from __future__ import annotations

import os
import subprocess
import sys

from docs_support import ROOT


def test_mkdocs_build_strict(tmp_path):
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true"}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet",
                           "-f", str(ROOT / "mkdocs.yml"), "-d", str(tmp_path / "site")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    for page in ("index.html", "results/index.html", "reference/kafka-rules/index.html",
                 "reference/cli/index.html", "reference/corpus-schema/index.html"):
        assert (tmp_path / "site" / page).is_file(), page

"""mkdocs-gen-files script: writes the reference pages (``gen_reference.PAGES``)
into the site at build time, from the code's own tables."""

from __future__ import annotations

import sys
from pathlib import Path

import mkdocs_gen_files

sys.path.insert(0, str(Path(__file__).resolve().parent))

import gen_reference  # noqa: E402

for page, make in gen_reference.PAGES.items():
    with mkdocs_gen_files.open(page, "w") as out:
        out.write(make())

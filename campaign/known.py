"""Known disagreements: the signatures (``check.signature``) a campaign goes on
past (``replicheck fuzz --known FILE``).

A run that meets one detaches the implementation there, counts the event
(``known disagreement: SIGNATURE`` among its coverage events) and searches on with
the model alone; a known disagreement fails no target. So a campaign on a release
with a disagreement already classified finds the ones behind it instead of the
same one again. FILE is either

- a text file of signatures, one a line, as ``replicheck replay CORPUS --list``
  prints them (``SutDiffersFromModel|divergence|outcome.acknowledged``); blank
  lines and lines starting with ``#`` are skipped; or
- a corpus (a folder, or a URI: ``store.fs``): the signatures of its
  disagreements (its rows of kind ``divergence`` and ``harness_error``).
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

from store.errors import CorpusWarning
from store.fs import is_uri, open_corpus
from store.reader import read_counterexamples

#: The finding kinds a run can go on past: a property failure is the model's own.
DISAGREEMENTS = ("divergence", "harness_error")

_ALLOWED = ("allowed: one signature a line as `replicheck replay CORPUS --list` prints them, "
            f"PROPERTY|KIND|TEMPLATE with KIND one of {', '.join(DISAGREEMENTS)}; or a corpus folder")


class KnownError(ValueError):
    """The known-disagreements file cannot be used: one line naming it, the line
    and what is allowed."""


def parse_known(text: str, where: str = "--known") -> frozenset[str]:
    """The signatures of a known-disagreements text (module doc); KnownError names
    the first line that is not one."""
    out = set()
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        prop, kind, template = (line.split("|", 2) + ["", ""])[:3]
        if not (prop and template and kind in DISAGREEMENTS):
            raise KnownError(f"{where}:{number}: {line[:80]!r} is not a disagreement's signature; {_ALLOWED}")
        out.add(line)
    return frozenset(out)


def load_known(path: str | os.PathLike) -> frozenset[str]:
    """The signatures in ``path`` (module doc): a text file, a corpus folder or a
    corpus URI. KnownError (one line) when it is none of these or a line is not a
    signature; a corpus file that cannot be read is skipped, as every reader does."""
    where = f"--known {path}"
    if is_uri(path) or Path(path).is_dir():
        root, problem = open_corpus(path)
        if root is None:
            raise KnownError(f"{where}: {problem}")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CorpusWarning)
            rows = read_counterexamples(root, warn=False).rows
        return frozenset(r["signature"] for r in rows if r.get("kind") in DISAGREEMENTS)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise KnownError(f"{where}: cannot be read ({type(e).__name__}: {e}); {_ALLOWED}") from None
    return parse_known(text, where)

"""The store's errors: a corpus file skipped or not written (``CorpusWarning``),
a request the corpus cannot answer (``CorpusError``)."""

from __future__ import annotations


class CorpusWarning(UserWarning):
    """A corpus file was skipped (corrupt, truncated, newer schema) or could not be written."""


class CorpusError(Exception):
    """A corpus request cannot be answered (no corpus, unknown id or signature)."""


class CounterexampleNotFound(CorpusError, LookupError):
    pass

"""The signature of a failure: the corpus's dedup key, and the name a campaign
gives a disagreement it already knows (``Subject.known``).

A signature is ``"<property>|<kind>|<template>"``, where the template is the
failure's text with everything run-specific normalized away (``normalize``):

1. every integer (broker id, offset, epoch, value, count) becomes ``N``;
2. every bracketed list (an ISR, an ELR, a replica list) becomes ``[…]``;
3. a comma-separated run of ``N``-items (``N=N, N=N`` replica LEOs) becomes ``N…``.

What is kept is the property and the *shape* of the violation: which check
failed and how (e.g. "replica N is in the controller's ISR … but lacks committed
offset N" vs "… ELR …"; a missing record vs a different record). For the
template: a property violation uses its first violation message of that
property; a divergence uses the field path of its first difference, indexes
normalized (``state.brokers[N].replica.hwm``) — or, for a disagreement on
enablement, its normalized line (``enablement of ProposeIsrExpand(leader=N,
follower=N): model=refused sut=enabled``), or, when the SUT refused an action
the model took, the action class and the normalized reason; a harness error
uses the exception type and its normalized message.
"""

from __future__ import annotations

import re

_BRACKETS = re.compile(r"\[[^\[\]]*\]")
_INT = re.compile(r"\d+")
_N_RUN = re.compile(r"N(?:[=:]N)*(?:, N(?:[=:]N)*)+")


def normalize(text: str) -> str:
    """``text`` with replica ids, offsets, epochs and sets normalized away (module doc)."""
    s = _BRACKETS.sub("[…]", text)
    s = _INT.sub("N", s)
    s = _BRACKETS.sub("[…]", s)
    return _N_RUN.sub("N…", s)


def normalize_path(path: str) -> str:
    """A diff field path with its indexes normalized: ``state.brokers[N].replica.hwm``."""
    return _INT.sub("N", path)


def signature(prop: str, kind: str, template_source: str, path: bool = False) -> str:
    """The key ``"<property>|<kind>|<normalized template>"`` (``kind``: a finding
    kind, ``check.finding.FINDING_KINDS``; ``path``: the template is a diff field
    path, whose indexes only are normalized)."""
    text = template_source.strip()
    return f"{prop}|{kind}|{normalize_path(text) if path else normalize(text)}"

"""The ``replicheck`` command: ``fuzz`` (the campaign, its progress, kill matrix
and report), ``replay`` (``replicheck_cli.replay``) and ``report`` (``spark_reports.cli``).

The one package that sees every layer: it imports ``harness`` and
``spark_reports``, and neither imports it.
"""

from __future__ import annotations

from .commands import main

__all__ = ["main"]

"""Fixtures of the ``replicheck`` command's tests."""

from __future__ import annotations

import pytest

import replicheck_cli.fuzz


@pytest.fixture
def no_campaign(monkeypatch):
    """Any campaign started fails the test: the errors under test come before the runs."""
    def started(*args, **kwargs):
        raise AssertionError("a campaign was started")
    monkeypatch.setattr(replicheck_cli.fuzz, "run_campaign", started)

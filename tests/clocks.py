"""A clock for a module's ``time`` (monkeypatched), which jumps ahead when a test
says so: the end of a share or a budget comes at a step of the test, however
slowly a loaded machine gets there."""

from __future__ import annotations

import time


class JumpingClock:
    """``time.time``, ``time.monotonic`` and ``time.sleep``, the two clocks
    ``by`` seconds ahead once ``jump()`` was called."""

    def __init__(self, by: float) -> None:
        self.by, self.offset = by, 0.0

    def jump(self) -> None:
        self.offset = self.by

    def time(self) -> float:
        return time.time() + self.offset

    def monotonic(self) -> float:
        return time.monotonic() + self.offset

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)

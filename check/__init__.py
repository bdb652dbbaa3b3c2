"""The check: a subject under test in, findings out.

The one lockstep check (``check.lockstep``) pairs the reference model with an
implementation under test; the Hypothesis machine (``check.machine``), the
explorer (``check.explore``), replay (``check.replay``), reduction
(``check.reduce``) and random walks (``check.random_walk``) all drive it. The
check knows no corpus store and no campaign fleet: ``store`` and ``campaign``
sit above it. Import from the modules; this package loads nothing, so that the
store can take the check's value types without the machine.
"""

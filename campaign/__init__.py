"""The campaign fleet: targets and work units (``campaign.targets``,
``campaign.unit``), the scheduler, local worker processes or Spark tasks, and
the recording of each run's findings in the store. It composes the check and the
store; the front doors (``replicheck_cli``, ``pytest_replicheck``) sit on top.
Import from the modules; this package loads nothing.
"""

"""replicheck's pytest plugin (``pytest_replicheck.plugin``): the counterexample
corpus for every machine test, ``--replay-corpus`` and ``--implementation``."""

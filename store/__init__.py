"""The counterexample store: the Parquet schema (``store.schema``), the trace
codec (``store.codec``), corpus locations and file systems (``store.fs``), the
durable writer and the tolerant readers.

The store imports the model, the SUT's bug catalogue and only the check's value
types; it never runs a check. Import from the modules; this package loads
nothing (``store.schema`` is read by Spark's driver without the model).
"""

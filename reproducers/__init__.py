"""Findings about Kafka's code as JUnit reproducers: a replicheck trace replayed with
the implementation "kafka" (``check.lockstep``), the requests the bridge made of
Kafka's controller recorded (``kafka_bridge.calls``), and written out as a
standalone JUnit 5 test of Kafka's own classes with its Maven project
(``generate``, ``project``). ``findings`` lists the findings that have one.

Sits beside ``campaign``: it composes the check and the Kafka bridge; only the
front doors import it.
"""

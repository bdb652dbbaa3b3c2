"""A replicheck trace as a JUnit 5 test of Kafka's controller managers.

``generate(config, trace, ...)`` replays ``trace`` with the implementation "kafka"
in lockstep with the model (``check.lockstep``, properties not checked: the
implementation takes every step), recording each request the bridge makes of
Kafka's controller (``kafka_bridge.calls``), until the trace ends or the first
verdict. The test it writes makes the same requests to the same Kafka managers,
replays the same records, and then asserts what the row shows:

- a Java exception from Kafka's controller: ``assertThrows`` on the request
  that threw it, with its message;
- otherwise the controller's state (the partition's registration, each broker's
  registration) as the model holds it at the end. Where Kafka agreed with the
  model all the way (a finding: a property broken under Kafka's rules), the test
  passes while the defect is there. Where Kafka disagreed, it fails at that
  assertion, Kafka's value beside the model's.

``NotReproducible`` when the row's failure does not show in Kafka's controller:
a disagreement in a broker's replica (Kafka's ``Partition``, not driven here), a
model crash, a configuration Kafka's code does not implement.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import attrs

import properties
from check.lockstep import LockStep
from check.describe import diff, first_difference_path
from check.subject import Subject
from check.verdict import Verdict
from model import KAFKA_RELEASE, Action, ClusterState, Config, observe

from kafka_bridge import KafkaUnavailable, implementation, not_applicable, releases
from kafka_bridge.calls import CallLog, recording
from kafka_bridge.junit import call_statements, replica_statements, source
from kafka_bridge.render import JavaSource, int_array, long_array

from .template import test_class


class NotReproducible(ValueError):
    """The row's failure does not show in Kafka's controller (the reason says why)."""


class ReproducerUnavailable(RuntimeError):
    """Kafka's classes cannot be loaded (``kafka_bridge.KafkaUnavailable``'s message)."""


@attrs.frozen
class Reproducer:
    """A generated JUnit test: its class ``name``, Java ``text``, how many of the
    trace's steps it takes, ``expected``: "pass" (the test passes while the defect
    is there) or "fail" (a disagreement: it fails at the row's step), and
    ``replicas``: whether it drives brokers' replicas (Kafka's ``Partition``, whose
    fixture needs ``project.PARTITION_FIXTURE_SINCE``)."""

    name: str
    text: str
    steps: int
    expected: str
    replicas: bool = False


@attrs.frozen
class _Run:
    log: CallLog
    lockstep: LockStep
    verdict: Optional[Verdict]
    steps: int


@attrs.frozen
class Recorded:
    """A trace replayed and recorded once (``record``), to be written for any release
    (``render``): its config and trace, the run, and what the test is expected to do
    ("pass" | "fail") with the sentence its doc says of it."""

    config: Config
    trace: tuple
    run: _Run
    expected: str
    outcome: str
    thrown: bool

    @property
    def brokers(self) -> tuple[int, ...]:
        """The brokers whose replica (Kafka's ``Partition``) the test drives."""
        return tuple(sorted({c.broker for c in self.run.log.calls if c.broker is not None}))


def _record(config: Config, trace: Sequence[Action]) -> _Run:
    log = CallLog()
    with recording(log):   # a replica built during a step (a move to a new broker) records too
        lockstep = LockStep(Subject.at(config, implementation=implementation, check_properties=False))
        verdict = lockstep.check()
        taken = 0
        for action in trace:
            if verdict is not None:
                break
            log.step(f"{taken + 1}. {action!r}")
            verdict = lockstep.step(action)
            taken += 1
    return _Run(log, lockstep, verdict, taken)


def _asserted_differences(state: ClusterState, implementation: Any) -> list[str]:
    """The paths where Kafka's code and the model differ in what a reproducer asserts:
    the controller's partition registration and broker registrations, each replica's
    HWM and log end offset; from their observations, as the lockstep compares them
    (empty: nowhere)."""
    model, kafka = observe(state), implementation.observe()
    lines = diff(model.partition, kafka.partition, root="partition") + \
        diff(model.registrations, kafka.registrations, root="registrations")
    for m, k in zip(model.brokers, kafka.brokers):
        if m.replica is not None and k.replica is not None:
            lines += diff((m.replica.hwm, len(m.replica.log)), (k.replica.hwm, len(k.replica.log)),
                          root=f"broker {m.id}'s (HWM, log end offset)")
    return [first_difference_path([line]) or line for line in lines]


def _outcome(run: _Run) -> tuple[str, str, bool]:
    """("pass" | "fail", the sentence the test's doc says of it, whether it ends in
    Kafka's exception), or NotReproducible."""
    v = run.verdict
    if v is not None and v.kind == "harness_error":
        last = run.log.steps[-1].calls[-1] if run.log.steps[-1].calls else None
        if last is None or last.thrown is None:
            raise NotReproducible(f"step {run.steps} fails outside Kafka's code: {v.text.splitlines()[0]}")
        return "pass", f"Kafka's code throws {last.thrown.getClass().getSimpleName()} at step {run.steps}.", True
    if v is None:
        broken = sorted({x.property for x in properties.check_all(run.lockstep.state)})
        said = f" ({', '.join(broken)} broken)" if broken else ""
        return "pass", f"Kafka's code agrees with the model at every step; the state asserted is the " \
                       f"finding's{said}.", False
    differences = _asserted_differences(run.lockstep.state, run.lockstep.implementation)
    if not differences:
        raise NotReproducible(f"the disagreement at step {run.steps} ({v.template}) is not in the state a "
                              f"reproducer asserts (the controller's registrations, each replica's HWM and log end "
                              f"offset)")
    return "fail", f"Kafka's code disagrees with the model at step {run.steps} " \
                   f"({', '.join(differences)}): the test fails there, the model's value expected.", False


def _set(ids: frozenset) -> str:
    return f"Set.of({', '.join(str(i) for i in sorted(ids))})"


def state_assertions(state: ClusterState) -> list[str]:
    """The model's controller state as JUnit assertions on Kafka's (Kafka numbers
    leader and partition epochs from 0, the model from 1)."""
    p = state.controller.partition
    lines = ["PartitionRegistration partition = controller.partition();",
             f"assertArrayEquals({int_array(p.replicas)}, partition.replicas, \"replicas\");",
             f"assertEquals({_set(p.isr)}, set(partition.isr), \"ISR\");",
             f"assertEquals({p.leader}, partition.leader, \"leader\");",
             f"assertEquals({p.leader_epoch - 1}, partition.leaderEpoch, \"leader epoch\");",
             f"assertEquals({p.partition_epoch - 1}, partition.partitionEpoch, \"partition epoch\");",
             f"assertEquals({_set(p.elr)}, set(partition.elr), \"ELR\");",
             f"assertEquals({_set(p.last_known_elr)}, set(partition.lastKnownElr), \"LastKnownELR\");",
             f"assertEquals({_set(p.adding)}, set(partition.addingReplicas), \"adding replicas\");",
             f"assertEquals({_set(p.removing)}, set(partition.removingReplicas), \"removing replicas\");"]
    for reg in state.controller.registrations:
        if reg.broker_epoch is None:
            lines.append(f"assertNull(controller.clusterControl.registration({reg.broker}), \"broker {reg.broker} registered\");")
            continue
        lines.append(f"assertEquals({reg.broker_epoch}L, controller.clusterControl.registration({reg.broker}).epoch(), "
                     f"\"broker {reg.broker}'s epoch\");")
        check = "assertTrue" if reg.fenced else "assertFalse"
        lines.append(f"{check}(controller.clusterControl.registration({reg.broker}).fenced(), \"broker {reg.broker} fenced\");")
    return lines


def replica_assertions(state: ClusterState, brokers: Sequence[int], out: JavaSource) -> list[str]:
    """Each replica's HWM and log end offset (exclusive ends, as Kafka's) and its
    records' leader epochs and values as the model holds them, for
    the replicas of ``brokers`` the test drives (a stopped broker's as its files hold
    them: the fixture reads them back at the shutdown)."""
    out_arrays = out.use("java.util.Arrays")
    lines = []
    for broker in observe(state).brokers:
        r = broker.replica
        if broker.id not in brokers or r is None:
            continue
        lines.append(f"assertEquals({r.hwm}L, broker{broker.id}.log().highWatermark(), \"broker {broker.id}'s HWM\");")
        lines.append(f"assertEquals({len(r.log)}L, broker{broker.id}.log().logEndOffset(), "
                     f"\"broker {broker.id}'s log end offset\");")
        # the records themselves, (leader epoch, value) from offset 0: where replicas diverge
        stream = f"{out_arrays}.stream(broker{broker.id}.logRecords())"
        lines.append(f"assertArrayEquals({long_array(rec.epoch for rec in r.log)}, "
                     f"{stream}.mapToLong(rec -> rec[1]).toArray(), \"broker {broker.id}'s records' leader epochs\");")
        lines.append(f"assertArrayEquals({long_array(rec.value for rec in r.log)}, "
                     f"{stream}.mapToLong(rec -> rec[2]).toArray(), \"broker {broker.id}'s records' values\");")
    return lines


def _body(run: _Run, out: JavaSource, release: tuple[int, ...], replicas: bool) -> list[str]:
    lines: list[str] = []
    n = 0
    clocks: dict[int, Any] = {}   # broker -> the time its clock was last set to
    for step in run.log.steps:
        statements: list[str] = []
        for call in step.calls:
            if call.broker is not None and not replicas:
                continue
            if call.broker is not None and call.method in ("set_now_ms", "lag"):
                # the glue sets a replica's clock before each call: only a change is written
                if call.method == "set_now_ms" and clocks.get(call.broker) == call.args:
                    continue
                clocks[call.broker] = call.args if call.method == "set_now_ms" else None
            n += 1
            statements.extend(call_statements(call, n, out, release) if call.broker is None
                              else replica_statements(call, n, out))
        lines.append("")
        if step.label is None:
            lines.append("// The cluster starts: every broker registers and is unfenced, then the topic is created.")
        else:
            nothing = ": no call to Kafka's code" if replicas else ": no request to the controller"
            lines.append(f"// {step.label}" + ("" if statements else nothing))
        lines.extend(statements)
    return lines


def release(version: str) -> tuple[int, ...]:
    """``version`` ("4.3.1") as a tuple; ValueError naming the form expected."""
    try:
        return releases.release(version)
    except releases.UnknownRelease:
        raise ValueError(f"--kafka-version: {version!r} is not a release number like 4.3.1") from None


def record(config: Config, trace: Sequence[Action]) -> Recorded:
    """``trace`` under ``config`` replayed with the implementation "kafka", its
    requests to Kafka's controller recorded (see the module doc). Raises
    NotReproducible (see the module doc), ReproducerUnavailable when Kafka's
    classes cannot be loaded."""
    why = not_applicable(config)
    if why is not None:
        raise NotReproducible(why)
    try:
        run = _record(config, trace)
    except KafkaUnavailable as e:
        raise ReproducerUnavailable(str(e)) from e
    expected, outcome, thrown = _outcome(run)
    return Recorded(config, tuple(trace), run, expected, outcome, thrown)


def render(recorded: Recorded, name: str, title: str, about: str, kafka_version: str = KAFKA_RELEASE,
           replicas: bool = True) -> Reproducer:
    """The JUnit test class ``name`` of ``recorded``, written for Kafka
    ``kafka_version``; ``title`` and ``about`` (sentences) head its doc.
    ``replicas``: it drives the brokers' replicas too (Kafka's ``Partition``) and
    asserts their HWM and log end offset; else Kafka's controller alone, the
    brokers' requests to it written as the values they were."""
    run = recorded.run
    replicas = replicas and bool(recorded.brokers)
    out = source(run.lockstep.implementation.controller)   # type: ignore[union-attr]
    body = _body(run, out, release(kafka_version), replicas)
    if not recorded.thrown:
        body += ["", "// What the row shows: the controller's state and each replica's, as the model holds them."]
        body += state_assertions(run.lockstep.state)
        body += replica_assertions(run.lockstep.state, recorded.brokers, out) if replicas else []
    actions = [f"{i + 1}. {a!r}" for i, a in enumerate(recorded.trace[:run.steps])]
    text = test_class(name=name, title=title, about=about, outcome=recorded.outcome, config=recorded.config,
                      actions=actions, imports=out.import_lines(), body=body, release=kafka_version,
                      replicas=replicas)
    return Reproducer(name, text, run.steps, recorded.expected, replicas)


def generate(config: Config, trace: Sequence[Action], name: str, title: str, about: str,
             kafka_version: str = KAFKA_RELEASE, replicas: bool = True) -> Reproducer:
    """The JUnit test class ``name`` reproducing ``trace`` under ``config`` on Kafka's
    code, written for Kafka ``kafka_version`` (the trace is replayed on the pinned
    release's classes, ``model.KAFKA_RELEASE``): ``render(record(...))``."""
    return render(record(config, trace), name, title, about, kafka_version, replicas)

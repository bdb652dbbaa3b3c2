"""The counterexample corpus: Parquet files (``harness.schema``), hive-partitioned
by ``run_date``, written durably and atomically as rows are found (one file per
write, per table, per worker).

Writing::

    writer = CorpusWriter(corpus_dir)                      # run_id, worker, run_date
    with RunObserver(MachineCls, test_id="...") as run:     # times the run, reads Hypothesis's statistics
        try:
            run_state_machine_as_test(MachineCls, settings=...)
        except Exception as e:
            run.fail(e)
            raise
        finally:
            writer.record(run)      # counterexample rows written now; the runs row within FLUSH_EVERY_S
    writer.flush()                  # writes what is still buffered

``run_machine(MachineCls, settings, corpus_dir=...)`` does all of that for a test;
the pytest plugin (``harness.pytest_plugin``) does it for every machine test.

Durability: a counterexample is on disk before it is reported. ``CorpusWriter.record``
writes a failing run's rows as soon as they exist; ``runs`` rows wait at most
``FLUSH_EVERY_S`` seconds. A killed process loses at most the run in flight and
the ``runs`` rows of its last seconds; a write that fails (disk full, an
unwritable corpus) prints each counterexample it could not write to stderr in a
replayable line (``replayable_text`` / ``row_from_text``) and the run goes on.

Files: ``<corpus>/<table>/run_date=YYYY-MM-DD/part-<run_id>-<worker>-<seq>.parquet``,
first written as ``.part-….parquet.tmp-<pid>-<uuid>`` in the same directory,
fsynced, then linked to their final name (never overwriting: an existing name
bumps ``seq``; without hard links, renamed to a name unique to the write,
``part-<run_id>-<worker>-<seq>-<pid>-<n>-<uuid>.parquet``), so readers (which
skip dot-files, as Spark and pyarrow datasets do) never see half a file and
concurrent workers never collide. A corpus given as a URI (``s3://``, ``gs://``,
``hdfs://``: ``harness.corpus_fs``) is written and read through pyarrow's file
systems by the same functions: each part under a name unique to its write,
uploaded once on an object store, written under the temp name and renamed on
HDFS (``write_part``).

Rows: one ``counterexamples`` row per failing property of the final exception
(``failures_from_verdict`` of the ``Verdict`` it carries; signature and id rules in
``harness.trace_codec``);
``examples_to_failure`` / ``time_to_failure_s`` are the machine's own
``RunStats.first_failure_examples`` (examples run when the first failure was
found, the failing one included) and ``first_failure_s`` (seconds from the first
example), else derived from Hypothesis's statistics; ``seed`` is the forced
Hypothesis seed (``--hypothesis-seed``, the per-worker seed), None for random or
derandomized runs. One ``runs`` row per machine run: ``RunStats`` deltas over the
run (``rule_counts`` = family counts).

Reading: ``read_counterexamples(corpus_dir)`` / ``read_runs`` return the rows of
every readable file (``harness.schema.table_files`` chooses them, as for every
reader); every other file or folder of the table — not ``*.parquet``, empty,
corrupt or truncated, unreadable, of another schema or a newer schema version,
a stray or badly named folder, one that cannot be listed — is skipped with one
``CorpusWarning`` naming it and why (the other files are still read), and
listed in ``.skipped`` (``.problems``: their lines).
"""

from __future__ import annotations

import datetime as _dt
import itertools
import os
import threading
import time
import uuid
import warnings
from collections import Counter
from pathlib import Path
from typing import Any, Iterable, Iterator, Optional, Sequence

import attrs
import pyarrow as pa
import pyarrow.parquet as pq

from .corpus_fs import Location, RemotePath, location, opened, publish_remote
from .schema import (COUNTEREXAMPLES, PARTITION_COLUMN, RUNS, SCHEMA_VERSION, SCHEMAS, VERSION_KEY,  # noqa: F401
                     Skipped, file_table, list_table, table_files)

ENV_CORPUS = "REPLICHECK_CORPUS"


class CorpusWarning(UserWarning):
    """A corpus file was skipped (corrupt, truncated, newer schema) or could not be written."""


class CorpusError(Exception):
    """A corpus request cannot be answered (no corpus, unknown id or signature)."""


class CounterexampleNotFound(CorpusError, LookupError):
    pass


# ------------------------------------------------------------------ context

def worker_id() -> str:
    """The xdist worker id (``gw0``…), or ``main`` outside xdist."""
    return os.environ.get("PYTEST_XDIST_WORKER") or "main"


def new_run_id() -> str:
    return uuid.uuid4().hex


def utcnow() -> _dt.datetime:
    return _dt.datetime.now(_dt.timezone.utc)


def project_version() -> str:
    try:
        from importlib.metadata import version
        return version("replicheck")
    except Exception:
        return "unknown"


def hypothesis_version() -> str:
    import hypothesis
    return hypothesis.__version__


def hypothesis_seed(settings: Any = None, machine_cls: Any = None) -> Optional[str]:
    """The seed of a run: the machine class's own (``@seed``, as the fuzz campaign
    gives every run), else the one Hypothesis was forced to (``--hypothesis-seed``,
    the per-worker seed of the root conftest), or None: random runs, and
    derandomized ones (``settings`` or the current profile), where a derandomized
    run's choices do not depend on it."""
    try:
        from hypothesis import core
        from hypothesis import settings as current
    except ImportError:  # pragma: no cover
        return None
    own = getattr(machine_cls, "_hypothesis_internal_use_seed", None)  # where @seed puts it
    if own is not None:
        return str(own)
    if getattr(settings if settings is not None else current.default, "derandomize", False):
        return None
    seed = getattr(core, "global_force_seed", None)
    return None if seed is None else str(seed)


def hypothesis_profile() -> str:
    from hypothesis import settings
    try:
        return settings.get_current_profile_name() or "default"
    except Exception:  # pragma: no cover - older Hypothesis
        return str(getattr(settings, "_current_profile", None) or "default")


# ----------------------------------------------------------------- failures

@attrs.frozen
class Failure:
    """One counterexample, before it becomes a row: a property (or pseudo-property)
    that failed after ``trace`` from ``initial_state(config)``."""

    prop: str
    kind: str               # "property" | "divergence" | "harness_error"
    violation: str          # the text as reported
    template: str           # what the signature normalizes
    config: Any             # model.Config (variants included)
    trace: tuple
    state: Any              # the model state at the failure
    bugs: frozenset = frozenset()
    template_is_path: bool = False  # the template is a diff field path
    # Set by ``reduce_failure``: what Hypothesis's shrinking reported (None: not reduced).
    shrunk_trace: Optional[tuple] = None
    shrunk_config: Any = None
    reduction: tuple[str, ...] = ()   # the configuration's simplifications, in order
    # The factory of the implementation under test when it is not the bundled SUT
    # (``machine_for(implementation=...)``): reduction and the timeline replay with it.
    implementation: Any = attrs.field(default=None, eq=False)
    # Whether the run checked the properties: reduction and the timeline replay as
    # it did (off, a property the Kafka profile's findings break on the way would
    # stop the replay before the disagreement that was found).
    check_properties: bool = attrs.field(default=True, eq=False)


def _leaf_exceptions(exc: BaseException) -> Iterator[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        for e in exc.exceptions:
            yield from _leaf_exceptions(e)
    else:
        yield exc


def failures_from_verdict(verdict: Any, bugs: Iterable[Any] = frozenset(),
                          implementation: Any = None, check_properties: bool = True) -> list[Failure]:
    """The counterexamples a lockstep ``Verdict`` is: one per failing property of a
    property verdict, one for any other kind. An enablement disagreement is a
    divergence row (its template the disagreement, not a field path), and so is a
    differing outcome (its template the outcome's field path). ``bugs``: the SUT
    bugs the run had enabled; ``implementation``: the run's implementation
    factory when it was not the bundled SUT; ``check_properties``: whether the run
    checked the properties (``ReplicationMachine.check_properties``)."""
    kind = "divergence" if verdict.kind in ("enablement", "outcome") else verdict.kind
    parts = [verdict.for_property(p) for p in verdict.properties] if verdict.kind == "property" else [verdict]
    text = (lambda v: "\n".join(str(x) for x in v.violations)) if verdict.kind == "property" else \
        (lambda v: "\n".join(v.differences) if v.differences else v.template)
    return [Failure(v.properties[0], kind, text(v), v.template, v.config, tuple(v.trace), v.state,
                    frozenset(bugs), template_is_path=v.template_is_path, implementation=implementation,
                    check_properties=check_properties)
            for v in parts]


def failures_from_exception(exc: BaseException, bugs: Iterable[Any] = frozenset(),
                            implementation: Any = None, check_properties: bool = True) -> list[Failure]:
    """The counterexamples an exception out of a run carries: those of the
    ``Verdict`` of every ``CheckFailed`` in it (exception groups are flattened).
    Any other exception (a health check, an interrupt) carries none."""
    from .failures import CheckFailed
    return [f for e in _leaf_exceptions(exc) if isinstance(e, CheckFailed)
            for f in failures_from_verdict(e.verdict, bugs, implementation, check_properties)]


#: The failure kinds reduction applies to. A harness error is kept as it happened.
REDUCIBLE_KINDS = ("property", "divergence")


def reduce_failure(f: Failure, max_seconds: float) -> Failure:
    """``f`` with its trace reduced by ``harness.reduce.reduce_counterexample`` (within
    ``max_seconds``, smaller configurations included): the trace, configuration,
    violation and state are then the reduced counterexample's, and ``shrunk_trace``,
    ``shrunk_config`` and ``reduction`` keep Hypothesis's trace, the run's
    configuration and what was simplified. A property violation keeps its property,
    a divergence its kind.

    Returns ``f`` itself when it is a harness error, or when its trace does not
    replay to the same failure, or (with a ``CorpusWarning``) when reduction
    raises: a row is never lost to reduction. Raises ValueError when
    ``max_seconds`` is not positive."""
    if not max_seconds > 0:
        raise ValueError(f"max_seconds must be a positive number of seconds, got {max_seconds!r}")
    if f.kind not in REDUCIBLE_KINDS or f.shrunk_trace is not None:
        return f
    from .reduce import reduce_counterexample
    from .replay import TraceNotEnabled, replay
    try:
        reduced = reduce_counterexample(f.trace, f.config, bugs=f.bugs, max_seconds=max_seconds,
                                        prop=f.prop if f.kind == "property" else None,
                                        implementation=f.implementation, check_properties=f.check_properties)
        verdict = replay(reduced.trace, reduced.config, bugs=f.bugs, implementation=f.implementation,
                         check_properties=f.check_properties).verdict
    except (ValueError, TraceNotEnabled):  # the trace does not replay to the same failure
        return f
    except Exception as e:  # a fault of reduction itself must not cost the counterexample
        warnings.warn(f"reduction of a {f.prop} counterexample failed ({type(e).__name__}: {e}); "
                      f"it is written as shrunk", CorpusWarning, stacklevel=2)
        return f
    again = [g for g in failures_from_verdict(verdict, f.bugs, f.implementation, f.check_properties)
             if g.prop == f.prop] \
        if verdict is not None else []
    if not again:
        return f
    return attrs.evolve(again[0], shrunk_trace=f.trace, shrunk_config=f.config, reduction=reduced.changes)


def counterexample_rows(failures: Sequence[Failure], *, run_id: str, worker: str, test_id: str,
                        seed: Optional[str] = None, time_to_failure_s: Optional[float] = None,
                        examples_to_failure: Optional[int] = None,
                        found_at: Optional[_dt.datetime] = None) -> list[dict[str, Any]]:
    """``counterexamples`` rows (dicts in schema order) for ``failures``; a reduced
    failure (``reduce_failure``) fills the version-2 ``shrunk_*`` and ``reduction``
    columns, and the version-3 ``timeline`` is the trace's replay (``timeline_of``)."""
    from .implementations import name_of
    from .trace_codec import config_to_json, counterexample_id, encode_steps, names, signature, state_to_json

    found_at = found_at or utcnow()
    rows = []
    for f in failures:
        config_json = config_to_json(f.config)
        steps = encode_steps(f.trace)
        bug_names = names(f.bugs)
        shrunk = None if f.shrunk_trace is None else encode_steps(f.shrunk_trace)
        rows.append({
            "schema_version": SCHEMA_VERSION,
            "counterexample_id": counterexample_id(config_json, steps, f.prop, bug_names),
            "signature": signature(f.prop, f.kind, f.template, path=f.template_is_path),
            "property": f.prop,
            "kind": f.kind,
            "violation": f.violation,
            "variants": names(f.config.variants),
            "sut_bugs": bug_names,
            "brokers": len(f.config.brokers),
            "replication_factor": f.config.replication_factor,
            "min_isr": f.config.min_isr,
            "unclean_recovery": f.config.unclean_recovery,
            "unclean_leader_election": f.config.unclean_leader_election,
            "config_json": config_json,
            "steps": steps,
            "step_count": len(steps),
            "final_state_json": state_to_json(f.state),
            "seed": seed,
            "hypothesis_version": hypothesis_version(),
            "project_version": project_version(),
            "run_id": run_id,
            "worker": worker,
            "test_id": test_id,
            "found_at": found_at,
            "time_to_failure_s": time_to_failure_s,
            "examples_to_failure": examples_to_failure,
            "shrunk_steps": shrunk,
            "shrunk_step_count": None if shrunk is None else len(shrunk),
            "shrunk_config_json": None if shrunk is None else config_to_json(f.shrunk_config),
            "reduction": None if shrunk is None else list(f.reduction),
            "timeline": timeline_of(f),
            "implementation": name_of(f.implementation),
        })
    return rows


def timeline_of(f: Failure) -> Optional[list[dict[str, Any]]]:
    """The ``timeline`` column of ``f``: its trace replayed (``harness.replay``
    with ``timeline=True``, the same implementation), one entry per step. None,
    with a ``CorpusWarning``, when the replay does not apply every step (the row is
    written without it: a row is never lost to its timeline)."""
    from .replay import replay
    from .trace_codec import encode_timeline
    try:
        result = replay(f.trace, f.config, bugs=f.bugs, implementation=f.implementation, timeline=True,
                        check_properties=f.check_properties)
    except Exception as e:
        warnings.warn(f"the timeline of a {f.prop} counterexample could not be recorded "
                      f"({type(e).__name__}: {e}); it is written without", CorpusWarning, stacklevel=3)
        return None
    if len(result.timeline) != len(f.trace):
        warnings.warn(f"the timeline of a {f.prop} counterexample stopped at step {len(result.timeline)} of "
                      f"{len(f.trace)} on replay; it is written without", CorpusWarning, stacklevel=3)
        return None
    return encode_timeline(result.timeline)


# ------------------------------------------------------------ run observer

def first_failure(statistics: Optional[dict]) -> tuple[Optional[int], Optional[float]]:
    """(examples run when the first failure was found, the failing one included;
    seconds spent running them) from Hypothesis's run statistics (reuse, then
    generate phase); (None, None) when no example failed there. The fallback of
    ``RunStats.first_failure_examples`` / ``first_failure_s``."""
    if not statistics:
        return None, None
    n, t = 0, 0.0
    for phase in ("reuse-phase", "generate-phase"):
        for case in statistics.get(phase, {}).get("test-cases", []):
            t += float(case.get("runtime", 0.0) or 0.0)
            n += 1
            if case.get("status") == "interesting":
                return n, t
    return None, None


class RunObserver:
    """Observes one machine run (all its examples): wall clock, the machine class's
    ``RunStats`` (as a delta, so a class run twice is counted per run) and
    Hypothesis's statistics (for the first failure). A context manager; call
    ``fail(exc)`` with the exception the run raised."""

    def __init__(self, machine_cls: type, test_id: Optional[str] = None, settings: Any = None) -> None:
        self.machine_cls = machine_cls
        self.test_id = test_id or machine_cls.__name__
        self.started_at: Optional[_dt.datetime] = None
        self.duration_s = 0.0
        self.statistics: Optional[dict] = None
        self.exception: Optional[BaseException] = None
        self._t0 = 0.0
        self._before: Optional[tuple] = None
        self._after: Optional[tuple] = None
        self._cm: Any = None
        self._prev: Any = None
        self._failure_noted_before = False
        self.profile = hypothesis_profile()
        if settings is None:
            settings = getattr(getattr(machine_cls, "TestCase", None), "settings", None)
        self.seed = hypothesis_seed(settings, machine_cls)

    def first_failure(self) -> tuple[Optional[int], Optional[float]]:
        """(examples_to_failure, time_to_failure_s): the machine's own measure
        (``RunStats.first_failure_examples``: examples run when the first failure
        was found, 1-based; ``first_failure_s``: seconds from the first example),
        else Hypothesis's statistics (``first_failure``)."""
        s = getattr(self.machine_cls, "run_stats", None)
        if s is not None and not self._failure_noted_before and getattr(s, "first_failure_s", None) is not None:
            return getattr(s, "first_failure_examples", None), s.first_failure_s
        return first_failure(self.statistics)

    def _stats(self) -> tuple:
        s = getattr(self.machine_cls, "run_stats", None)
        if s is None:
            return 0, 0, Counter(), Counter(), Counter()
        return (s.examples, s.steps, Counter(s.family_counts), Counter(s.action_counts), Counter(s.event_counts))

    def _note(self, statistics: dict) -> None:
        self.statistics = statistics
        if self._prev is not None:
            self._prev(statistics)

    def start(self) -> "RunObserver":
        from hypothesis.statistics import collector
        self.started_at = utcnow()
        self._t0 = time.perf_counter()
        self._before = self._stats()
        self._failure_noted_before = getattr(getattr(self.machine_cls, "run_stats", None), "first_failure_s", None) \
            is not None
        self._prev = collector.value
        self._cm = collector.with_value(self._note)
        self._cm.__enter__()
        return self

    def stop(self) -> None:
        if self._cm is not None:
            cm, self._cm = self._cm, None
            cm.__exit__(None, None, None)
            self.duration_s = time.perf_counter() - self._t0
            self._after = self._stats()

    def __enter__(self) -> "RunObserver":
        return self.start()

    def __exit__(self, et: Any, ev: Any, tb: Any) -> None:
        self.stop()
        if ev is not None and self.exception is None and isinstance(ev, Exception):
            self.fail(ev)

    def fail(self, exc: BaseException) -> None:
        self.exception = exc

    @property
    def failed(self) -> bool:
        return self.exception is not None

    def delta(self) -> tuple[int, int, Counter, Counter, Counter]:
        before = self._before or self._stats()
        after = self._after or self._stats()
        return (after[0] - before[0], after[1] - before[1], after[2] - before[2], after[3] - before[3],
                after[4] - before[4])

    def run_row(self, run_id: str, worker: str) -> dict[str, Any]:
        from .trace_codec import names
        examples, steps, families, actions, events = self.delta()
        cls = self.machine_cls
        return {
            "schema_version": SCHEMA_VERSION,
            "run_id": run_id,
            "test_id": self.test_id,
            "worker": worker,
            "profile": self.profile,
            "variants": names(getattr(cls, "variants", ())),
            "sut_bugs": names(getattr(cls, "bugs", ())),
            "started_at": self.started_at or utcnow(),
            "duration_s": float(self.duration_s),
            "examples": int(examples),
            "steps": int(steps),
            "failed": self.failed,
            "rule_counts": sorted(families.items()),
            "action_counts": sorted(actions.items()),
            "event_counts": sorted(events.items()),
        }

    def counterexample_rows(self, run_id: str, worker: str, reduce_s: Optional[float] = None) -> list[dict[str, Any]]:
        """The run's counterexample rows; the failures reduced first
        (``reduce_failure``) within ``reduce_s`` seconds in all, when given: each
        gets an even part of what is left, so a failure of several properties
        costs no more than one."""
        if self.exception is None:
            return []
        failures = failures_from_exception(self.exception, getattr(self.machine_cls, "bugs", frozenset()),
                                           getattr(self.machine_cls, "implementation", None),
                                           getattr(self.machine_cls, "check_properties", True))
        if reduce_s is not None:
            end = time.monotonic() + reduce_s
            failures = [reduce_failure(f, max(end - time.monotonic(), 0.1) / (len(failures) - i))
                        for i, f in enumerate(failures)]
        examples, elapsed = self.first_failure()
        return counterexample_rows(failures, run_id=run_id, worker=worker, test_id=self.test_id, seed=self.seed,
                                   time_to_failure_s=elapsed, examples_to_failure=examples)


# ------------------------------------------------------------------ writing

def _ensure_tz(rows: list[dict[str, Any]], columns: Iterable[str]) -> None:
    for row in rows:
        for c in columns:
            v = row.get(c)
            if isinstance(v, _dt.datetime) and v.tzinfo is None:
                row[c] = v.replace(tzinfo=_dt.timezone.utc)


def table_of(table: str, rows: list[dict[str, Any]]) -> pa.Table:
    schema = SCHEMAS[table]
    rows = [dict(r) for r in rows]
    _ensure_tz(rows, [f.name for f in schema if pa.types.is_timestamp(f.type)])
    t = pa.Table.from_pylist(rows, schema=schema)
    return t.replace_schema_metadata({VERSION_KEY: str(SCHEMA_VERSION).encode()})


def _fsync_directory(directory: Path) -> None:
    """Make a directory's new entries durable (a file's link, a rename); a file
    system that cannot fsync a directory is left as it is."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


#: Numbers the fallback names of this process's writes (``_publish``).
_PUBLISHED = itertools.count()


def _publish(tmp: Path, directory: Path, run_id: str, worker: str, seq: int) -> Path:
    """Give the written temp file ``tmp`` its visible name in ``directory``,
    never replacing a file: a hard link to ``part-<run_id>-<worker>-<seq>.parquet``
    (``os.link`` fails when the name exists: ``seq`` is bumped); where the file
    system has no hard links (``os.link`` raises any other OSError: EPERM,
    ENOTSUP, EMLINK…), a rename to a name no other writer can make,
    ``part-<run_id>-<worker>-<seq>-<pid>-<n>-<uuid>.parquet`` (this process's pid,
    its n-th such write, a random uuid). Returns the final path; OSError when
    neither can be done."""
    while True:
        final = directory / f"part-{run_id}-{worker}-{seq:04d}.parquet"
        try:
            os.link(tmp, final)
            return final
        except FileExistsError:
            seq += 1
        except OSError:  # a file system without hard links
            break
    final = directory / _unique_name(run_id, worker, seq)
    os.rename(tmp, final)
    return final


def _unique_name(run_id: str, worker: str, seq: int) -> str:
    """A part's name no other write can make: ``part-<run_id>-<worker>-<seq>-<pid>-<n>-<uuid>.parquet``
    (this process's pid, its n-th such write, a random uuid)."""
    return f"part-{run_id}-{worker}-{seq:04d}-{os.getpid()}-{next(_PUBLISHED)}-{uuid.uuid4().hex}.parquet"


def write_part(root: Path | str | Location, table: str, rows: list[dict[str, Any]], run_id: str, worker: str,
               seq: int = 0, run_date: Optional[_dt.date] = None) -> Location:
    """Write ``rows`` (dicts of ``table``'s schema) as one Parquet file of
    ``table`` under ``root/table/run_date=…/``, durably and atomically; returns
    its path (a ``Path``; a ``harness.corpus_fs.RemotePath`` for a corpus at a
    URI). The file is written to a dot-prefixed temp name unique to this
    call (readers skip it), flushed and fsynced, then published (``_publish``:
    linked to ``part-<run_id>-<worker>-<seq>.parquet``, ``seq`` bumped past any
    existing file, or renamed to a unique name where there are no hard links)
    and the directory fsynced. Nothing is ever overwritten.

    At a URI (``harness.corpus_fs.location``) the file is serialized in memory
    first, then published under a name unique to the write,
    ``part-<run_id>-<worker>-<seq>-<pid>-<n>-<uuid>.parquet``: on an object
    store uploaded once (it appears whole when the upload completes), elsewhere
    (HDFS) written under the temp name and renamed
    (``harness.corpus_fs.publish_remote``).

    Raises OSError (ENOSPC: disk full; EACCES, EROFS: an unwritable corpus; a
    store that cannot be reached; …) when the file cannot be written: then
    nothing is published and the temp file is removed;
    ``harness.corpus_fs.CorpusLocationError`` (a ValueError) for a URI that
    cannot be opened."""
    run_date = run_date or utcnow().date()
    base = location(root)
    data = table_of(table, rows)
    temp_name = f".part-{run_id}-{worker}-{seq:04d}.parquet.tmp-{os.getpid()}-{uuid.uuid4().hex}"
    if isinstance(base, RemotePath):
        out = pa.BufferOutputStream()
        pq.write_table(data, out)
        return publish_remote(base / table / f"{PARTITION_COLUMN}={run_date.isoformat()}",
                              out.getvalue().to_pybytes(), _unique_name(run_id, worker, seq), temp_name)
    directory = base / table / f"{PARTITION_COLUMN}={run_date.isoformat()}"
    directory.mkdir(parents=True, exist_ok=True)
    tmp = directory / temp_name
    try:
        with open(tmp, "xb") as fh:
            pq.write_table(data, fh)
            fh.flush()
            os.fsync(fh.fileno())
        final = _publish(tmp, directory, run_id, worker, seq)
        _fsync_directory(directory)
    finally:
        try:
            tmp.unlink()
        except FileNotFoundError:
            pass
    return final


#: Buffered ``runs`` rows are written once this many seconds have passed since
#: the writer's last write (``CorpusWriter.flush_every_s``).
FLUSH_EVERY_S = 5.0
#: The first line of a counterexample printed because it could not be written
#: (``replayable_text``); the JSON follows on the same line.
UNWRITTEN_MARK = "REPLICHECK-UNWRITTEN-COUNTEREXAMPLE"
#: The columns of a ``counterexamples`` row that ``replayable_text`` keeps:
#: what ``decode_counterexample`` replays, and what names the counterexample.
REPLAYABLE_COLUMNS = ("counterexample_id", "signature", "property", "kind", "violation", "variants", "sut_bugs",
                      "implementation", "config_json", "steps", "seed", "test_id", "run_id", "worker")


def replayable_text(row: dict[str, Any]) -> str:
    """A ``counterexamples`` row as one line of text that replays it:
    ``UNWRITTEN_MARK`` and a JSON object of ``REPLAYABLE_COLUMNS`` (the
    configuration as ``config_json``, the trace as ``steps``, both in the
    corpus's encoding, ``harness.trace_codec``). ``row_from_text`` reads it
    back; ``decode_counterexample`` of that gives the config and actions."""
    import json
    return f"{UNWRITTEN_MARK} " + json.dumps({k: row.get(k) for k in REPLAYABLE_COLUMNS}, default=str)


def row_from_text(line: str) -> dict[str, Any]:
    """The row of a ``replayable_text`` line (what ``decode_counterexample``
    takes). ValueError when the line is not one."""
    import json
    head, _, body = line.strip().partition(" ")
    if head != UNWRITTEN_MARK:
        raise ValueError(f"not a replicheck counterexample line (it starts with {UNWRITTEN_MARK}): {line[:60]!r}")
    return json.loads(body)


class CorpusWriter:
    """Writes the rows of one run (a pytest session's worker, a campaign unit,
    a test's own runs) for one worker, durably, as they come:

    - ``record(run)``: the run's counterexample rows are written before it
      returns (one file, ``write_part``: temp name, fsync, link), so a
      counterexample is on disk before anything reports it; its ``runs`` row is
      buffered, and written with the next write once ``flush_every_s`` seconds
      have passed since the last one — by a later ``record``, or by a timer
      thread ``flush_every_s`` seconds after it was buffered;
    - ``flush()``: writes whatever is buffered (call it at the end).

    A failed write (OSError: disk full, an unwritable corpus) keeps its rows
    buffered for the next write, warns (``CorpusWarning``) and prints every
    counterexample it could not write, once, to ``err`` (default: stderr) as
    ``replayable_text``: nothing found is lost and the run goes on.
    ``record`` never raises for a write; ``flush`` raises the OSError after
    printing. ``written`` lists the files written; ``written_ids`` the
    counterexample ids on disk, in order; ``recorded`` every counterexample row
    recorded or added, written or not. Thread-safe."""

    def __init__(self, root: Path | str | Location, run_id: Optional[str] = None, worker: Optional[str] = None,
                 run_date: Optional[_dt.date] = None, flush_every_s: float = FLUSH_EVERY_S,
                 err: Any = None) -> None:
        self.root = location(root)
        self.run_id = run_id or new_run_id()
        self.worker = worker or worker_id()
        self.run_date = run_date or utcnow().date()
        self.flush_every_s = flush_every_s
        self.err = err
        self.rows: dict[str, list[dict[str, Any]]] = {COUNTEREXAMPLES: [], RUNS: []}
        self.written: list[Location] = []
        self.written_ids: list[str] = []
        self.recorded: list[dict[str, Any]] = []
        #: Why the last write failed (None: it did not).
        self.last_error: Optional[str] = None
        self._seq = 0
        self._last_write = time.monotonic()
        self._printed: set[str] = set()
        self._lock = threading.Lock()
        self._timer: Optional[threading.Timer] = None

    def add_counterexamples(self, rows: Iterable[dict[str, Any]]) -> None:
        """Buffer counterexample rows (written by the next write)."""
        rows = list(rows)
        with self._lock:
            self.rows[COUNTEREXAMPLES].extend(rows)
            self.recorded.extend(rows)

    def add_run(self, row: dict[str, Any]) -> None:
        """Buffer a ``runs`` row (written by the next write)."""
        with self._lock:
            self.rows[RUNS].append(row)

    def record(self, run: RunObserver, reduce_s: Optional[float] = None) -> list[dict[str, Any]]:
        """Record a run: its counterexample rows (reduced within ``reduce_s``
        seconds in all, when given) written now, its ``runs`` row buffered (see
        the class doc); returns the counterexample rows. Interrupted while
        reducing (KeyboardInterrupt: Ctrl-C, a worker's SIGTERM), it writes the
        counterexamples as shrunk, then re-raises."""
        try:
            ces = run.counterexample_rows(self.run_id, self.worker, reduce_s)
        except KeyboardInterrupt:
            if reduce_s is None or run.exception is None:
                raise
            self.add_counterexamples(run.counterexample_rows(self.run_id, self.worker))
            self.add_run(run.run_row(self.run_id, self.worker))
            self._write(raise_errors=False)
            raise
        self.add_counterexamples(ces)
        self.add_run(run.run_row(self.run_id, self.worker))
        if ces or time.monotonic() - self._last_write >= self.flush_every_s:
            self._write(raise_errors=False)
        else:
            self._arm_timer()
        return ces

    def flush(self) -> list[Location]:
        """Write every buffered row (one file per table); returns the files
        written. Raises the OSError of a failed write, after printing its
        counterexamples (class doc); the rows stay buffered."""
        return self._write(raise_errors=True)

    def close(self) -> None:
        """Stop the timer (rows still buffered stay so: ``flush`` first)."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

    def _arm_timer(self) -> None:
        with self._lock:
            if self._timer is not None or not self.rows[RUNS]:
                return
            delay = max(0.0, self.flush_every_s - (time.monotonic() - self._last_write))
            self._timer = threading.Timer(delay, self._on_timer)
            self._timer.daemon = True
            self._timer.start()

    def _on_timer(self) -> None:
        with self._lock:
            self._timer = None
        self._write(raise_errors=False)

    def _write(self, raise_errors: bool) -> list[Location]:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            paths: list[Location] = []
            failed: Optional[BaseException] = None
            for table in (COUNTEREXAMPLES, RUNS):
                rows = self.rows[table]
                if not rows:
                    continue
                try:
                    path = write_part(self.root, table, rows, self.run_id, self.worker, self._seq, self.run_date)
                except Exception as e:  # OSError (ENOSPC, EACCES, …), or rows the schema refuses
                    failed = failed or e
                    self._unwritten(table, rows, e)
                    continue
                self.rows[table] = []
                paths.append(path)
                if table == COUNTEREXAMPLES:
                    self.written_ids.extend(r["counterexample_id"] for r in rows)
            self._last_write = time.monotonic()
            self.last_error = None if failed is None else f"{type(failed).__name__}: {failed}"
            if paths:
                self._seq += 1
                self.written.extend(paths)
            if failed is not None and raise_errors:
                raise failed
            return paths

    def _unwritten(self, table: str, rows: list[dict[str, Any]], error: BaseException) -> None:
        """Say that ``rows`` of ``table`` could not be written, and print the
        counterexamples among them not printed before."""
        fresh = [r for r in rows if r["counterexample_id"] not in self._printed] if table == COUNTEREXAMPLES else []
        self._print_unwritten(fresh, error)
        warnings.warn(CorpusWarning(
            f"could not write {len(rows)} {table} row(s) to the corpus at {self.root} ({type(error).__name__}: "
            f"{error}); they are kept for the next write"
            + (f", and the {len(fresh)} counterexample(s) among them printed, replayable ({UNWRITTEN_MARK} lines)"
               if fresh else "")), stacklevel=4)

    def _print_unwritten(self, rows: list[dict[str, Any]], error: BaseException) -> None:
        if not rows:
            return
        import sys
        out = self.err or sys.stderr
        try:
            for r in rows:
                print(f"replicheck: could not write counterexample {r['counterexample_id'][:16]} ({r['signature']}) "
                      f"to the corpus at {self.root} ({type(error).__name__}: {error}); it follows, replayable "
                      f"(harness.corpus.row_from_text, decode_counterexample):\n{replayable_text(r)}",
                      file=out, flush=True)
                self._printed.add(r["counterexample_id"])
        except Exception:  # stderr itself failing: the warning still names the write
            pass


def run_machine(machine_cls: type, settings: Any = None, corpus_dir: Path | str | None = None, *,
                writer: Optional[CorpusWriter] = None, test_id: Optional[str] = None,
                reduce_s: Optional[float] = None) -> None:
    """``run_state_machine_as_test(machine_cls, settings=settings)`` with the corpus:
    the final (shrunk) failure is written as counterexample rows — reduced first,
    within ``reduce_s`` seconds in all, when given (``reduce_failure``) — and
    a runs row either way; the failure is re-raised. Give ``writer`` (it writes
    the counterexample rows at once, ``CorpusWriter.record``; the caller flushes
    the rest) or ``corpus_dir`` (flushed here; a failed write is printed and
    warned about, never raised over the run's own outcome)."""
    from hypothesis.stateful import run_state_machine_as_test
    own = writer is None
    if own:
        if corpus_dir is None:
            raise ValueError("run_machine needs corpus_dir or writer")
        writer = CorpusWriter(corpus_dir)
    assert writer is not None
    run = RunObserver(machine_cls, test_id, settings)
    try:
        with run:
            run_state_machine_as_test(machine_cls, settings=settings)
    finally:
        writer.record(run, reduce_s)
        if own:
            writer.close()
            try:
                writer.flush()
            except OSError:  # printed and warned about by the writer
                pass


# ------------------------------------------------------------------ reading

@attrs.define
class CorpusRead:
    """What reading one table gave: ``rows`` (dicts) of every readable file,
    ``files`` (the files read) and ``skipped`` (``harness.schema.Skipped``:
    each file or folder not read, with why)."""

    rows: list[dict[str, Any]]
    files: list[Location]
    skipped: list[Skipped]

    @property
    def problems(self) -> list[str]:
        """One line per file or folder skipped: ``PATH: REASON``."""
        return [str(s) for s in self.skipped]


def corpus_files(root: Path | str | Location, table: str) -> list[Location]:
    """The table's candidate data files (``harness.schema.list_table``): the
    ``*.parquet`` files of its ``run_date=YYYY-MM-DD`` folders, sorted; names
    starting with ``.`` or ``_`` (files being written) are not part of the
    corpus. Whether each can be read is ``read_table_rows``'s question.
    ``root``: a folder path or a URI (``harness.corpus_fs.location``)."""
    files, _ = list_table(location(root) / table)
    return sorted(files)


def _partition_values(path: Location) -> dict[str, str]:
    """``{"run_date": "YYYY-MM-DD"}`` from the partition folder holding ``path``
    (``list_table`` reads no deeper)."""
    k, sep, v = path.parent.name.partition("=")
    return {k: v} if sep else {}


def read_file_rows(path: Location, columns: Optional[Sequence[str]] = None) -> list[dict[str, Any]]:
    """The rows of one corpus file (``columns`` only, when given) as dicts,
    unchecked: for a reader that has chosen its files already (the live view).
    Raises what pyarrow raises for a file it cannot read."""
    with opened(path) as (_, source):
        return pq.read_table(source, columns=None if columns is None else list(columns)).to_pylist()


def read_table_rows(root: Path | str | Location, table: str, warn: bool = True) -> CorpusRead:
    """The rows of every readable file of ``table`` under the corpus ``root``:
    dicts in schema order (an older file's missing columns as None), plus
    ``run_date`` (``"YYYY-MM-DD"``, from the partition folder) and ``_file`` (the
    path, a str); map columns as dicts.

    Files are chosen by ``harness.schema.table_files``. Every file or folder of
    the table that is not read is in ``.skipped`` with why (``.problems``: one
    line each) — a file that is not ``*.parquet``, outside or below the
    partition folders, empty, not Parquet or truncated, unreadable, a link loop;
    a stray folder or ``run_date=notadate``; a folder that cannot be listed; a
    file of another schema (missing columns, a column of another type) or of a
    newer schema version — and, unless ``warn`` is false, warned as a
    ``CorpusWarning``. The other files are still read. Never raises for the
    corpus's content; a missing ``root`` or table folder gives no rows.
    ``root``: a folder path, or a URI pyarrow opens (``harness.corpus_fs``;
    ``CorpusLocationError``, a ValueError, for one it cannot)."""
    listing = table_files(location(root), table)
    result = CorpusRead([], [], list(listing.skipped))
    for path in listing.files:
        try:
            rows = file_table(path, table).to_pylist()
        except Exception as e:  # a data page corrupt behind a sound footer, a file gone since
            result.skipped.append(Skipped(path, f"cannot be read ({type(e).__name__}: {' '.join(str(e).split())})"))
            continue
        extra = _partition_values(path)
        for r in rows:
            r.update(extra)
            r["_file"] = str(path)
            for key in ("rule_counts", "action_counts", "event_counts"):
                if isinstance(r.get(key), list):
                    r[key] = dict(r[key])
        result.rows.extend(rows)
        result.files.append(path)
    if warn:
        for p in result.problems:
            warnings.warn(p, CorpusWarning, stacklevel=2)
    return result


def read_counterexamples(root: Path | str | Location, warn: bool = True) -> CorpusRead:
    """``read_table_rows(root, "counterexamples", warn)``."""
    return read_table_rows(root, COUNTEREXAMPLES, warn)


def read_runs(root: Path | str | Location, warn: bool = True) -> CorpusRead:
    """``read_table_rows(root, "runs", warn)``."""
    return read_table_rows(root, RUNS, warn)


def unique_counterexamples(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per counterexample_id (the earliest found), ordered by signature,
    length and id."""
    best: dict[str, dict[str, Any]] = {}
    for r in rows:
        cur = best.get(r["counterexample_id"])
        if cur is None or (r["found_at"], r["_file"]) < (cur["found_at"], cur["_file"]):
            best[r["counterexample_id"]] = r
    return sorted(best.values(), key=lambda r: (r["signature"], r["step_count"], r["counterexample_id"]))


def find_by_id(rows: Sequence[dict[str, Any]], ident: str, where: str = "the corpus") -> dict[str, Any]:
    """The counterexample whose id is ``ident`` or starts with it (unique prefix)."""
    unique = unique_counterexamples(rows)
    exact = [r for r in unique if r["counterexample_id"] == ident]
    matches = exact or [r for r in unique if r["counterexample_id"].startswith(ident)]
    if len(matches) == 1:
        return matches[0]
    signatures = {r["signature"] for r in unique}
    if not matches:
        raise CounterexampleNotFound(
            f"no counterexample with id {ident!r} in {where}: it holds {len(unique)} counterexample id(s) "
            f"of {len(signatures)} signature(s). Use --list to see them, or --signature SIG to replay the "
            f"shortest counterexample of a signature.")
    raise CounterexampleNotFound(
        f"id prefix {ident!r} is ambiguous in {where}: {len(matches)} ids start with it: "
        + ", ".join(r["counterexample_id"][:16] for r in matches[:10]) + ("…" if len(matches) > 10 else ""))


def shortest_of_signature(rows: Sequence[dict[str, Any]], sig: str, where: str = "the corpus") -> dict[str, Any]:
    """The shortest counterexample (fewest steps, then earliest, then id) of a signature."""
    unique = unique_counterexamples(rows)
    members = [r for r in unique if r["signature"] == sig]
    if not members:
        sigs = Counter(r["signature"] for r in unique)
        listing = "\n  ".join(f"{n:4}  {s}" for s, n in sorted(sigs.items()))
        raise CounterexampleNotFound(
            f"no counterexample with signature {sig!r} in {where} ({len(sigs)} signature(s)"
            + (f"):\n  {listing}" if sigs else ")"))
    return min(members, key=lambda r: (r["step_count"], r["found_at"], r["counterexample_id"]))


@attrs.frozen
class DecodedCounterexample:
    """A corpus row decoded for replay."""

    config: Any
    actions: tuple
    variants: frozenset
    bugs: frozenset
    prop: str
    kind: str
    counterexample_id: str
    signature: str
    implementation: Any = None   # the factory the row was found with (None: the bundled SUT)
    #: Whether replaying the row checks the properties: always for a property
    #: violation; otherwise unless its implementation's runs report none
    #: (``harness.implementations.reports_properties``: "kafka").
    check_properties: bool = True

    def __iter__(self) -> Iterator[Any]:
        """``config, actions, variants, bugs = decode_counterexample(row)``."""
        return iter((self.config, self.actions, self.variants, self.bugs))

    @property
    def expected_to_fail(self) -> bool:
        """Whether a replay must still show this failure (the regression rule of
        ``harness.pytest_plugin``): a property violation recorded with a protocol
        variant on, or a divergence recorded with a SUT bug (or variant) on — the
        flaw was put there on purpose and must stay detected. Everything else (the
        correct protocol and the correct SUT failing, or any harness error) was a
        real bug, and must now be fixed."""
        if self.kind == "property":
            return bool(self.variants)
        if self.kind == "divergence":
            return bool(self.bugs or self.variants)
        return False


def decode_counterexample(row: dict[str, Any]) -> DecodedCounterexample:
    """(config, actions, variants, bugs) of a ``counterexamples`` row; raises
    ``trace_codec.TraceDecodeError`` naming what cannot be decoded."""
    from .trace_codec import TraceDecodeError, bugs_from_names, config_from_json, decode_steps, variants_from_names

    version = row.get("schema_version")
    if version is not None and version > SCHEMA_VERSION:
        raise TraceDecodeError(f"counterexample {row.get('counterexample_id')} has schema version {version}, "
                               f"newer than {SCHEMA_VERSION}; upgrade replicheck")
    config = config_from_json(row["config_json"])
    variants = variants_from_names(row.get("variants") or ()) | config.variants
    if variants != config.variants:
        config = attrs.evolve(config, variants=variants)
    from .implementations import named, reports_properties
    try:
        implementation = named(row.get("implementation"))
    except ValueError as e:
        raise TraceDecodeError(str(e)) from None
    # A disagreement of an implementation whose runs report no property replays
    # with them off, as it may have been found; one found with them on has no
    # property failing before it, so it replays the same way.
    check = row["kind"] == "property" or reports_properties(row.get("implementation"))
    return DecodedCounterexample(config, decode_steps(row.get("steps") or []), variants,
                                 bugs_from_names(row.get("sut_bugs") or ()), row["property"], row["kind"],
                                 row["counterexample_id"], row["signature"], implementation, check)


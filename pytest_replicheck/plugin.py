"""pytest plugin: the counterexample corpus for every ReplicationMachine test,
and ``--replay-corpus`` regression tests. A plugin of the installed package (the
``pytest11`` entry point ``pytest_replicheck.plugin`` in pyproject.toml), so its
options work in every folder, outside the project too; ``-p
pytest_replicheck.plugin`` is the same plugin, ``-p no:pytest_replicheck.plugin``
turns it off.

Recording. A test is a machine test when it is a ``ReplicationMachine``
subclass's ``TestCase``. For each, the worker that ran it (the main process, or
any xdist worker) records one ``runs`` row — passing or failing — and, when it
failed, the counterexample(s) of the exception Hypothesis raised out of the test:
the final, shrunk failure (the intermediate shrinks never leave Hypothesis), one
row per failing property. The counterexample rows are written as soon as the
test ends (``store.writer.CorpusWriter.record``: temp file, fsync, link),
before the test is reported; ``runs`` rows within ``FLUSH_EVERY_S`` seconds,
and the rest at the end of the session, under the session's ``run_id`` (shared
by the xdist workers). The summary's ``replicheck replay DIR --id ID`` lines
name only counterexamples on disk; one that could not be written (disk full, an
unwritable corpus) is printed instead, replayable (``store.writer.replayable_text``),
on stderr when it is found and again in the summary. SIGTERM (``timeout``, a CI runner, ``docker
stop``) ends the session as Ctrl-C does, so the session's rows are written;
a SIGKILL loses at most the test in flight and the last seconds' ``runs`` rows.
Options:

- ``--corpus-dir DIR`` (else ``$REPLICHECK_CORPUS``, else ``corpus/`` at the
  rootdir, git-ignored);
- ``--no-corpus``: record nothing.

Regression tests. ``pytest --replay-corpus DIR`` adds one test per
counterexample of the corpus at DIR (deduplicated by id). Without file or
directory arguments only these run (nothing else is collected, wherever pytest
runs); with arguments they run alongside. Each applies the regression rule
(``campaign.regression``): a known flaw's counterexample must still fail the
same way; one of the correct protocol and SUT must not fail any more.

A trace the model no longer enables fails its test naming the step and reason.
Every file or folder of the corpus that cannot be read (``store.schema.
table_files``: not ``*.parquet``, empty, corrupt or truncated, unreadable, of
another schema or a newer version, a stray folder or ``run_date=notadate``, a
folder that cannot be listed) is one failing test, ``DIR::unreadable[PATH]``,
whose report is the one line ``PATH: REASON``: the session fails, the summary
counts them, and the other files' counterexamples still run. So is every row
that breaks the schema's non-null rules (a null ``signature``,
``counterexample_id``, ``step_count``, ``variants``, …):
``DIR::unreadable[PATH#rowN]``, its line naming the row's index, id and column;
the file's other rows still run. A counterexample whose trace or configuration
is null (``steps``, ``config_json``) is collected, and its test fails: "cannot be
decoded: steps is null: …".

Implementation under test. ``pytest --implementation NAME`` (NAME as
``check.implementations.named`` takes it: ``kafka``, or ``module:qualname`` of
a factory ``Config -> implementation``) puts NAME, instead of the bundled SUT,
in the machine a test module builds with ``machine_under_test`` (the suite's
``TestModelAndSut`` in tests/check/test_machine.py), under the profile NAME
needs (``check.implementations.subject_for``: kafka runs under the Kafka
profile, detached at its findings). So
``pytest tests/check/test_machine.py::TestModelAndSut --implementation kafka``
runs that machine test, with the session's Hypothesis profile and corpus,
against Kafka's own code. A name that cannot be loaded, or an implementation
that cannot be built here (Kafka's classes missing), is a usage error naming it.
"""

from __future__ import annotations

import os
import signal
import threading
import warnings
from pathlib import Path
from typing import Any, Optional

import pytest

from campaign.record import record
from campaign.regression import CorpusRegression, check_regression, check_regression_elsewhere
from check.implementations import runs_elsewhere, subject_for, unavailable, with_release
from check.machine import ReplicationMachine, machine_for
from check.replay import TraceNotEnabled
from check.statistics import RunObserver
from check.subject import Subject
from store.codec import TraceDecodeError
from store.errors import CorpusWarning
from store.fs import open_corpus
from store.reader import read_counterexamples, unique_counterexamples
from store.schema import row_target
from store.writer import ENV_CORPUS, CorpusWriter, new_run_id, replayable_text, worker_id

_STATE = pytest.StashKey["_CorpusSession"]()
_OBSERVER = pytest.StashKey[Any]()
_PROPERTY = "replicheck_counterexamples"
#: The report property of counterexamples that could not be written: replayable lines.
_UNWRITTEN_PROPERTY = "replicheck_unwritten"
#: (nodeid, id, signature, corpus dir) of the counterexamples written this session,
#: gathered from the test reports (so on the xdist controller too) for the summary.
_RECORDED: list[tuple[str, str, str, str]] = []
#: (nodeid, replayable line) of the counterexamples that could not be written.
_UNWRITTEN: list[tuple[str, str]] = []
#: The session's ``--implementation`` (None: the bundled SUT), set at configure
#: time so that test modules, imported later at collection, can read it.
_IMPLEMENTATION: Optional[str] = None


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("replicheck", "replicheck counterexample corpus")
    group.addoption("--corpus-dir", default=None, metavar="DIR",
                    help="write the counterexample corpus (Parquet) of machine tests here "
                         "(default: $REPLICHECK_CORPUS, else corpus/ at the rootdir)")
    group.addoption("--no-corpus", action="store_true", default=False,
                    help="do not write the counterexample corpus")
    group.addoption("--replay-corpus", default=None, metavar="DIR",
                    help="collect every counterexample of the corpus at DIR as a regression test (alone: "
                         "only these run; a file or folder of DIR that cannot be read is a failing test "
                         "naming it)")
    group.addoption("--implementation", default=None, metavar="NAME",
                    help="run the implementation machine test (TestModelAndSut, pytest_replicheck.plugin."
                         "machine_under_test) against NAME instead of the bundled SUT, under the profile NAME "
                         "needs: kafka (Kafka's own code, Kafka profile, detached at findings) or module:qualname "
                         "of a factory (chapters profile)")
    group.addoption("--kafka-version", default=None, metavar="X.Y.Z",
                    help="with --implementation kafka: Kafka's own code of this release instead of the pinned "
                         "one (kafka_bridge.releases.RELEASES; `make kafka-jars KAFKA_VERSION=X.Y.Z` fetches it)")


class _CorpusSession:
    def __init__(self, config: pytest.Config) -> None:
        self.enabled = not config.getoption("no_corpus")
        chosen = config.getoption("corpus_dir") or os.environ.get(ENV_CORPUS) or None
        self.corpus_dir: Path = Path(chosen) if chosen else Path(config.rootpath) / "corpus"
        workerinput = getattr(config, "workerinput", None) or {}
        self.run_id: str = workerinput.get("testrunuid") or new_run_id()
        self.worker: str = workerinput.get("workerid") or ("main" if not workerinput else worker_id())
        self._writer: Any = None

    @property
    def writer(self) -> Any:
        if self._writer is None:
            self._writer = CorpusWriter(self.corpus_dir, self.run_id, self.worker)
        return self._writer

    def flush(self) -> list[Path]:
        """Write the rows still buffered; a failure is a warning (the writer has
        printed the counterexamples it could not write)."""
        if self._writer is None:
            return []
        self._writer.close()
        try:
            return self._writer.flush()
        except Exception as e:  # never fail the session over the corpus, but say so
            warnings.warn(CorpusWarning(f"could not write the counterexample corpus to {self.corpus_dir}: "
                                        f"{type(e).__name__}: {e}"))
            return []


_PREVIOUS_SIGTERM = pytest.StashKey[Any]()


def _interrupt_on_sigterm(signum: int, frame: Any) -> None:
    """SIGTERM as Ctrl-C: pytest ends the session (``pytest_sessionfinish``
    writes the rows). Once: a second SIGTERM must not cut the writing short."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise KeyboardInterrupt(f"stopped by {signal.Signals(signum).name}")


def _install_sigterm(config: pytest.Config) -> None:
    """Turn SIGTERM into KeyboardInterrupt in this process (the main process or
    an xdist worker) when the corpus is recorded, SIGTERM still has its default
    action, and this is the main thread."""
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return
    config.stash[_PREVIOUS_SIGTERM] = signal.signal(signal.SIGTERM, _interrupt_on_sigterm)


def pytest_configure(config: pytest.Config) -> None:
    global _IMPLEMENTATION
    config.stash[_STATE] = _CorpusSession(config)
    if config.stash[_STATE].enabled:
        _install_sigterm(config)
    config.addinivalue_line("markers", "corpus_replay: a counterexample of --replay-corpus replayed as a "
                                       "regression test")
    try:
        name = with_release(config.getoption("implementation", None), config.getoption("kafka_version", None))
    except ValueError as e:
        raise pytest.UsageError(str(e)) from None
    if name is not None:
        try:
            subject_for(name)
        except ValueError as e:
            raise pytest.UsageError(f"--implementation: {e}") from None
        why = unavailable(name)
        if why is not None:
            raise pytest.UsageError(f"--implementation {name}: unavailable here: {why}")
    _IMPLEMENTATION = name


def pytest_unconfigure(config: pytest.Config) -> None:
    global _IMPLEMENTATION
    _IMPLEMENTATION = None
    previous = config.stash.get(_PREVIOUS_SIGTERM, None)
    if previous is not None:
        signal.signal(signal.SIGTERM, previous)
        del config.stash[_PREVIOUS_SIGTERM]


def machine_under_test(name: str = "ModelAndSutMachine") -> type:
    """The ``ReplicationMachine`` subclass (named ``name``) of a test module's
    implementation machine test: the bundled SUT in lockstep with the model
    (``Subject(compare=True)``), or under ``pytest --implementation NAME`` the
    implementation NAME with the profile and property checks it needs
    (``check.implementations.subject_for``). Call it at module level: test
    modules are imported after the option is read (outside pytest, or before
    configuration, it is the bundled SUT)."""
    if _IMPLEMENTATION is None:
        return machine_for(Subject(compare=True), name=name)
    return machine_for(subject_for(_IMPLEMENTATION), name=name)


def _machine_class(item: pytest.Item) -> Optional[type]:
    """The ReplicationMachine subclass whose ``TestCase`` this item runs, or None."""
    obj = getattr(item, "obj", None)
    cls = getattr(obj, "_hypothesis_state_machine_class", None)
    if cls is None:
        return None
    return cls if isinstance(cls, type) and issubclass(cls, ReplicationMachine) else None


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_runtest_call(item: pytest.Item):  # type: ignore[no-untyped-def]
    # Innermost of the wrappers, so that the Hypothesis statistics collector set
    # here sees the run (and passes the statistics on to Hypothesis's own).
    session = item.config.stash.get(_STATE, None)
    cls = _machine_class(item) if session is not None and session.enabled else None
    if cls is None:
        yield
        return
    observer = RunObserver(cls, test_id=item.nodeid, settings=getattr(getattr(item, "cls", None), "settings", None))
    item.stash[_OBSERVER] = observer
    observer.start()
    try:
        yield
    finally:
        observer.stop()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):  # type: ignore[no-untyped-def]
    outcome = yield
    if call.when != "call":
        return
    observer = item.stash.get(_OBSERVER, None)
    session = item.config.stash.get(_STATE, None)
    if observer is None or session is None:
        return
    del item.stash[_OBSERVER]
    exc = call.excinfo.value if call.excinfo is not None else None
    if isinstance(exc, Exception) and not isinstance(exc, pytest.skip.Exception):
        observer.fail(exc)
    writer = session.writer
    try:
        rows = record(writer, observer)   # the counterexamples are written (or printed) here
    except Exception as e:  # recording must never hide the test's own outcome
        warnings.warn(CorpusWarning(f"{item.nodeid}: could not record the run in the corpus: "
                                    f"{type(e).__name__}: {e}"))
        return
    if rows:
        on_disk = set(writer.written_ids)
        report = outcome.get_result()
        written = [(r["counterexample_id"], r["signature"], str(session.corpus_dir)) for r in rows
                   if r["counterexample_id"] in on_disk]
        if written:
            report.user_properties.append((_PROPERTY, written))
        unwritten = [replayable_text(r) for r in rows if r["counterexample_id"] not in on_disk]
        if unwritten:
            report.user_properties.append((_UNWRITTEN_PROPERTY, unwritten))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    # Runs on the controller too (xdist forwards reports with their user_properties).
    for name, value in getattr(report, "user_properties", ()):
        if name == _PROPERTY:
            _RECORDED.extend((report.nodeid, *v) for v in value)
        elif name == _UNWRITTEN_PROPERTY:
            _UNWRITTEN.extend((report.nodeid, line) for line in value)



def pytest_sessionfinish(session: pytest.Session) -> None:
    state = session.config.stash.get(_STATE, None)
    if state is not None:
        state.flush()


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """How to replay each counterexample written this session (only ids on
    disk), and, replayable, each one that could not be written."""
    if _UNWRITTEN:   # (the worker that found them printed them to stderr too)
        terminalreporter.section("replicheck counterexamples NOT written to the corpus", red=True)
        terminalreporter.write_line("the corpus could not be written; each line replays with "
                                    "store.decode.decode_counterexample(store.writer.row_from_text(LINE)):")
        for nodeid, line in dict.fromkeys(_UNWRITTEN):
            terminalreporter.write_line(f"{nodeid}:")
            terminalreporter.write_line(line)
        _UNWRITTEN.clear()
    if not _RECORDED:
        return
    seen = set()
    terminalreporter.section("replicheck counterexample corpus")
    for nodeid, ident, sig, corpus in _RECORDED:
        if (nodeid, ident) in seen:
            continue
        seen.add((nodeid, ident))
        terminalreporter.write_line(f"{nodeid}: {sig}")
        terminalreporter.write_line(f"    replicheck replay {corpus} --id {ident[:16]}")
    _RECORDED.clear()


class CounterexampleItem(pytest.Item):
    """One counterexample of ``--replay-corpus``, replayed as a regression test."""

    def __init__(self, *, row: dict[str, Any], **kw: Any) -> None:
        super().__init__(**kw)
        self.row = row
        self.add_marker("corpus_replay")

    def runtest(self) -> None:
        if runs_elsewhere(self.row.get("implementation")) is not None:
            # this process's JVM runs another Kafka release's classes: a process of its own
            check_regression_elsewhere(str(self.config.getoption("replay_corpus")), self.row["counterexample_id"])
        else:
            check_regression(self.row)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        e = excinfo.value
        if isinstance(e, CorpusRegression):
            return str(e)
        if isinstance(e, TraceNotEnabled):
            return (f"counterexample {self.row['counterexample_id']} ({self.row.get('_file')}) cannot be replayed "
                    f"any more: {e}")
        if isinstance(e, TraceDecodeError):
            return f"counterexample {self.row['counterexample_id']} ({self.row.get('_file')}) cannot be decoded: {e}"
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Any, Optional[int], str]:
        return self.path, None, f"counterexample {self.row['counterexample_id'][:16]} [{self.row['signature']}]"


class CorpusFileUnreadable(Exception):
    """A file or folder of ``--replay-corpus`` that could not be read."""


class UnreadableCorpusFileItem(pytest.Item):
    """A file or folder of ``--replay-corpus`` that cannot be read, as a failing
    test: its counterexamples (if any) are not replayed. The report is one line,
    ``PATH: REASON``."""

    def __init__(self, *, problem: str, **kw: Any) -> None:
        super().__init__(**kw)
        self.problem = problem
        self.add_marker("corpus_replay")

    def runtest(self) -> None:
        raise CorpusFileUnreadable(self.problem)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, CorpusFileUnreadable):
            return self.problem
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Any, Optional[int], str]:
        return self.path, None, self.name


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session: pytest.Session) -> None:
    """``--replay-corpus`` without file or folder arguments collects nothing but
    the corpus: not the invocation folder, not ``testpaths``."""
    config = session.config
    if config.getoption("replay_corpus", None) and config.args_source != pytest.Config.ArgsSource.ARGS:
        config.args = []


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    directory = config.getoption("replay_corpus", None)
    if not directory:
        return
    root, problem = open_corpus(directory)   # a folder path, or a URI (store.fs)
    if root is None:
        raise pytest.UsageError(f"--replay-corpus {directory}: {problem}")
    read = read_counterexamples(root, warn=False)
    local = isinstance(root, Path)   # a remote corpus's items are placed at the rootdir
    for skipped in read.skipped:
        where = skipped.path.relative_to(root) if skipped.path.is_relative_to(root) else skipped.path
        name = f"unreadable[{where}]" if skipped.row is None else f"unreadable[{where}#row{skipped.row}]"
        items.append(UnreadableCorpusFileItem.from_parent(session, name=name, nodeid=f"{root.name}::{name}",
                                                          path=root.resolve() if local else config.rootpath,
                                                          problem=str(skipped)))
    for row in unique_counterexamples(read.rows):
        label = row_target(row["variants"], row["sut_bugs"], row["test_id"])
        name = f"{row['property']}[{label}-{row['counterexample_id'][:12]}]"
        items.append(CounterexampleItem.from_parent(session, name=name, nodeid=f"{root.name}::{name}",
                                                    path=Path(row["_file"]).resolve() if local else config.rootpath,
                                                    row=row))

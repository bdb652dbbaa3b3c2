"""pytest plugin: the counterexample corpus for every ReplicationMachine test,
and ``--replay-corpus`` regression tests. A plugin of the installed package (the
``pytest11`` entry point ``harness.pytest_plugin`` in pyproject.toml), so its
options work in every folder, outside the project too; ``-p
harness.pytest_plugin`` is the same plugin, ``-p no:harness.pytest_plugin``
turns it off.

Recording. A test is a machine test when it is a ``ReplicationMachine``
subclass's ``TestCase``. For each, the worker that ran it (the main process, or
any xdist worker) records one ``runs`` row — passing or failing — and, when it
failed, the counterexample(s) of the exception Hypothesis raised out of the test:
the final, shrunk failure (the intermediate shrinks never leave Hypothesis), one
row per failing property. The counterexample rows are written as soon as the
test ends (``harness.corpus.CorpusWriter.record``: temp file, fsync, link),
before the test is reported; ``runs`` rows within ``FLUSH_EVERY_S`` seconds,
and the rest at the end of the session, under the session's ``run_id`` (shared
by the xdist workers). The summary's ``replicheck replay DIR --id ID`` lines
name only counterexamples on disk; one that could not be written (disk full, an
unwritable corpus) is printed instead, replayable (``harness.corpus.replayable_text``),
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
runs); with arguments they run alongside. The rule, as a Kafka engineer reads a
corpus:

- a property violation recorded with a protocol **variant** on, or a divergence
  recorded with a **SUT bug** on, is a known flaw put there on purpose: the test
  asserts the replay *still fails the same way* (same property; a divergence), so
  the checker keeps its teeth;
- a counterexample of the **correct protocol and correct SUT** (no variant, no
  bug — or a property failure under a SUT bug, which the model alone produced —
  or any harness error) was a real bug: the test asserts the replay now finds
  *no* violation and no divergence, so a fixed bug stays fixed.

A trace the model no longer enables fails its test naming the step and reason.
Every file or folder of the corpus that cannot be read (``harness.schema.
table_files``: not ``*.parquet``, empty, corrupt or truncated, unreadable, of
another schema or a newer version, a stray folder or ``run_date=notadate``, a
folder that cannot be listed) is one failing test, ``DIR::unreadable[PATH]``,
whose report is the one line ``PATH: REASON``: the session fails, the summary
counts them, and the other files' counterexamples still run.

Implementation under test. ``pytest --implementation NAME`` (NAME as
``harness.implementations.named`` takes it: ``kafka``, or ``module:qualname`` of
a factory ``Config -> implementation``) puts NAME, instead of the bundled SUT,
in the machine a test module builds with ``machine_under_test`` (the suite's
``TestModelAndSut`` in tests/harness/test_machine.py), under the profile NAME
needs (``harness.implementations.machine_options``: kafka runs under the Kafka
profile, detached at its findings). So
``pytest tests/harness/test_machine.py::TestModelAndSut --implementation kafka``
runs that machine test, with the session's Hypothesis profile and corpus,
against Kafka's own code. A name that cannot be loaded, or an implementation
that cannot be built here (Kafka's classes missing), is a usage error naming it.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any, Optional

import pytest

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
                    help="run the implementation machine test (TestModelAndSut, harness.pytest_plugin."
                         "machine_under_test) against NAME instead of the bundled SUT, under the profile NAME "
                         "needs: kafka (Kafka's own code, Kafka profile, detached at findings) or module:qualname "
                         "of a factory (chapters profile)")


class _CorpusSession:
    def __init__(self, config: pytest.Config) -> None:
        from .corpus import ENV_CORPUS, new_run_id, worker_id

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
            from .corpus import CorpusWriter
            self._writer = CorpusWriter(self.corpus_dir, self.run_id, self.worker)
        return self._writer

    def flush(self) -> list[Path]:
        """Write the rows still buffered; a failure is a warning (the writer has
        printed the counterexamples it could not write)."""
        if self._writer is None:
            return []
        from .corpus import CorpusWarning
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
    import signal
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise KeyboardInterrupt(f"stopped by {signal.Signals(signum).name}")


def _install_sigterm(config: pytest.Config) -> None:
    """Turn SIGTERM into KeyboardInterrupt in this process (the main process or
    an xdist worker) when the corpus is recorded, SIGTERM still has its default
    action, and this is the main thread."""
    import signal
    import threading
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
    name = config.getoption("implementation", None)
    if name is not None:
        from .implementations import machine_options, unavailable
        try:
            machine_options(name)
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
        import signal
        signal.signal(signal.SIGTERM, previous)
        del config.stash[_PREVIOUS_SIGTERM]


def machine_under_test(name: str = "ModelAndSutMachine") -> type:
    """The ``ReplicationMachine`` subclass (named ``name``) of a test module's
    implementation machine test: the bundled SUT in lockstep with the model
    (``machine_for(compare_sut=True)``), or under ``pytest --implementation NAME``
    the implementation NAME with the profile and property checks it needs
    (``harness.implementations.machine_options``). Call it at module level: test
    modules are imported after the option is read (outside pytest, or before
    configuration, it is the bundled SUT)."""
    from .machine import machine_for
    if _IMPLEMENTATION is None:
        return machine_for(compare_sut=True, name=name)
    from .implementations import machine_options
    return machine_for(**machine_options(_IMPLEMENTATION), name=name)


def _machine_class(item: pytest.Item) -> Optional[type]:
    """The ReplicationMachine subclass whose ``TestCase`` this item runs, or None."""
    obj = getattr(item, "obj", None)
    cls = getattr(obj, "_hypothesis_state_machine_class", None)
    if cls is None:
        return None
    from .machine import ReplicationMachine
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
    from .corpus import RunObserver
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
        rows = writer.record(observer)   # the counterexamples are written (or printed) here
    except Exception as e:  # recording must never hide the test's own outcome
        from .corpus import CorpusWarning
        warnings.warn(CorpusWarning(f"{item.nodeid}: could not record the run in the corpus: "
                                    f"{type(e).__name__}: {e}"))
        return
    if rows:
        from .corpus import replayable_text
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
                                    "harness.corpus.decode_counterexample(harness.corpus.row_from_text(LINE)):")
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


# --------------------------------------------------------------- regressions

class CorpusRegression(AssertionError):
    """A replayed counterexample did not behave as the regression rule expects."""


def regression_failure(decoded: Any, row: dict[str, Any], result: Any) -> Optional[str]:
    """Why replaying a counterexample breaks the regression rule (module doc), or
    None when it holds: a counterexample expected to fail (a variant's property, a
    SUT bug's divergence) must fail the same way; any other must not fail."""
    from .replay import reproduces

    flaws = ", ".join([f"variant {v.name}" for v in sorted(decoded.variants, key=lambda v: v.name)]
                      + [f"SUT bug {b.name}" for b in sorted(decoded.bugs, key=lambda b: b.name)])
    where = f"counterexample {decoded.counterexample_id} ({row.get('test_id')}, {row.get('_file')})"
    if decoded.expected_to_fail:
        if reproduces(result, decoded.prop, decoded.kind):
            return None
        got = "no failure" if not result.failed else \
            f"{', '.join(result.property_names)} after step {result.failed_at}"
        return (f"{where}\nrecorded with {flaws}: expected {decoded.prop} ({decoded.kind}) to still fail, "
                f"but the replay of {len(decoded.actions)} steps found {got}.\n"
                f"recorded violation:\n  {row.get('violation')}\n\nreplay:\n{result.report()}")
    if not result.failed:
        return None
    return (f"{where}\na counterexample of the correct protocol" + (f" (run with {flaws})" if flaws else "")
            + f" fails again: {', '.join(result.property_names)} after step {result.failed_at}\n\n"
            + result.report())


def check_regression(row: dict[str, Any]) -> None:
    """Replay a ``counterexamples`` row and apply the regression rule: raises
    ``CorpusRegression`` saying why it breaks it, ``TraceNotEnabled`` or
    ``TraceDecodeError`` when it cannot be replayed; skips (pytest) a divergence
    when the sut package is not importable."""
    from .corpus import decode_counterexample
    from .replay import replay, sut_available

    decoded = decode_counterexample(row)
    if decoded.kind == "divergence" and not sut_available():
        pytest.skip("a divergence counterexample needs the sut package to replay")
    result = replay(decoded.actions, decoded.config, decoded.variants, decoded.bugs,
                    implementation=decoded.implementation, check_properties=decoded.check_properties)
    problem = regression_failure(decoded, row, result)
    if problem is not None:
        raise CorpusRegression(problem)


class CounterexampleItem(pytest.Item):
    """One counterexample of ``--replay-corpus``, replayed as a regression test."""

    def __init__(self, *, row: dict[str, Any], **kw: Any) -> None:
        super().__init__(**kw)
        self.row = row
        self.add_marker("corpus_replay")

    def runtest(self) -> None:
        check_regression(self.row)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        from .replay import TraceNotEnabled
        from .trace_codec import TraceDecodeError
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
    from .corpus import read_counterexamples, unique_counterexamples

    from .corpus_fs import open_corpus
    root, problem = open_corpus(directory)   # a folder path, or a URI (harness.corpus_fs)
    if root is None:
        raise pytest.UsageError(f"--replay-corpus {directory}: {problem}")
    read = read_counterexamples(root, warn=False)
    local = isinstance(root, Path)   # a remote corpus's items are placed at the rootdir
    for skipped in read.skipped:
        where = skipped.path.relative_to(root) if skipped.path.is_relative_to(root) else skipped.path
        name = f"unreadable[{where}]"
        items.append(UnreadableCorpusFileItem.from_parent(session, name=name, nodeid=f"{root.name}::{name}",
                                                          path=root.resolve() if local else config.rootpath,
                                                          problem=str(skipped)))
    for row in unique_counterexamples(read.rows):
        label = "+".join(row["variants"] + row["sut_bugs"]) or "correct"
        name = f"{row['property']}[{label}-{row['counterexample_id'][:12]}]"
        items.append(CounterexampleItem.from_parent(session, name=name, nodeid=f"{root.name}::{name}",
                                                    path=Path(row["_file"]).resolve() if local else config.rootpath,
                                                    row=row))

"""Faults against the corpus: of what a run found, what is on disk after the fault.

Usage:
  python benchmarks/fault_matrix.py [--only NAME ...] [--serial]

Each scenario runs real processes — ``pytest`` on generated machine tests, or
``replicheck fuzz`` — injects one fault, and compares what the run found with
what is in the corpus afterwards:

- pytest: a generated module runs a passing machine test, two failing ones
  (HWM_ADVANCES_BELOW_MIN_ISR, the SUT bug PRODUCE_IGNORES_MIN_ISR; derandomized,
  found in a few seconds) and then a test that waits: the fault comes while it
  runs (the test in flight). Found: the 2 counterexamples and 3 runs that
  finished before it, by construction; the summary's ``replicheck replay … --id``
  hints must name only ids on disk.
- ``replicheck fuzz`` on 2 workers, the correct target and the flaws NO_ELR and
  HWM_ADVANCES_BELOW_MIN_ISR: the fault comes once both flaws are reported
  found, while the correct target is searching. Found: the flaws reported (the
  display's ``found`` lines) and the runs the kill matrix reports (when the
  process lives to print it).
- disk full: a failing machine run in this process with every Parquet write
  failing with ENOSPC; its counterexample must be printed, replayable.
- concurrent writers without hard links: processes writing parts under the same
  names with ``os.link`` failing (as on a file system without hard links).
- bad input (``corrupt-page``, ``null-row``): a corpus of two good
  counterexamples beside a file whose data page is corrupt behind a sound
  footer, or a file with a row whose ``signature`` is null and one whose
  ``steps`` are, beside the only good row of one counterexample; every reader
  (``replay --list``, ``replay --id``, ``pytest --replay-corpus``, ``report``)
  reads it in a process of its own. Found: the good counterexamples each read;
  each bad entry must be named in one line and no reader may crash.

The counterexample of a run still in flight when the fault comes (a test, a
machine run) is not counted: it does not exist yet. ``tests/corpus/test_fault_injection.py``
runs these scenarios in CI and asserts that nothing is lost.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import io
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable, Iterator, Optional

import attrs

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

try:
    from store.writer import UNWRITTEN_MARK
except ImportError:  # a checkout from before issue 24, measured for comparison
    UNWRITTEN_MARK = "REPLICHECK-UNWRITTEN-COUNTEREXAMPLE"

#: Where the test in flight of the generated pytest module says it started.
MARKER_ENV = "REPLICHECK_FAULT_MARKER"

PYTEST_MODULE = textwrap.dedent('''
    import os
    import time
    from pathlib import Path

    from hypothesis import HealthCheck, Phase, settings
    from check.machine import machine_for
    from check.subject import Subject
    from model import Variant
    from sut import Bug

    # Derandomized, no shrinking: each failure is found in well under a second.
    FAST = settings(max_examples=1000, stateful_step_count=20, derandomize=True, database=None, deadline=None,
                    suppress_health_check=list(HealthCheck), print_blob=False, report_multiple_bugs=False,
                    phases=(Phase.explicit, Phase.reuse, Phase.generate))

    Passing = machine_for(Subject(compare=False), name="PassingMachine")
    Passing.TestCase.settings = settings(FAST, max_examples=3)
    TestA_Passing = Passing.TestCase

    # The step counts are the derandomized streams' that fail within half a second;
    # an action added to the machine changes the streams (20 steps then took 7 s, over a minute
    # on a loaded runner).
    Hwm = machine_for(Subject(variants=frozenset({Variant.HWM_ADVANCES_BELOW_MIN_ISR})), name="HwmMachine")
    Hwm.TestCase.settings = settings(FAST, stateful_step_count=26)
    TestB_Hwm = Hwm.TestCase

    ProduceBug = machine_for(Subject(bugs=frozenset({Bug.PRODUCE_IGNORES_MIN_ISR})), name="ProduceBugMachine")
    ProduceBug.TestCase.settings = FAST
    TestC_ProduceBug = ProduceBug.TestCase


    def _in_flight():
        marker = Path(os.environ["REPLICHECK_FAULT_MARKER"])
        (marker / str(os.getpid())).write_text(os.environ.get("PYTEST_XDIST_WORKER", "main"))
        for _ in range(1200):            # until released (or 2 minutes)
            if (marker / "release").exists():
                return
            time.sleep(0.1)


    def test_z_in_flight_1():
        _in_flight()


    def test_z_in_flight_2():
        _in_flight()
''')
#: A conftest.py making every Parquet write of the corpus fail as on a full disk.
DISK_FULL_CONFTEST = textwrap.dedent('''
    import errno
    import os

    import pyarrow.parquet as pq


    def _full(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


    pq.write_table = _full
''')
#: The machine tests of PYTEST_MODULE that finish before the tests in flight.
PYTEST_FAILING = ("TestB_Hwm", "TestC_ProduceBug")
PYTEST_RUNS = ("TestA_Passing", "TestB_Hwm", "TestC_ProduceBug")


@attrs.frozen
class Outcome:
    """One fault's result. found / on_disk / printed: counterexamples the run
    found, those in the corpus, those printed replayable instead (not on disk);
    runs_found / runs_on_disk: machine runs completed before the fault (None:
    unknown, the process died before reporting) and ``runs`` rows in the corpus;
    bad_hints: ``--id`` hints naming ids not on disk; note: what the fault cut
    short; status: the process's exit status (negative: the signal that killed
    it; None: none, in process); output: the processes' output, for a failing
    check."""

    fault: str
    found: int
    on_disk: int
    printed: int = 0
    runs_found: Optional[int] = None
    runs_on_disk: int = 0
    bad_hints: int = 0
    note: str = ""
    status: Optional[int] = None
    output: str = ""

    @property
    def lost(self) -> int:
        """Counterexamples found and neither on disk nor printed."""
        return self.found - self.on_disk - self.printed

    @property
    def runs_lost(self) -> Optional[int]:
        """Runs completed before the fault without their row on disk (None: unknown)."""
        return None if self.runs_found is None else max(0, self.runs_found - self.runs_on_disk)


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST_", "REPLICHECK_")) and k != "HYPOTHESIS_PROFILE"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra)
    return env


class StartupFailed(RuntimeError):
    """The process under test ended before the fault could be injected."""


def _wait_for(check: Callable[[], bool], timeout: float, proc: subprocess.Popen, what: str, out: Path) -> None:
    """Wait until ``check()``; StartupFailed (with the end of the process's output
    ``out``) when the process ends first, TimeoutError after ``timeout`` seconds."""
    end = time.monotonic() + timeout
    while not check():
        if proc.poll() is not None:
            raise StartupFailed(f"the process ended (status {proc.returncode}) before {what}:\n"
                               + out.read_text()[-5000:])
        if time.monotonic() > end:
            raise TimeoutError(f"no {what} within {timeout} s:\n" + out.read_text()[-5000:])
        time.sleep(0.1)


def _sigint_as_at_a_terminal() -> None:
    """In the scenario's process before it starts: Ctrl-C is delivered as a
    terminal delivers it to a foreground job, even when the matrix itself runs
    where SIGINT is ignored (a shell's background job, ``nohup … &``), which the
    scenario would otherwise inherit and never see its Ctrl-C."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@contextlib.contextmanager
def _process_group(cmd: list[str], cwd: Path, env: dict[str, str], out_path: Path) -> Iterator[subprocess.Popen]:
    """``cmd`` started in a process group of its own, its output (both streams) to
    ``out_path``; whatever is left of the group is killed on the way out."""
    with open(out_path, "w") as out:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                                preexec_fn=_sigint_as_at_a_terminal)
        try:
            yield proc
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def _finish(proc: subprocess.Popen, timeout: float = 60.0) -> int:
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        return proc.wait()


def _corpus_rows(corpus: Path) -> tuple[list[dict], list[dict]]:
    import warnings

    from store.reader import read_counterexamples, read_runs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return read_counterexamples(corpus).rows, read_runs(corpus).rows


def _hints(text: str) -> list[str]:
    return re.findall(r"replicheck replay \S+ --id ([0-9a-f]+)", text)


# ------------------------------------------------------------------ pytest

def pytest_fault(how: str, work: Optional[Path] = None) -> Outcome:
    """``_pytest_fault``, once more when pytest ended with an internal error
    (status 3) before the fault was injected: pytest-xdist's start-up has failed
    so once in about ten runs on a loaded 2-core machine, which is not what this
    measures (the fault comes after the first failures are reported)."""
    try:
        return _pytest_fault(how, work)
    except StartupFailed as e:
        if "(status 3)" not in str(e):
            raise
        retry = None if work is None else work / "retry"
        if retry is not None:
            retry.mkdir(exist_ok=True)
        return _pytest_fault(how, retry)


def _pytest_fault(how: str, work: Optional[Path] = None) -> Outcome:
    """The generated module under pytest; ``how``: ``sigterm``, ``sigint`` or
    ``sigkill`` to the process group while the test in flight runs;
    ``xdist-worker-sigkill`` (``-n 2``: SIGKILL to the xdist worker running a
    test in flight, once both counterexamples are reported); ``disk-full``
    (every Parquet write fails with ENOSPC, no signal: the session runs to its
    end)."""
    work = Path(work or tempfile.mkdtemp(prefix="fault-pytest-"))
    (work / "test_fault_machines.py").write_text(PYTEST_MODULE)
    marker = work / "marker"
    marker.mkdir()
    if how == "disk-full":
        (work / "conftest.py").write_text(DISK_FULL_CONFTEST)
        (marker / "release").write_text("")
    corpus = work / "corpus"
    xdist = how == "xdist-worker-sigkill"
    cmd = [sys.executable, "-m", "pytest", "-p", "pytest_replicheck.plugin", "-p", "no:cacheprovider", "-v",
           "--corpus-dir", str(corpus), "test_fault_machines.py"] + (["-n", "2"] if xdist else [])
    out_path = work / "out.txt"
    with _process_group(cmd, work, _env(**{MARKER_ENV: str(marker)}), out_path) as proc:
        started = lambda: any(p.name != "release" for p in marker.iterdir())  # noqa: E731
        if xdist:
            reported = lambda: sum(f"{t}::runTest FAILED" in out_path.read_text()  # noqa: E731
                                   or bool(re.search(rf"FAILED test_fault_machines.py::{t}::runTest",
                                                     out_path.read_text()))
                                   for t in PYTEST_FAILING) == len(PYTEST_FAILING)
            _wait_for(lambda: started() and reported(), 120, proc, "test in flight after both failures",
                      out_path)
            pid = int(next(p.name for p in marker.iterdir() if p.name != "release"))
            os.kill(pid, signal.SIGKILL)
            time.sleep(0.5)
            (marker / "release").write_text("")
        elif how != "disk-full":
            _wait_for(started, 120, proc, "test in flight", out_path)
            os.killpg(proc.pid, {"sigterm": signal.SIGTERM, "sigint": signal.SIGINT,
                                 "sigkill": signal.SIGKILL}[how])
        # disk-full runs the whole session to its end, beside the other scenarios on a loaded
        # machine: the timeout is only a net against a hang, never a measure of speed
        status = _finish(proc, 600.0 if how == "disk-full" else 60.0)
    text = out_path.read_text()
    ces, runs = _corpus_rows(corpus)
    tests = {r["test_id"].split("::")[1] for r in ces}
    ids = {r["counterexample_id"] for r in ces}
    run_tests = [r["test_id"].split("::")[1] for r in runs if r["test_id"].split("::")[1] in PYTEST_RUNS]
    bad = [h for h in _hints(text) if not any(i.startswith(h) for i in ids)]
    printed = {json.loads(line.split(" ", 1)[1])["counterexample_id"]
               for line in text.splitlines() if line.startswith(f"{UNWRITTEN_MARK} ")}
    label = {"sigterm": "pytest: SIGTERM to the process group", "sigint": "pytest: Ctrl-C (SIGINT to the group)",
             "sigkill": "pytest: SIGKILL to the process group",
             "xdist-worker-sigkill": "pytest -n 2: SIGKILL to one xdist worker",
             "disk-full": "pytest: disk full (every write fails, ENOSPC)"}[how]
    return Outcome(label, found=len(PYTEST_FAILING), on_disk=sum(t in tests for t in PYTEST_FAILING),
                   printed=len(printed - ids), runs_found=len(PYTEST_RUNS), runs_on_disk=len(set(run_tests)),
                   bad_hints=len(bad), note="the test in flight", status=status, output=text)


# -------------------------------------------------------------------- fuzz

FUZZ_FLAWS = ("NO_ELR", "HWM_ADVANCES_BELOW_MIN_ISR")
#: Seconds the correct target searches after the flaws are found, before the fault.
FUZZ_AFTER_S = 1.0


def fuzz_fault(how: str, work: Optional[Path] = None, after_s: float = 1.0) -> Outcome:
    """``replicheck fuzz`` (2 workers, the correct target and ``FUZZ_FLAWS``);
    ``after_s`` seconds after both flaws are reported found: ``sigterm``,
    ``sigint`` or ``sigkill`` to the process group, or ``worker-sigkill``
    (SIGKILL to one worker, then SIGTERM to the group 3 s later, to end the
    run)."""
    work = Path(work or tempfile.mkdtemp(prefix="fault-fuzz-"))
    corpus = work / "corpus"
    # 30 minutes: the signal always ends the run, and the correct target is still searching
    # when it comes however slow the machine.
    cmd = [sys.executable, "-m", "replicheck_cli.commands", "fuzz", "--minutes", "30", "--workers", "2",
           "--no-report", "--seed", "1", "--corpus", str(corpus)] + \
        [a for f in FUZZ_FLAWS for a in ("--variant", f)]
    out_path = work / "out.txt"
    found_lines = lambda: re.findall(r"^found\s+variant:(\S+)", out_path.read_text(), re.M)  # noqa: E731
    with _process_group(cmd, work, _env(), out_path) as proc:
        _wait_for(lambda: len(found_lines()) == len(FUZZ_FLAWS), 300, proc, "both flaws found", out_path)
        time.sleep(after_s)   # the correct target searching, its runs in flight
        if how == "worker-sigkill":
            # Both finds reduced (a status line after them with nothing left to reduce), so
            # both workers run the correct target's units: the killed one is a search's.
            _wait_for(lambda: _reduced(out_path.read_text(), len(FUZZ_FLAWS)), 180, proc, "finds reduced", out_path)
            _wait_for(lambda: len(_children(proc.pid)) >= 2, 60, proc, "two workers", out_path)
            os.kill(_children(proc.pid)[0], signal.SIGKILL)
            time.sleep(3.0)
            os.killpg(proc.pid, signal.SIGTERM)
        else:
            os.killpg(proc.pid, {"sigterm": signal.SIGTERM, "sigint": signal.SIGINT,
                                 "sigkill": signal.SIGKILL}[how])
        status = _finish(proc)
    text = out_path.read_text()
    found = found_lines()
    ces, runs = _corpus_rows(corpus)
    on_disk = {r["test_id"] for r in ces}
    matrix = dict(re.findall(r"^(correct|variant:\S+)\s+(?:found|not found|clean|not run|error|stopped)\s+\S+\s+(\d+)",
                             text, re.M))
    label = {"sigterm": "replicheck fuzz: SIGTERM to the process group",
             "sigint": "replicheck fuzz: Ctrl-C (SIGINT to the group)",
             "sigkill": "replicheck fuzz: SIGKILL to the process group",
             "worker-sigkill": "replicheck fuzz: SIGKILL to one worker (then SIGTERM)"}[how]
    return Outcome(label, found=len(found), on_disk=sum(f"campaign[variant:{f}]" in on_disk for f in found),
                   runs_found=sum(int(n) for n in matrix.values()) if matrix else None, runs_on_disk=len(runs),
                   note="the machine runs in flight", status=status, output=text)


def _reduced(text: str, finds: int) -> bool:
    """Whether a status line printed after the last find shows ``finds`` found and
    none left to reduce (``replicheck_cli.display.status_line``)."""
    founds = list(re.finditer(r"^found\s.*$", text, re.M))
    after = text[founds[-1].end():] if founds else ""
    return bool(re.search(rf"^search .* {finds} found$", after, re.M))


def _children(pid: int) -> list[int]:
    """The worker processes of the fuzz process ``pid`` (its spawned children)."""
    out = subprocess.run(["pgrep", "-P", str(pid), "-f", "spawn_main"], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


# ---------------------------------------------------------- in process

def disk_full_fault(work: Optional[Path] = None) -> Outcome:
    """A failing machine run (HWM_ADVANCES_BELOW_MIN_ISR) written by
    ``run_machine`` with every Parquet write failing with ENOSPC: its
    counterexample must be printed, replayable, and the run's failure still
    raised."""
    import warnings

    import pyarrow.parquet as pq
    from hypothesis import HealthCheck, Phase, settings

    from campaign.record import run_machine
    from check.failures import CheckFailed
    from check.machine import machine_for
    from check.subject import Subject
    from model import Variant
    from store.writer import CorpusWriter

    work = Path(work or tempfile.mkdtemp(prefix="fault-full-"))
    machine = machine_for(Subject(variants=frozenset({Variant.HWM_ADVANCES_BELOW_MIN_ISR})), name="DiskFullMachine")
    fast = settings(max_examples=1000, stateful_step_count=20, derandomize=True, database=None, deadline=None,
                    suppress_health_check=list(HealthCheck), report_multiple_bugs=False,
                    phases=(Phase.explicit, Phase.reuse, Phase.generate))
    err = io.StringIO()
    writer = CorpusWriter(work / "corpus", run_id="full", worker="main")

    def full(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    real = pq.write_table
    pq.write_table = full
    failed = 0
    try:
        with warnings.catch_warnings(), contextlib.redirect_stderr(err):
            warnings.simplefilter("ignore")
            try:
                run_machine(machine, fast, writer=writer, test_id="disk-full")
            except CheckFailed:
                failed = 1
            try:
                writer.flush()
            except OSError:
                pass
            getattr(writer, "close", lambda: None)()   # its timer (before issue 24: none)
    finally:
        pq.write_table = real
    ces, runs = _corpus_rows(work / "corpus")
    printed = sum(line.startswith(UNWRITTEN_MARK) for line in err.getvalue().splitlines())
    return Outcome("disk full (every write: ENOSPC)", found=1 if failed else 0, on_disk=len(ces),
                   printed=printed, runs_found=1, runs_on_disk=len(runs),
                   note="runs row kept in memory for the next write", output=err.getvalue())


def _write_many(root: str, parts: int, index: int) -> None:
    """A writer process of ``concurrent_fault``: ``parts`` one-row parts, all
    under the same run id, worker and seq as every other writer's, with
    ``os.link`` failing."""
    import store.part as corpus

    def no_link(src: object, dst: object, **dir_fds: object) -> None:
        raise PermissionError(errno.EPERM, "hard links not supported")

    os.link = no_link  # type: ignore[assignment]
    for n in range(parts):
        row = {"schema_version": corpus.SCHEMA_VERSION, "run_id": "same", "test_id": f"writer{index}-part{n}",
               "worker": "w", "profile": "p", "variants": [], "sut_bugs": [], "started_at": corpus.utcnow(),
               "duration_s": 0.0, "examples": 1, "steps": 1, "failed": False, "rule_counts": [],
               "action_counts": [], "event_counts": []}
        corpus.write_part(root, "runs", [row], run_id="same", worker="w", seq=0)


def concurrent_fault(processes: int = 8, parts: int = 50, work: Optional[Path] = None) -> Outcome:
    """``processes`` processes (forked) each write ``parts`` parts under the same
    names at once, on a "file system" without hard links."""
    from multiprocessing import get_context

    work = Path(work or tempfile.mkdtemp(prefix="fault-concurrent-"))
    context = get_context("fork")
    procs = [context.Process(target=_write_many, args=(str(work), parts, i)) for i in range(processes)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    _, runs = _corpus_rows(work)
    n = processes * parts
    return Outcome(f"{processes} writers at once, no hard links ({parts} parts each, same names)", found=0,
                   on_disk=0, runs_found=n, runs_on_disk=len({r["test_id"] for r in runs}), note="")


# ------------------------------------------------------------ bad input

@attrs.frozen
class ReadOutcome:
    """One bad input read by every reader. good: the good counterexamples in the
    corpus; read: reader -> how many of them it read (``replay --id``: replayed
    and reproduced; ``pytest --replay-corpus``: passed); named: reader -> whether it
    named each bad entry in one line, once; crashed: the readers that crashed
    (a traceback, an INTERNALERROR, an exit status outside their documented
    ones); output: every reader's output, for a failing check."""

    bad_input: str
    good: int
    read: dict
    named: dict
    crashed: tuple
    output: str = ""

    @property
    def lost(self) -> int:
        """Good counterexamples some reader did not read (the most any lost)."""
        return max(self.good - n for n in self.read.values())


#: The readers, in the table's order.
READERS = ("replay --list", "replay --id", "pytest --replay-corpus", "report")


def _good_rows() -> list[dict]:
    """Two good counterexamples, as a run records them: the HWM_ADVANCES_BELOW_MIN_ISR
    variant's and the SUT bug PRODUCE_IGNORES_MIN_ISR's (hand-written traces, replayed)."""
    from check.finding import Search, findings
    from check.replay import replay
    from check.subject import Subject
    from model import Config, Produce, ProposeIsrShrink, ReceiveAlterPartition, ReceiveAlterPartitionResponse, Variant
    from store.rows import counterexample_rows
    from sut import Bug

    shrink = (ProposeIsrShrink(1, 2), ReceiveAlterPartition(1), ReceiveAlterPartitionResponse(2))
    cases = ((Subject.at(Config(brokers=(1, 2, 3), assignment=(1, 2), min_isr=2,
                                variants=frozenset({Variant.HWM_ADVANCES_BELOW_MIN_ISR}))), (Produce(1, 1),) + shrink),
             (Subject.at(Config(brokers=(1, 2, 3), assignment=(1, 2), min_isr=2),
                         bugs=frozenset({Bug.PRODUCE_IGNORES_MIN_ISR})), shrink + (Produce(1, 1),)))
    rows = []
    for subject, trace in cases:
        result = replay(trace, subject)
        rows += counterexample_rows(findings(result.verdict, result.subject, Search("fault-matrix::bad-input")),
                                    run_id="bad-input", worker="main")
    return rows


def _bad_corpus(how: str, corpus: Path) -> tuple[list[dict], dict[str, list[str]]]:
    """A corpus of the two good counterexamples and ``how``'s bad input; the good
    rows, and reader -> the fragments of the lines it must print, each once.
    ``corrupt-page``: the HWM file, the bug's file and a copy of the HWM file
    whose data page is corrupt behind a sound footer. ``null-row``: the HWM
    file and a file of three rows: the bug's row with a null ``signature``
    (skipped, named), with null ``steps`` (its replay cannot be decoded; the
    report skips it) and unchanged — the bug's only good row."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    sys.path.insert(0, str(ROOT / "tests" / "corpus"))
    from bad_corpus import corrupt_page
    from store.part import write_part
    from store.schema import COUNTEREXAMPLES

    good = _good_rows()
    hwm = write_part(corpus, COUNTEREXAMPLES, good[:1], "bad-input", "main", 0)
    if how == "corrupt-page":
        write_part(corpus, COUNTEREXAMPLES, good[1:], "bad-input", "main", 1)
        bad = corrupt_page(hwm, hwm.parent / "part-corrupt-page.parquet")
        line = f"{bad}: cannot be read ("
        return good, {reader: [line] for reader in READERS}
    no_signature = dict(good[1], counterexample_id="b" * 64, signature=None)
    no_steps = dict(good[1], counterexample_id="c" * 64, steps=None)
    data = pq.read_table(hwm)
    schema = pa.schema([f.with_nullable(True) for f in data.schema], metadata=data.schema.metadata)
    path = hwm.parent / "part-null-rows.parquet"
    pq.write_table(pa.Table.from_pylist([no_signature, no_steps, good[1]], schema=schema), path)
    skipped = f"{path}: row 0 (counterexample_id {'b' * 16}…): signature is null"
    undecodable = f"counterexample {'c' * 64} ({path}) cannot be decoded: steps is null"
    return good, {"replay --list": [skipped], "replay --id": [skipped], "pytest --replay-corpus": [skipped, undecodable],
                  "report": [skipped, f"{path}: row 1 (counterexample_id {'c' * 16}…): steps is null"]}


def _run(cmd: list[str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=timeout)


def _read_by_each(corpus: Path, ids: list[str], work: Path) -> dict[str, tuple[int, str, bool]]:
    """Reader -> (good counterexamples it read, its output, whether it ran as
    documented: an exit status of its own, no traceback, no INTERNALERROR)."""
    cli = [sys.executable, "-m", "replicheck_cli.commands"]
    out: dict[str, tuple[int, str, bool]] = {}
    listed = _run(cli + ["replay", str(corpus), "--list"], work)
    out["replay --list"] = (sum(i[:16] in listed.stdout for i in ids), listed.stdout + listed.stderr,
                            listed.returncode in (0, 3))
    replays = [_run(cli + ["replay", str(corpus), "--id", i], work) for i in ids]
    out["replay --id"] = (sum(p.returncode == 1 and "\nreproduced: " in p.stdout for p in replays), "".join(p.stdout + p.stderr for p in replays),
                          all(p.returncode in (0, 1, 2) for p in replays))
    pytest_run = _run([sys.executable, "-m", "pytest", "-p", "pytest_replicheck.plugin", "-p", "no:cacheprovider",
                       "-q", "-rf", "--replay-corpus", str(corpus)], work)
    passed = re.search(r"(\d+) passed", pytest_run.stdout)
    out["pytest --replay-corpus"] = (int(passed.group(1)) if passed else 0, pytest_run.stdout + pytest_run.stderr,
                                     pytest_run.returncode in (0, 1))
    report = _run(cli + ["report", str(corpus), "--out", str(work / "report")], work, timeout=900)
    found = re.search(r"^(\d+) counterexamples? in ", report.stdout, re.M)
    out["report"] = (int(found.group(1)) if found else 0, report.stdout + report.stderr, report.returncode in (0, 3))
    return out


def bad_input(how: str, work: Optional[Path] = None) -> ReadOutcome:
    """``how`` (``corrupt-page`` or ``null-row``, ``_bad_corpus``) read by every
    reader in processes of their own: how many good counterexamples each read,
    whether it named each bad entry in one line, once, and whether it crashed."""
    work = Path(work or tempfile.mkdtemp(prefix=f"bad-{how}-"))
    corpus = work / "corpus"
    good, lines = _bad_corpus(how, corpus)
    ids = [r["counterexample_id"] for r in good]
    results = _read_by_each(corpus, ids, work)
    named = {reader: all(sum(fragment in line for line in results[reader][1].splitlines()) >= 1
                         for fragment in lines[reader]) for reader in READERS}
    crashed = tuple(reader for reader, (_, text, ok) in results.items()
                    if not ok or "Traceback" in text or "INTERNALERROR" in text)
    label = {"corrupt-page": "a data page corrupt behind a sound footer",
             "null-row": "a null signature in one row, null steps in another, a good row after them"}[how]
    return ReadOutcome(label, good=len(good), read={r: results[r][0] for r in READERS}, named=named,
                       crashed=crashed, output="\n".join(f"--- {r}\n{results[r][1]}" for r in READERS))


def bad_input_table(outcomes: list[ReadOutcome]) -> str:
    """One line per bad input: the good counterexamples each reader read."""
    lines = ["| bad input | good counterexamples | " + " | ".join(f"`{r}`" for r in READERS)
             + " | lost | each bad entry named | crashed |",
             "|---|---:|" + "---:|" * len(READERS) + "---:|---|---|"]
    for o in outcomes:
        named = "yes" if all(o.named.values()) else "no: " + ", ".join(r for r, ok in o.named.items() if not ok)
        lines.append(f"| {o.bad_input} | {o.good} | " + " | ".join(str(o.read[r]) for r in READERS)
                     + f" | {o.lost} | {named} | {', '.join(o.crashed) or 'none'} |")
    return "\n".join(lines)


#: Every scenario by name: a function of the directory to work in (None: a new temporary one).
SCENARIOS: dict[str, Callable[[Optional[Path]], Outcome]] = {
    "pytest-sigterm": lambda work: pytest_fault("sigterm", work),
    "pytest-sigint": lambda work: pytest_fault("sigint", work),
    "pytest-sigkill": lambda work: pytest_fault("sigkill", work),
    "pytest-xdist-worker-sigkill": lambda work: pytest_fault("xdist-worker-sigkill", work),
    "pytest-disk-full": lambda work: pytest_fault("disk-full", work),
    "fuzz-sigterm": lambda work: fuzz_fault("sigterm", work, FUZZ_AFTER_S),
    "fuzz-sigint": lambda work: fuzz_fault("sigint", work, FUZZ_AFTER_S),
    "fuzz-sigkill": lambda work: fuzz_fault("sigkill", work, FUZZ_AFTER_S),
    "fuzz-worker-sigkill": lambda work: fuzz_fault("worker-sigkill", work, FUZZ_AFTER_S),
    "disk-full": lambda work: disk_full_fault(work),
    "concurrent-writers": lambda work: concurrent_fault(work=work),
    "corrupt-page": lambda work: bad_input("corrupt-page", work),
    "null-row": lambda work: bad_input("null-row", work),
}
#: The bad inputs (``bad_input``: read by every reader, ``ReadOutcome``).
BAD_INPUTS = ("corrupt-page", "null-row")
#: Those run in this process (the rest start processes of their own).
IN_PROCESS = ("disk-full", "concurrent-writers")


def run_scenarios(names: list[str], parallel: int = 2, root: Optional[Path] = None) -> dict[str, Outcome]:
    """Run the scenarios ``names`` (keys of ``SCENARIOS``), up to ``parallel`` of
    those with processes of their own at once (the in-process ones meanwhile,
    one after the other), each in ``root/NAME`` (None: temporary directories).
    Returns their outcomes by name."""
    def work(name: str) -> Optional[Path]:
        if root is None:
            return None
        (root / name).mkdir(parents=True, exist_ok=True)
        return root / name
    with ThreadPoolExecutor(max(1, parallel)) as pool:
        futures = {n: pool.submit(SCENARIOS[n], work(n)) for n in names if n not in IN_PROCESS}
        outcomes = {n: SCENARIOS[n](work(n)) for n in names if n in IN_PROCESS}
        outcomes |= {n: f.result() for n, f in futures.items()}
    return {n: outcomes[n] for n in names}


def table(outcomes: list[Outcome]) -> str:
    """The README's table: one line per fault."""
    lines = ["| fault | counterexamples found | on disk | printed instead | lost | `--id` hints not on disk "
             "| runs found | runs rows on disk |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for o in outcomes:
        runs = "—" if o.runs_found is None else str(o.runs_found)
        lines.append(f"| {o.fault} | {o.found} | {o.on_disk} | {o.printed} | {o.lost} | {o.bad_hints} | {runs} "
                     f"| {o.runs_on_disk} |")
    return "\n".join(lines)


def main() -> None:
    global FUZZ_AFTER_S
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", choices=sorted(SCENARIOS), help="these scenarios only")
    parser.add_argument("--serial", action="store_true", help="one scenario at a time (default: 2 at once)")
    parser.add_argument("--after", type=float, default=FUZZ_AFTER_S, metavar="S",
                        help="seconds the fuzz campaign searches after its flaws are found, before the fault")
    import results  # benchmarks/results.py: --write into docs/results.md
    results.add_write_option(parser, "fault_matrix")
    args = parser.parse_args()
    FUZZ_AFTER_S = args.after
    outcomes = run_scenarios(args.only or list(SCENARIOS), parallel=1 if args.serial else 2)
    faults = [o for o in outcomes.values() if isinstance(o, Outcome)]
    reads = [o for o in outcomes.values() if isinstance(o, ReadOutcome)]
    if faults:
        print(table(faults))
    if reads:
        print(("\n" if faults else "") + bad_input_table(reads))


if __name__ == "__main__":
    import results
    results.run(main)

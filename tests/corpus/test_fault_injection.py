"""Fault injection (issue 24): real processes — ``pytest`` on generated machine
tests, ``replicheck fuzz`` on two workers — are signalled or killed while they
search, or write to a full disk, and what they found is compared with what is on
disk. Nothing found is lost: every counterexample found before the fault is in
the corpus (or, when the disk is full, printed replayable), every ``runs`` row of
a finished run too, and no ``replicheck replay … --id`` hint names an id that is
not on disk. Only the run in flight may be lost.

The scenarios are ``benchmarks/fault_matrix.py``'s (which prints the README's
table); the ones with processes run at once, to keep this under a minute."""

from __future__ import annotations

import importlib.util
import re
import signal
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

_spec = importlib.util.spec_from_file_location("fault_matrix", ROOT / "benchmarks" / "fault_matrix.py")
fault_matrix = importlib.util.module_from_spec(_spec)
sys.modules["fault_matrix"] = fault_matrix   # the concurrent writers' processes are forked from here
_spec.loader.exec_module(fault_matrix)

#: The scenarios with processes of their own (signals, kills, a full disk under pytest).
SIGNALLED = ("pytest-sigterm", "pytest-sigint", "pytest-sigkill", "pytest-xdist-worker-sigkill", "pytest-disk-full",
             "fuzz-sigterm", "fuzz-sigint", "fuzz-sigkill", "fuzz-worker-sigkill")


@pytest.mark.system
def test_no_fault_loses_what_was_found(tmp_path):
    """Every signalled scenario at once (one test, so that pytest-xdist never
    runs them twice), then what each must show."""
    outcomes = fault_matrix.run_scenarios(list(SIGNALLED), parallel=len(SIGNALLED), root=tmp_path)
    problems: list[str] = []

    def check(name: str, ok: bool, what: str) -> None:
        if not ok:
            o = outcomes[name]
            problems.append(f"{name}: {what} (status {o.status})\n{o.output[-3000:]}")

    for name, o in outcomes.items():
        check(name, o.found >= 2, f"found {o.found} counterexamples before the fault, expected 2")
        check(name, o.lost == 0, f"lost {o.lost} of {o.found} counterexamples found")
        check(name, o.bad_hints == 0, f"{o.bad_hints} replay hints name ids not on disk")
        if name == "pytest-disk-full":   # the runs rows cannot be written either (they are warned about)
            check(name, (o.on_disk, o.printed, o.runs_on_disk) == (0, o.found, 0),
                  f"on disk {o.on_disk}, printed {o.printed}, runs rows {o.runs_on_disk}")
            check(name, "replicheck counterexamples NOT written to the corpus" in o.output, "no unwritten section")
            check(name, fault_matrix._hints(o.output) == [], "a hint for an id not on disk")
        else:
            check(name, o.on_disk == o.found, f"{o.on_disk} of {o.found} on disk")
            check(name, o.runs_lost in (None, 0), f"lost {o.runs_lost} runs rows of {o.runs_found}")

    # pytest: SIGTERM ends the session as Ctrl-C does (the rows written, the hints printed).
    for name in ("pytest-sigterm", "pytest-sigint"):
        o = outcomes[name]
        check(name, o.status == pytest.ExitCode.INTERRUPTED, "not ended as interrupted")
        check(name, "KeyboardInterrupt" in o.output and len(fault_matrix._hints(o.output)) == 2, "no summary")
    check("pytest-sigterm", "stopped by SIGTERM" in outcomes["pytest-sigterm"].output, "not stopped by SIGTERM")
    check("pytest-sigkill", outcomes["pytest-sigkill"].status == -signal.SIGKILL, "not killed")
    o = outcomes["pytest-xdist-worker-sigkill"]
    check("pytest-xdist-worker-sigkill", bool(re.search(
        r"worker 'gw\d' crashed while running 'test_fault_machines.py::test_z_in_flight_\d'", o.output)),
        "no crashed worker")
    check("pytest-xdist-worker-sigkill", len(fault_matrix._hints(o.output)) == 2, "not both hints")

    # replicheck fuzz: SIGTERM and Ctrl-C stop the workers and print the partial kill matrix.
    for name, status, how in (("fuzz-sigterm", 128 + signal.SIGTERM, "SIGTERM"), ("fuzz-sigint", 130, "Ctrl-C")):
        o = outcomes[name]
        lines = o.output.splitlines()
        check(name, o.status == status, f"exit status {o.status}, expected {status}")
        check(name, f"interrupted ({how}): the workers were stopped; what they found is in " in o.output,
              "no interruption line")
        correct = next((x for x in lines if x.startswith("correct ")), "")
        check(name, correct.split()[1:2] == ["stopped"] and "the campaign was interrupted after" in correct,
              f"the correct target's line: {correct!r}")
        check(name, sum(x.split()[1] == "found" for x in lines if x.startswith("variant:")) == 2, "flaws not found")
        check(name, "1 stopped (of 3 targets)" in o.output, "no stopped count")
        check(name, lines[-1:] == ["campaign interrupted: stopped (1): correct"], f"last line {lines[-1:]}")
    check("fuzz-worker-sigkill", "its worker process died (killed by SIGKILL)" in
          outcomes["fuzz-worker-sigkill"].output, "the killed worker is not reported")
    check("fuzz-sigkill", outcomes["fuzz-sigkill"].status == -signal.SIGKILL, "not killed")

    assert not problems, fault_matrix.table(list(outcomes.values())) + "\n\n" + "\n\n".join(problems)


def test_concurrent_writers_without_hard_links_lose_nothing(tmp_path):
    """Eight processes publish 50 parts each under the same names at once, with
    ``os.link`` failing: every part survives (a rename to a checked-free name
    lost about one in ten)."""
    o = fault_matrix.concurrent_fault(processes=8, parts=50, work=tmp_path)
    assert o.runs_on_disk == o.runs_found == 400


def test_a_full_disk_loses_no_counterexample_in_process(tmp_path):
    o = fault_matrix.disk_full_fault(tmp_path)
    assert (o.found, o.on_disk, o.printed) == (1, 0, 1), o.output


@pytest.mark.system
def test_no_reader_loses_a_good_counterexample_to_a_corrupt_page_or_a_null_row(tmp_path):
    """The fault matrix's bad inputs, each read by every reader in processes of
    their own (``replay --list``, ``replay --id``, ``pytest --replay-corpus``,
    ``report``): both good counterexamples read by each, each bad entry named,
    no reader crashing."""
    outcomes = fault_matrix.run_scenarios(list(fault_matrix.BAD_INPUTS), parallel=2, root=tmp_path)
    for name, o in outcomes.items():
        assert o.read == {reader: 2 for reader in fault_matrix.READERS}, (name, o.read, o.output[-5000:])
        assert o.lost == 0 and all(o.named.values()) and o.crashed == (), (name, o.named, o.crashed,
                                                                          o.output[-5000:])

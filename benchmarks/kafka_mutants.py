"""Power on Kafka's own code: mutants of a Kafka class, killed by a seeded Kafka
campaign and by Kafka's own unit tests of the class.

Usage: python benchmarks/kafka_mutants.py [--target NAME ...] [--sample 24]
       [--seed 1] [--minutes 1] [--jobs 2] [--write]

Targets (default: all): ``PartitionChangeBuilder`` and
``PartitionReassignmentReplicas`` (the controller's), ``LeaderEpochFileCache``
and ``Partition`` (the broker's, Scala's ``kafka.cluster.Partition``; Kafka's
tests of both are core's Scala ones). ``--write`` writes the tables of the
targets run; the results page holds ``Partition``'s in a section of its own,
measured after the others (``--target Partition --write kafka_mutants.partition``).

PIT (``pitest-maven``, its default mutators, ``+EXPORT``) mutates the class of
``TESTS_RELEASE`` (Kafka publishes test jars up to 4.3.1) and runs Kafka's own
test class against each mutant: that is the column "Kafka's test" (KILLED,
SURVIVED, NO_COVERAGE as PIT reports them). A seeded sample of the mutants is then
put in the loop on the same release: each exported mutant class goes in a jar
ahead of Kafka's on the JVM's class path (``REPLICHECK_KAFKA_LIB``, a folder of
links to the release's jars and the mutant's), and ``replicheck fuzz
--implementation kafka --kafka-version TESTS_RELEASE --workers 1 --seed S
--minutes M --no-report`` runs. A mutant is killed when the
campaign stores a disagreement; its time is the first one's ``found_at`` after the
campaign's start (JVM start and all). A campaign whose target ends in an error
because Kafka's mutated code threw (the verdict's "raised java.lang.…", say a
mutant's null where Kafka's own code then dereferences it) is killed too,
"crashed", at the campaign's end, as PIT counts a test that throws. A campaign that outlives its budget by two
minutes (a mutant looping inside Kafka's code) is stopped and counted as killed,
"timed out", as PIT counts a test run that does not end. The unmutated class runs first, the same
way: a disagreement there stops the benchmark (it would kill every mutant).

Needs Maven (PIT and Kafka's test jars come from the Java package registry) and
the release's jars (``make kafka-jars KAFKA_VERSION=4.3.1``). Work folders are kept in the
temporary folder printed on stderr.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Optional, Sequence

import attrs

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PIT_VERSION = "1.30.2"
PIT_JUNIT5_VERSION = "1.2.3"
#: The newest release whose test jars Kafka publishes.
TESTS_RELEASE = "4.3.1"


@attrs.frozen
class Target:
    """A Kafka class to mutate: its Maven ``artifact``, its ``name`` (fully
    qualified), Kafka's own test class of it, the artifact whose test jar holds
    that (None: ``artifact``'s), the artifacts whose test jars the test needs
    besides (``test_needs``: Kafka's test utilities) and any other libraries it
    needs (``libraries``: ``group:artifact:version``, as Kafka's build has them
    for its tests, not in its published poms)."""

    artifact: str
    name: str
    test: str
    test_artifact: Optional[str] = None
    test_needs: tuple[str, ...] = ()
    libraries: tuple[str, ...] = ()

    @property
    def entry(self) -> str:
        """The class file's path inside the jar."""
        return self.name.replace(".", "/") + ".class"


TARGETS = {
    "PartitionChangeBuilder": Target("kafka-metadata", "org.apache.kafka.controller.PartitionChangeBuilder",
                                     "org.apache.kafka.controller.PartitionChangeBuilderTest"),
    "PartitionReassignmentReplicas": Target("kafka-metadata",
                                            "org.apache.kafka.controller.PartitionReassignmentReplicas",
                                            "org.apache.kafka.controller.PartitionReassignmentReplicasTest"),
    "LeaderEpochFileCache": Target("kafka-storage", "org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache",
                                   "kafka.server.epoch.LeaderEpochFileCacheTest", "kafka_2.13",
                                   ("kafka-server-common", "kafka-clients")),
    "Partition": Target("kafka_2.13", "kafka.cluster.Partition", "kafka.cluster.PartitionTest", None,
                        ("kafka-clients", "kafka-server-common", "kafka-storage", "kafka-metadata", "kafka-server"),
                        ("org.mockito:mockito-core:5.24.0",)),
}


@attrs.frozen
class Mutant:
    """One of PIT's mutants: its export ``index``, ``method``, source ``line``,
    PIT ``mutator`` (short name), ``description``, what Kafka's test did to it
    (``kafka_tests``: PIT's status) and the mutated class file."""

    index: int
    method: str
    line: int
    mutator: str
    description: str
    kafka_tests: str
    class_file: Path


_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>replicheck</groupId>
  <artifactId>kafka-mutants</artifactId>
  <version>1</version>
  <properties><project.build.sourceEncoding>UTF-8</project.build.sourceEncoding></properties>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>{artifact}</artifactId><version>{release}</version></dependency>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>{test_artifact}</artifactId><version>{release}</version></dependency>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>{test_artifact}</artifactId><version>{release}</version>
      <classifier>test</classifier></dependency>
{needs}
    <dependency><groupId>org.junit.jupiter</groupId><artifactId>junit-jupiter</artifactId><version>{junit}</version></dependency>
  </dependencies>
  <build><plugins><plugin>
    <groupId>org.pitest</groupId><artifactId>pitest-maven</artifactId><version>{pit}</version>
    <dependencies><dependency><groupId>org.pitest</groupId><artifactId>pitest-junit5-plugin</artifactId>
      <version>{pit_junit5}</version></dependency></dependencies>
  </plugin></plugins></build>
</project>
"""


def _mvn(folder: Path, *args: str, timeout_s: float = 1800) -> None:
    done = subprocess.run(["mvn", "--batch-mode", "--quiet", "-f", str(folder / "pom.xml"), *args],
                          capture_output=True, text=True, timeout=timeout_s)
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).splitlines()[-15:])
        raise SystemExit(f"kafka_mutants: mvn {args[0]} exited {done.returncode}:\n{tail}")


def _jar(folder: Path, artifact: str, classifier: str = "") -> Path:
    """Kafka's ``artifact`` jar of ``TESTS_RELEASE`` (with ``classifier``), copied into ``folder/jars``."""
    spec = f"org.apache.kafka:{artifact}:{TESTS_RELEASE}:jar" + (f":{classifier}" if classifier else "")
    _mvn(folder, "dependency:copy", f"-Dartifact={spec}", f"-DoutputDirectory={folder / 'jars'}")
    return folder / "jars" / f"{artifact}-{TESTS_RELEASE}{'-' + classifier if classifier else ''}.jar"


def _extract(jar: Path, prefix: str, into: Path) -> None:
    """The entries of ``jar`` whose name starts with ``prefix`` (a class and its nested classes)."""
    with zipfile.ZipFile(jar) as z:
        for name in z.namelist():
            if name.startswith(prefix) and name.endswith(".class"):
                z.extract(name, into)


def pit_project(folder: Path, target: Target) -> None:
    """A Maven project PIT runs in: the class (and its nested classes) as the
    project's classes, Kafka's test class as its tests, the rest from the
    dependencies. PIT skips a project with no source folders: each holds a
    placeholder it never compiles."""
    from reproducers.project import JUNIT_VERSION
    folder.mkdir(parents=True, exist_ok=True)
    tests_from = target.test_artifact or target.artifact
    needs = "\n".join([f"    <dependency><groupId>org.apache.kafka</groupId><artifactId>{a}</artifactId>"
                       f"<version>{TESTS_RELEASE}</version><classifier>test</classifier></dependency>"
                       for a in target.test_needs]
                      + ["    <dependency><groupId>{}</groupId><artifactId>{}</artifactId><version>{}</version>"
                         "</dependency>".format(*lib.split(":")) for lib in target.libraries])
    (folder / "pom.xml").write_text(_POM.format(artifact=target.artifact, test_artifact=tests_from, needs=needs,
                                                release=TESTS_RELEASE, junit=JUNIT_VERSION, pit=PIT_VERSION,
                                                pit_junit5=PIT_JUNIT5_VERSION))
    for src in ("src/main/java", "src/test/java"):
        (folder / src).mkdir(parents=True, exist_ok=True)
        (folder / src / "Placeholder.txt").write_text("PIT runs on the compiled classes in target/.\n")
    main, tests = _jar(folder, target.artifact), _jar(folder, tests_from, "test")
    _extract(main, target.entry[:-len(".class")], folder / "target" / "classes")
    _extract(tests, target.test.replace(".", "/"), folder / "target" / "test-classes")


def run_pit(folder: Path, target: Target) -> list[Mutant]:
    """PIT's mutants of ``target`` and what Kafka's test did to each, in export order."""
    _mvn(folder, f"org.pitest:pitest-maven:{PIT_VERSION}:mutationCoverage", f"-DtargetClasses={target.name}",
         f"-DtargetTests={target.test}", "-Dfeatures=+EXPORT", "-DoutputFormats=XML", "-DtimestampedReports=false",
         "-Dthreads=2")
    reports = folder / "target" / "pit-reports"
    status = {}
    for m in ET.parse(reports / "mutations.xml").getroot():
        key = (m.findtext("mutatedMethod"), m.findtext("mutator"), tuple(i.text for i in m.iter("index")))
        status[key] = m.get("status")
    mutants = []
    exported = reports / "export" / Path(*target.name.split(".")) / "mutants"
    for d in sorted(exported.iterdir(), key=lambda p: int(p.name)):
        details = (d / "details.txt").read_text()
        method = details.split("method=", 1)[1].split(",", 1)[0]
        mutator = details.split("mutator=", 1)[1].split("]", 1)[0]
        indexes = tuple(details.split("indexes=[", 1)[1].split("]", 1)[0].replace(" ", "").split(","))
        mutants.append(Mutant(int(d.name), method, int(details.split("lineNumber=", 1)[1].split(",", 1)[0]),
                              mutator.rsplit(".", 1)[-1].removesuffix("Mutator"),
                              details.split("description=", 1)[1].split(", testsInOrder", 1)[0],
                              status.get((method, mutator, indexes), "?"), d / f"{target.name}.class"))
    return mutants


def mutant_lib(folder: Path, target: Optional[Target], class_file: Optional[Path]) -> Path:
    """A jar folder for ``REPLICHECK_KAFKA_LIB``: links to ``TESTS_RELEASE``'s jars
    and, sorted ahead of them (the bridge's class path is the folder's jars in name
    order), a jar holding ``target``'s mutated ``class_file`` (None: Kafka's classes unmutated)."""
    from kafka_bridge.jvm import lib_dir
    folder.mkdir(parents=True, exist_ok=True)
    for jar in lib_dir(TESTS_RELEASE).glob("*.jar"):
        link = folder / jar.name
        if not link.exists():
            link.symlink_to(jar.resolve())
    if target is not None and class_file is not None:
        with zipfile.ZipFile(folder / "0-mutant.jar", "w") as z:
            z.write(class_file, target.entry)
    return folder


def campaign(lib: Path, corpus: Path, minutes: float, seed: int) -> dict[str, Any]:
    """The seeded Kafka campaign with ``lib``'s jars: killed (a disagreement stored,
    or Kafka's code threw: ``crashed``), seconds to the first one from the
    campaign's start, its signature."""
    started = dt.datetime.now(dt.timezone.utc)
    with open(corpus.parent / f"{corpus.name}.log", "w") as log:
        run = subprocess.Popen([sys.executable, "-m", "replicheck_cli.commands", "fuzz", "--implementation", "kafka",
                                "--kafka-version", TESTS_RELEASE, "--minutes", str(minutes), "--workers", "1",
                                "--seed", str(seed), "--no-report", "--no-live", "--corpus", str(corpus)],
                               cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                               env=os.environ | {"REPLICHECK_KAFKA_LIB": str(lib)})
        try:
            run.wait(timeout=minutes * 60 + 120)
        except subprocess.TimeoutExpired:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait()
            return {"killed": True, "seconds": None, "signature": "timed out"}
    from store.reader import read_counterexamples
    rows = read_counterexamples(corpus, warn=False).rows if (corpus / "counterexamples").is_dir() else []
    if not rows:
        thrown = KAFKA_THREW.search((corpus.parent / f"{corpus.name}.log").read_text())
        if thrown is None:
            return {"killed": False}
        return {"killed": True, "crashed": thrown.group(1).rsplit(".", 1)[-1],
                "seconds": (dt.datetime.now(dt.timezone.utc) - started).total_seconds(), "signature": thrown.group(0)}
    first = min(rows, key=lambda r: r["found_at"])
    return {"killed": True, "seconds": (first["found_at"] - started).total_seconds(), "signature": first["signature"]}


#: The campaign's error verdict when the implementation's (Kafka's) code threw: a
#: Java exception class named after "raised" (``campaign.unit``'s harness error).
KAFKA_THREW = re.compile(r"^error\s.*? raised ((?:[a-z_$][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error))\b", re.M)

#: PIT's statuses of a mutant its test run detects.
DETECTED = ("KILLED", "TIMED_OUT", "MEMORY_ERROR", "RUN_ERROR")


def _cell(result: dict[str, Any]) -> str:
    if not result["killed"]:
        return "survived"
    if result.get("crashed"):
        return f"crashed ({result['crashed']}), {result['seconds']:.0f} s"
    return "timed out" if result["seconds"] is None else f"killed, {result['seconds']:.0f} s"


def table(target: Target, mutants: Sequence[Mutant], sample: Sequence[Mutant], results: dict[int, dict[str, Any]],
          minutes: float, seed: int) -> str:
    """The per-mutant table and the summary (module doc)."""
    by_kafka = sum(m.kafka_tests in DETECTED for m in mutants)
    lines = [f"`{target.name}`: {len(mutants)} mutants (PIT {PIT_VERSION}, default mutators); Kafka's own "
             f"`{target.test.rsplit('.', 1)[-1]}` ({TESTS_RELEASE}) kills {by_kafka} "
             f"({100 * by_kafka / len(mutants):.0f} %). A sample of {len(sample)} (seed {seed}), each under "
             f"`replicheck fuzz --implementation kafka --kafka-version {TESTS_RELEASE} --workers 1 --seed {seed} "
             f"--minutes {minutes:g}`:", "",
             "| mutant | method:line | mutator | Kafka's test | replicheck |", "|---:|---|---|---|---|"]
    for m in sample:
        lines.append(f"| {m.index} | `{m.method}`:{m.line} | {m.mutator} | {m.kafka_tests.lower().replace('_', ' ')} "
                     f"| {_cell(results[m.index])} |")
    k = {m.index for m in sample if m.kafka_tests in DETECTED}
    r = {m.index for m in sample if results[m.index]["killed"]}
    n = len(sample)
    times = sorted(results[i]["seconds"] for i in r if results[i]["seconds"] is not None)
    lines += ["", f"Of the sample: Kafka's test kills {len(k)} ({100 * len(k) / n:.0f} %), replicheck {len(r)} "
              f"({100 * len(r) / n:.0f} %); both {len(k & r)}, Kafka's test alone {len(k - r)}, replicheck alone "
              f"{len(r - k)}, neither {n - len(k | r)}."
              + (f" replicheck's time to kill: median {times[len(times) // 2]:.0f} s, longest {times[-1]:.0f} s."
                 if times else "")]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", choices=sorted(TARGETS), action="append",
                    help="a class to mutate (repeatable; default: every one)")
    ap.add_argument("--sample", type=int, default=24, help="mutants run through a campaign (default 24)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--minutes", type=float, default=1.0, help="each campaign's budget (default 1)")
    ap.add_argument("--jobs", type=int, default=2, help="campaigns at once (default 2)")
    import results  # benchmarks/results.py: --write into docs/results.md
    results.add_write_option(ap, "kafka_mutants")
    args = ap.parse_args()
    from kafka_bridge.jvm import unavailable
    why = unavailable(TESTS_RELEASE)
    if why is not None:
        raise SystemExit(f"kafka_mutants: {why}")
    keep = Path(tempfile.mkdtemp(prefix="kafka-mutants-"))
    print(f"work folders: {keep}", file=sys.stderr, flush=True)
    baseline = campaign(mutant_lib(keep / "lib-none", None, None), keep / "corpus-none", args.minutes, args.seed)
    if baseline["killed"]:
        raise SystemExit(f"kafka_mutants: Kafka {TESTS_RELEASE}'s unmutated classes disagree "
                         f"({baseline['signature']}): every mutant would be killed; see {keep / 'corpus-none'}")
    for name in args.target or list(TARGETS):
        print(measure(TARGETS[name], keep / name, args) + "\n", flush=True)


def measure(target: Target, keep: Path, args: argparse.Namespace) -> str:
    """PIT on ``target``, then the campaigns of its sample: the table."""
    started = time.monotonic()
    pit_project(keep / "pit", target)
    mutants = run_pit(keep / "pit", target)
    print(f"{target.name}: {len(mutants)} mutants, PIT {time.monotonic() - started:.0f} s", file=sys.stderr,
          flush=True)
    sample = sorted(random.Random(args.seed).sample(mutants, min(args.sample, len(mutants))), key=lambda m: m.index)

    def one(m: Mutant) -> tuple[int, dict[str, Any]]:
        lib = mutant_lib(keep / f"lib-{m.index}", target, m.class_file)
        return m.index, campaign(lib, keep / f"corpus-{m.index}", args.minutes, args.seed)

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        found = dict(pool.map(one, sample))
    return table(target, mutants, sample, found, args.minutes, args.seed)

if __name__ == "__main__":
    import results
    results.run(main)

# Set-up-and-test entry points. `make test` is the one command CI and a fresh clone need.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: test install kafka-jars golden fuzz bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

# The jars of the Kafka release the Kafka profile follows (kafka_bridge/pom.xml), or of
# another (KAFKA_VERSION=X, one of kafka_bridge/releases.py's RELEASES), with their
# dependencies, and the bridge's Java shims adapted to the release and compiled against
# them, for kafka_bridge's JVM: one folder per release, .kafka/X/lib, side by side;
# git-ignored, fetched and built again when the pom or a shim changes.
KAFKA_VERSION ?= $(shell sed -n 's/^KAFKA_RELEASE = "\(.*\)"/\1/p' model/profile.py)
KAFKA_STAMP := .kafka/$(KAFKA_VERSION)/lib/.fetched
# The older releases the system tests run Kafka's code of too, beside the pinned one: the
# last release without each change of kafka_bridge/changes.py and the first with it (4.1.0
# runs Kafka's controller under the SUT's replicas, 4.3.0 Kafka's Partition too;
# tests/kafka_bridge/test_releases.py, which checks this list).
KAFKA_OLDER := 4.0.0 4.0.1 4.0.2 4.1.0 4.1.1 4.2.2 4.3.0
KAFKA_SHIM  := $(shell find kafka_bridge/java -name '*.java')
.kafka/%/lib/.fetched: kafka_bridge/pom.xml kafka_bridge/releases.py $(KAFKA_SHIM) | $(STAMP)
	rm -rf .kafka/$*
	$(BIN)/python -c 'import sys; from kafka_bridge.releases import main; main(sys.argv[1:])' $* .kafka/$*/src
	mvn --batch-mode --quiet -f kafka_bridge/pom.xml package dependency:copy-dependencies \
		-DskipTests -DoutputDirectory=$(CURDIR)/.kafka/$*/lib -DincludeScope=runtime \
		-Dkafka.version=$* -Dshim.sources=$(CURDIR)/.kafka/$*/src -Dshim.build=$(CURDIR)/.kafka/$*/build
	cp .kafka/$*/build/kafka-bridge-shim.jar .kafka/$*/lib/
	touch $@

kafka-jars: $(KAFKA_STAMP)

# worksteal: an idle worker takes queued tests from a busy one (the longest tests
# are collected first, see tests/conftest.py).
# REPLICHECK_REQUIRE_KAFKA: the Kafka tests fail, instead of skipping, without Kafka's classes.
test: $(STAMP) $(KAFKA_STAMP)
	REPLICHECK_REQUIRE_KAFKA=1 $(BIN)/python -m pytest -n auto --dist worksteal

# The Spark report's tests, left out of `make test` (pytest's marker "spark"): the
# analyses, the report, the corpus read by Spark, locally and over S3, on a local
# SparkSession per pytest worker.
.PHONY: test-spark
test-spark: $(STAMP)
	$(BIN)/python -m pytest -n auto --dist worksteal -m spark

# The system tests, left out of `make test` (pytest's marker "system"): a campaign and a
# report on a standalone Spark cluster started on loopback, the live view in headless
# Chromium, the fault matrix's signalled pytest and fuzz processes, report processes with a
# Spark JVM of their own, Spark over an S3 server, Maven builds of the reproducers, fresh
# processes starting Kafka's JVM. CI runs them after the suite. loadfile: the cluster's tests share one cluster, started once on one worker.
.PHONY: test-system
test-system: $(STAMP) $(KAFKA_STAMP) $(KAFKA_OLDER:%=.kafka/%/lib/.fetched)
	REPLICHECK_REQUIRE_KAFKA=1 $(BIN)/python -m pytest -n auto --dist loadfile -m system

# The documentation site (mkdocs.yml, docs/) into site/, built strictly: a broken link or
# anchor, a page left out of the navigation, or any warning fails it. The reference pages
# are generated at build time from the code's own tables (docs/gen_pages.py); the two
# variables silence the theme's and a plugin's notices about MkDocs 2 on stderr.
.PHONY: docs
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 DISABLE_MKDOCS_2_WARNING=true $(BIN)/mkdocs build --strict

# Rebuild the golden corpus (tests/golden/corpus: each flaw's shortest
# counterexample, replayed by the suite) after a change that alters the traces.
golden: $(STAMP)
	$(BIN)/python tests/golden/build.py

# The main job: the correct protocol + SUT, every variant and every SUT bug in worker
# processes under a wall-clock budget (MINUTES), the Spark report included; each
# target's verdict. WORKERS defaults to the cores; SEED (optional) makes the campaign
# draw the same examples each time.
MINUTES ?= 5
WORKERS ?=
SEED ?=
fuzz: $(STAMP)
	$(BIN)/replicheck fuzz --minutes $(MINUTES) $(if $(WORKERS),--workers $(WORKERS),) $(if $(SEED),--seed $(SEED),)

# Kafka's own code (kafka_bridge) in lockstep with the model under the Kafka profile, one
# series of runs per worker for the whole budget: fails on any disagreement. MINUTES,
# WORKERS and SEED as for fuzz; NO_REPORT=1 skips the Spark report; KAFKA_VERSION=X runs
# release X's classes (the implementation kafka@X; its jars fetched as for kafka-jars).
NO_REPORT ?=
.PHONY: fuzz-kafka
fuzz-kafka: $(STAMP) $(KAFKA_STAMP)
	$(BIN)/replicheck fuzz --implementation kafka --kafka-version $(KAFKA_VERSION) --minutes $(MINUTES) \
		$(if $(WORKERS),--workers $(WORKERS),) $(if $(SEED),--seed $(SEED),) $(if $(NO_REPORT),--no-report,)

# The long-running search for new bugs: only the correct protocol + SUT, on every worker
# for the whole budget, failing only on a real counterexample. MINUTES, WORKERS, SEED,
# NO_REPORT as for fuzz-kafka.
.PHONY: fuzz-correct
fuzz-correct: $(STAMP)
	$(BIN)/replicheck fuzz --correct-only --minutes $(MINUTES) $(if $(WORKERS),--workers $(WORKERS),) \
		$(if $(SEED),--seed $(SEED),) $(if $(NO_REPORT),--no-report,)

# Every finding about Kafka's code as a standalone JUnit 5 test of Kafka's classes
# (build/reproducers), run on every Kafka release from 4.0.0 on: fails when a finding
# holds, or stops holding, on a release other than the recorded matrix says
# (reproducers/releases.json; MATRIX_WRITE=1 records it instead).
MATRIX_WRITE ?=
.PHONY: reproducers
reproducers: $(STAMP) $(KAFKA_STAMP)
	$(BIN)/replicheck reproduce --matrix $(if $(MATRIX_WRITE),--write,)

bench: $(STAMP)
	$(BIN)/python benchmarks/model_throughput.py
	$(BIN)/python benchmarks/properties_cost.py
	$(BIN)/python benchmarks/sut_throughput.py
	$(BIN)/python benchmarks/harness_throughput.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis report .kafka

# Set-up-and-test entry points. `make test` is the one command CI and a fresh clone need.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: test install golden fuzz bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

# worksteal: an idle worker takes queued tests from a busy one (the longest tests
# are collected first, see tests/conftest.py).
test: $(STAMP)
	$(BIN)/python -m pytest -n auto --dist worksteal

# Rebuild the golden corpus (tests/golden/corpus: each flaw's shortest
# counterexample, replayed by the suite) after a change that alters the traces.
golden: $(STAMP)
	$(BIN)/python tests/golden/build.py

# The main job: the correct protocol + SUT, every variant and every SUT bug under a
# wall-clock budget (MINUTES), then the Spark report. WORKERS defaults to the cores;
# SEED (optional) makes the campaign draw the same examples each time.
MINUTES ?= 5
WORKERS ?=
SEED ?=
fuzz: $(STAMP)
	$(BIN)/replicheck fuzz --minutes $(MINUTES) $(if $(WORKERS),--workers $(WORKERS),) $(if $(SEED),--seed $(SEED),)

bench: $(STAMP)
	$(BIN)/python benchmarks/model_throughput.py
	$(BIN)/python benchmarks/properties_cost.py
	$(BIN)/python benchmarks/sut_throughput.py
	$(BIN)/python benchmarks/harness_throughput.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis report

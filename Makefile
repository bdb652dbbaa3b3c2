# Set-up-and-test entry points. `make test` is the one command CI and a fresh clone need.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: test test-long install fuzz bench clean measure-budgets

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

# worksteal: an idle worker takes queued tests from a busy one (the campaign
# searches are long and collected first, see tests/conftest.py).
test: $(STAMP)
	$(BIN)/python -m pytest -n auto --dist worksteal

# The derandomized searches for the flaws too rare, or too slow to find, for the
# default suite (minutes each, see LONG_SEARCH in tests/variants/test_campaigns.py and
# tests/harness/test_bugs_caught.py). CI runs them.
test-long: $(STAMP)
	$(BIN)/python -m pytest -n auto --dist worksteal -m long_search

# After a change to the machine every derandomized stream changes: re-measure the
# examples each campaign test needs (one line per flaw), then set the budgets.
measure-budgets: $(STAMP)
	rm -f measured-budgets.tsv
	-REPLICHECK_SEARCH_LOG=$(CURDIR)/measured-budgets.tsv $(BIN)/python -m pytest -n auto --dist worksteal -q \
		-m 'long_search or not long_search' \
		tests/variants/test_campaigns.py tests/harness/test_bugs_caught.py
	sort measured-budgets.tsv

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

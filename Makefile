# mcp-elicit: `make demo` runs the main job; `make test` installs everything and runs every test.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
NODE22_DIR := tools/node22
NODE22_BIN := $(CURDIR)/$(NODE22_DIR)/node_modules/node/bin
HARNESS_DIR := tools/conformance
STAMP_PY := $(VENV)/.installed
STAMP_NODE := $(NODE22_DIR)/node_modules/.installed
STAMP_HARNESS := $(HARNESS_DIR)/node_modules/.installed
DEMO_PORT ?= 8765
# pytest-xdist workers for `unit` and `conformance`. Measured on 2 shared cores: 4 workers
# were no faster than 2 (the suite spends more CPU than it waits) and starved server start-ups
# past their bounds. `make unit PYTEST_WORKERS=0` runs serially. The conformance harness runs
# stay in one worker, one after the other (xdist_group "conformance"): two at once under
# load failed scenarios that pass alone.
PYTEST_WORKERS ?= 2
PYTEST_PARALLEL := -n $(PYTEST_WORKERS) --dist loadgroup

.PHONY: all install test check lint typecheck unit conformance demo bench clean test-python

include mk/peers.mk
include mk/services.mk
include mk/browser.mk

all: test

$(STAMP_PY): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check -e '.[dev]'
	touch $@

# Node 22 (the machine's Node may be older; the conformance harness needs 22+), pinned by its lockfile.
$(STAMP_NODE): $(NODE22_DIR)/package-lock.json
	cd $(NODE22_DIR) && npm ci --no-audit --no-fund --loglevel=error
	$(NODE22_BIN)/node --version
	touch $@

# The official conformance harness, pinned by its lockfile, installed with Node 22.
$(STAMP_HARNESS): $(HARNESS_DIR)/package-lock.json $(STAMP_NODE)
	cd $(HARNESS_DIR) && PATH=$(NODE22_BIN):$$PATH npm ci --no-audit --no-fund --loglevel=error
	touch $@

install: services browser axe $(STAMP_PY) $(STAMP_HARNESS) peers

lint: $(STAMP_PY)
	$(BIN)/ruff check mcp_elicit tests examples bench
	$(BIN)/ruff format --check mcp_elicit tests examples bench

typecheck: $(STAMP_PY)
	$(BIN)/mypy

unit: install
	PATH=$(NODE22_BIN):$$PATH $(BIN)/pytest -q $(PYTEST_PARALLEL)

check: lint typecheck

test: install check unit

# The suite on another Python than $(PY) (the package supports 3.11 and later), in a
# virtualenv of its own: `make test-python PYTHON=python3.13`. All but the browser's, the
# conformance harness's and the benchmark's tests, which need nothing version-specific.
PYTHON ?= python3.13
OTHER_VENV = .venv-$(notdir $(PYTHON))
test-python: install
	test -x $(OTHER_VENV)/bin/python || $(PYTHON) -m venv $(OTHER_VENV)
	$(OTHER_VENV)/bin/python -m pip install -q --disable-pip-version-check -e '.[dev]'
	PATH=$(NODE22_BIN):$$PATH $(OTHER_VENV)/bin/pytest -q $(PYTEST_PARALLEL) \
		--ignore=tests/ui --ignore=tests/conformance --ignore=tests/bench

conformance: install
	PATH=$(NODE22_BIN):$$PATH $(BIN)/pytest -q $(PYTEST_PARALLEL) -m conformance

demo: $(STAMP_PY)
	$(BIN)/python examples/run_demo.py --port $(DEMO_PORT)

bench: install
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) $(NODE22_DIR)/node_modules $(HARNESS_DIR)/node_modules $(AXE_DIR)/node_modules .pytest_cache .mypy_cache .ruff_cache

# DeepVM Studio: build, run and test. Needs only Python 3.11 (with venv) on Debian.
#   make run    start the dashboard (HOST=127.0.0.1 PORT=8501 by default)
#   make test   lint (ruff, mypy strict on deepvm_core) + all tests, browser tests included,
#               in 3 processes, mypy beside them (PYTEST_WORKERS=0: in one)

SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
# --no-compile: pip would byte-compile every module of every package (botocore's and moto's
# hundreds of services included), 40 s of the 70 s install on 2 cores; Python compiles the
# modules a run imports, once, when it first imports them.
PIP_INSTALL := $(PIP) install --no-compile
# The interpreter that creates the venv: python3.11 if on PATH, else python3.
PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3 2>/dev/null)

# Compiled modules go to .venv/pycache, never into the source tree, and are kept between
# runs. Installs skip byte-compiling (above), and an environment with PYTHONDONTWRITEBYTECODE
# set (as some images do) would have every process compile every module it imports again:
# each test worker, dashboard server and CLI run (collecting the tests took 15 s, 3.8 s with
# the cache).
export PYTHONDONTWRITEBYTECODE :=
export PYTHONPYCACHEPREFIX := $(CURDIR)/$(VENV)/pycache

HOST ?= 127.0.0.1
PORT ?= 8501
PYTEST_ARGS ?=
# Test processes (pytest-xdist): 3 by default on the 2-core machines the suite must finish on
# in minutes: the browser tests wait on a dashboard and a browser much of the time, so a
# third process fills the cores (measured: 338 s against 371 s with 2; from a fresh clone
# `make test` took 5 min 1 s with 3 and 5 min 16 s with 4, which crowd the cores).
# PYTEST_WORKERS=auto uses one per core, 0 runs in this process.
# --dist loadfile sends each test file to one worker, the browser tests' files early on at
# most half the workers (tests/conftest.py); each such worker starts one dashboard and browser.
PYTEST_WORKERS ?= 3

RUNTIME_STAMP := $(VENV)/.installed-runtime
TEST_STAMP := $(VENV)/.installed-test

.PHONY: help venv install test-deps run browser test lint bench clean

help:
	@echo "make run      install and start the dashboard on http://$(HOST):$(PORT)"
	@echo "make test     install, lint and run all tests (installs Debian's chromium if missing)"
	@echo "make install  create .venv and install the runtime dependencies + deepvm_core (editable)"
	@echo "make lint     ruff check . and mypy (strict on deepvm_core)"
	@echo "make bench    run the benchmarks (core, then browser latency)"
	@echo "make browser  install Debian's chromium if /usr/bin/chromium is missing"
	@echo "make clean    remove .venv and caches"

# --- virtual environment -----------------------------------------------------------------

$(PY):
	@if [ -z "$(PYTHON)" ]; then echo "error: neither python3.11 nor python3 is on PATH" >&2; exit 1; fi
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
		|| { echo "error: $(PYTHON) is older than Python 3.11" >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --upgrade pip

venv: $(PY)

# Editable install of deepvm_core and the dashboard package (the pages import dashboard.*; data/
# is found as deepvm_core.bundled_data only through the install, setup.py).
$(RUNTIME_STAMP): requirements.txt pyproject.toml setup.py | $(PY)
	$(PIP_INSTALL) -r requirements.txt
	$(PIP_INSTALL) -e . --no-deps
	@touch $@

install: $(RUNTIME_STAMP)

$(TEST_STAMP): requirements-test.txt $(RUNTIME_STAMP)
	$(PIP_INSTALL) -r requirements-test.txt
	@touch $@

test-deps: $(TEST_STAMP)

# --- targets -----------------------------------------------------------------------------

run: install
	$(PY) dashboard/serve.py --server.address $(HOST) --server.port $(PORT)

# Debian's chromium for the end-to-end tests, which use /usr/bin/chromium (or env CHROMIUM_PATH).
# Never `playwright install`: it downloads browser builds, which cannot work here.
browser:
	@if [ -x /usr/bin/chromium ]; then \
		echo "chromium: /usr/bin/chromium is installed"; \
	else \
		if [ "$$(id -u)" -eq 0 ]; then SUDO=""; \
		elif command -v sudo >/dev/null 2>&1; then SUDO="sudo"; \
		else echo "error: /usr/bin/chromium is missing; install Debian's chromium as root:" \
			"apt-get update && apt-get install -y chromium" >&2; exit 1; fi; \
		echo "Installing Debian's chromium with apt-get"; \
		$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update \
		&& $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y chromium \
		|| { echo "error: apt-get could not install chromium" >&2; exit 1; }; \
		[ -x /usr/bin/chromium ] || { echo "error: /usr/bin/chromium still missing" >&2; exit 1; }; \
	fi

# mypy (strict, about 40 s from a fresh clone, one core) runs beside the tests, which leave
# a core idle much of the time; its report follows theirs, and either failing fails the target.
test: install test-deps browser
	$(VENV)/bin/ruff check .
	@report=$$(mktemp); $(VENV)/bin/mypy > "$$report" 2>&1 & mypy_pid=$$!; \
	$(PY) -m pytest -n $(PYTEST_WORKERS) --dist loadfile $(PYTEST_ARGS); tests=$$?; \
	wait $$mypy_pid; typed=$$?; echo "mypy:"; cat "$$report"; rm -f "$$report"; \
	exit $$(( tests != 0 ? tests : typed ))

lint: test-deps
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

bench: install test-deps browser
	$(PY) bench/run_all.py
	$(PY) bench/bench_browser.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache .hypothesis build dist *.egg-info
	find . -name __pycache__ -type d -prune -not -path './.git/*' -exec rm -rf {} +

# acres_bridge: set-up, tests, demo and benchmarks on the pip-only path.
#
#   make demo    set up, then run the bridge against the reference simulator
#   make test    set up, then lint, type-check and run the tests in a private network namespace
#   make bench   set up, then print the benchmark table
#
# Set-up is idempotent and cached: a stamp per step, rebuilt only when its inputs change.

SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check
STAMPS := $(VENV)/.stamps

# No DDS traffic leaves the machine: discovery stays on localhost everywhere.
export ROS_AUTOMATIC_DISCOVERY_RANGE := LOCALHOST
export RMW_IMPLEMENTATION := rmw_fastrtps_cpp
# The venv is an ament prefix (the wheels' and our packages' share/ament_index): ros2 pkg, ros2 run,
# launch_ros and get_package_share_directory find the packages through it, before any distribution's.
export AMENT_PREFIX_PATH := $(abspath $(VENV))$(if $(AMENT_PREFIX_PATH),:$(AMENT_PREFIX_PATH))

PACKAGE_INPUTS := setup.py setup.cfg package.xml $(shell find acres_bridge acres_sim launch params msg_profiles resource -type f \( -name '*.py' -o -name '*.yaml' -o -name '*.xml' -o -name acres_bridge \) 2>/dev/null)
WARM_UP_KERNELS := from acres_sim.sensors.compiled_cast import warm_up; warm_up()
INTERFACE_INPUTS := tools/build_interfaces.py tools/interface_cache.py $(shell find interfaces -type f 2>/dev/null)

# A wheelhouse of launch, launch_ros, launch_testing and ros2cli (none are on PyPI), e.g.
# make test ROS2_WHEELS=../shared/ros2-wheels. Without one the tests that need them are skipped.
ROS2_WHEELS ?=
ROS2_TOOLS_STAMP := $(if $(ROS2_WHEELS),$(STAMPS)/ros2-tools,)

# The tests run in PYTEST_WORKERS processes (pytest-xdist), a file per worker, each worker in a
# DDS domain of its own (test/conftest.py). PYTEST_WORKERS=0 runs them in this process alone.
# Two workers a core, at most 8: a test that starts a simulator, a bridge or ros2 waits on them
# and on discovery much of its time, so with one worker a core a third of the CPU stood idle
# (2 cores: the suite in 743 s with 2 workers, 550 s with 4, the CPUs then 95 % busy). The tests
# hold under that load: none judges a wall-clock rate, and none ends another worker's processes.
PYTEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); w=$$((2 * n)); echo $$((w > 8 ? 8 : w)))
# The slowest tests are listed at the end of a run: where the suite's time goes, in every CI log.
PYTEST_ARGS ?= --durations=15
PYTEST_PARALLEL := $(if $(filter 0,$(PYTEST_WORKERS)),,-n $(PYTEST_WORKERS) --dist loadfile)

.PHONY: help setup test lint typecheck pytest demo bench pins clean

help:
	@echo "make demo | make test | make bench | make setup | make pins | make clean"

setup: $(STAMPS)/package $(STAMPS)/browser

$(STAMPS)/venv:
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	grep -q AMENT_PREFIX_PATH $(VENV)/bin/activate || \
	  echo 'export AMENT_PREFIX_PATH="$$VIRTUAL_ENV$${AMENT_PREFIX_PATH:+:$$AMENT_PREFIX_PATH}"' >> $(VENV)/bin/activate
	mkdir -p $(STAMPS)
	touch $@

# pip compiles the installed modules to bytecode one at a time; compileall does it on every core (76 s
# for this step with pip's, 53 s so). A few files in the packages are not Python 3 and cannot be
# compiled, as with pip: compile_dir's result is not checked.
COMPILE_PACKAGES := import compileall, sysconfig; compileall.compile_dir(sysconfig.get_paths()["purelib"], quiet=2, workers=0)

$(STAMPS)/deps: $(STAMPS)/venv requirements.txt requirements-build.txt requirements-dev.txt requirements-rl.txt constraints.txt
	$(PIP) install --quiet -c constraints.txt pip setuptools wheel
	$(PIP) install --quiet --no-compile -c constraints.txt -r requirements.txt -r requirements-build.txt -r requirements-dev.txt -r requirements-rl.txt
	$(PY) -c '$(COMPILE_PACKAGES)'
	touch $@

$(STAMPS)/interfaces: $(STAMPS)/deps $(INTERFACE_INPUTS)
	$(PY) tools/build_interfaces.py
	touch $@

$(STAMPS)/package: $(STAMPS)/interfaces $(ROS2_TOOLS_STAMP) $(PACKAGE_INPUTS)
	$(PIP) install --quiet --no-deps --no-build-isolation .
	$(PY) -m acres_bridge.tools.link_executables
	# The compiled ray kernels, into numba's cache beside each copy of acres_sim: the working
	# tree's (tests, python -m) and the installed one (ros2 launch, run). numba compiles on one
	# core, so the two run side by side (about 20 s, 40 s one after the other on 2 cores).
	$(PY) -c '$(WARM_UP_KERNELS)' & working_tree=$$!; \
	  (cd / && $(abspath $(PY)) -c '$(WARM_UP_KERNELS)') && wait $$working_tree
	# The working tree's bytecode, which the tests and `python -m` import: where
	# PYTHONDONTWRITEBYTECODE is set, Python would compile those modules anew in every process
	# (0.8 s of CPU for a simulator's imports). A module changed later is compiled on import again.
	$(PY) -m compileall -q -j 0 $(PYTHON_FOLDERS)
	touch $@

# Debian's Chromium, headless, for the test that opens acres_report's page as a person would
# (test/report/test_report.py). Installed when apt-get can (root); else that test is skipped.
$(STAMPS)/browser: $(STAMPS)/venv
	@if command -v chromium >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium >/dev/null || \
	  { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium >/dev/null; }; \
	else echo "setup: chromium is not installed and apt-get cannot install it here: the browser test is skipped"; fi
	touch $@

# The wheels as they are (checked against their SHA256SUMS), then their PyPI dependencies, pinned.
$(STAMPS)/ros2-tools: $(STAMPS)/deps requirements-ros2-tools.txt constraints.txt $(wildcard $(ROS2_WHEELS)/*.whl)
	cd "$(ROS2_WHEELS)" && sha256sum --quiet -c SHA256SUMS
	$(PIP) install --quiet --no-deps "$(ROS2_WHEELS)"/*.whl
	$(PIP) install --quiet -c constraints.txt -r requirements-ros2-tools.txt
	touch $@

PYTHON_FOLDERS := acres_bridge acres_sim bench examples launch test tools

lint: setup
	$(VENV)/bin/ruff check $(PYTHON_FOLDERS)
	$(VENV)/bin/ruff format --check $(PYTHON_FOLDERS)

# mypy's cache, shared by the clones of this machine as pip's is: mypy checks each entry against
# its file's hash, so an entry of another clone counts only for an unchanged file.
MYPY_CACHE_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/acres_bridge/mypy

typecheck: setup
	$(VENV)/bin/mypy --cache-dir "$(MYPY_CACHE_DIR)"

# The tests run inside a private network namespace with only loopback, where DDS works across
# processes and nothing can leave the machine. Where unshare is not permitted, they run with
# the localhost discovery range alone, and say so.
pytest: setup
	@if unshare -n true 2>/dev/null; then \
	  unshare -n bash -c 'ip link set lo up && exec $(PY) -m pytest $(PYTEST_PARALLEL) $(PYTEST_ARGS)'; \
	else \
	  echo "make test: unshare -n is not permitted here; running with ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST only"; \
	  $(PY) -m pytest $(PYTEST_PARALLEL) $(PYTEST_ARGS); \
	fi

test: lint typecheck pytest

demo: setup
	$(VENV)/bin/acres_demo $(DEMO_ARGS)

# Like the tests, the benchmarks run in a private network namespace where that is permitted.
# Extra arguments: make bench BENCH_ARGS=--quick
bench: setup
	@if unshare -n true 2>/dev/null; then \
	  unshare -n bash -c 'ip link set lo up && exec $(PY) -m bench $(BENCH_ARGS)'; \
	else \
	  echo "make bench: unshare -n is not permitted here; running with ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST only"; \
	  $(PY) -m bench $(BENCH_ARGS); \
	fi

# Re-resolve the newest versions allowed by the requirement files and write them to constraints.txt.
pins:
	rm -rf build/pins-venv && $(PYTHON) -m venv build/pins-venv
	build/pins-venv/bin/pip install --quiet -U pip
	build/pins-venv/bin/pip install --quiet -r requirements.txt -r requirements-build.txt -r requirements-dev.txt -r requirements-rl.txt
	{ sed -n '1,/Refresh: make pins/p' constraints.txt; build/pins-venv/bin/pip freeze --all; } > constraints.txt.new
	mv constraints.txt.new constraints.txt

clean:
	rm -rf $(VENV) build *.egg-info .mypy_cache .ruff_cache .pytest_cache

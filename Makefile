# foliofarm entry points. `make run` and `make test` do their own set-up: Debian
# packages for the host, a pinned Python environment in .venv; kernel sources and
# arm64 packages are fetched by foliofarm itself into $(FOLIOFARM_CACHE).

PYTHON   ?= python3
VENV     := .venv
ARGS     ?=
RESULTS  ?= results
PYTEST_ARGS ?=

.PHONY: all run test unit integration hostile-as-user bench coverage mutants faults emulation fuzz setup setup-host venv list clean

all: run

## run: the whole matrix on the default kernel (ARGS='...' for foliofarm run, RESULTS=DIR);
## then, after its verdict and for the default base alone (no ARGS), the base's
## coverage map once (`coverage make --if-missing`: the series' runs select
## the selftests they reach by it; MAP=no leaves it for `make coverage`). The
## exit status is the verdict's.
MAP ?= yes
run: setup
	$(VENV)/bin/foliofarm run --noise --results "$(RESULTS)" $(ARGS); rc=$$?; \
	$(if $(strip $(ARGS)),,if [ "$(MAP)" != no ] && [ $$rc -le 1 ]; then \
	  $(VENV)/bin/foliofarm coverage make --if-missing --results "$(RESULTS)/coverage" \
	  || echo "make run: the coverage map was not made (see above); the verdict stands"; fi;) \
	exit $$rc

## test: unit tests, then integration tests that build and boot real kernels
test: setup
	$(VENV)/bin/pytest -ra --durations=25 $(PYTEST_ARGS) tests

unit: setup
	$(VENV)/bin/pytest -ra -m "not integration" $(PYTEST_ARGS) tests

integration: setup
	$(VENV)/bin/pytest -ra -m integration $(PYTEST_ARGS) tests

## hostile-as-user: the suites that attack the sandbox with the farm run as an
## unprivileged user (tools/as-user.sh: root runs them as uid 64000, with a home
## and cache of their own in /var/tmp/foliofarm-user; a cold cache builds the 4K
## kernel first). make test runs them as whoever runs it: root in CI.
HOSTILE_TESTS := tests/test_sandbox.py tests/test_hostile_series.py tests/test_hostile_sandbox.py \
	tests/test_bounds.py tests/test_hostile_bounds.py
hostile-as-user: setup
	FOLIOFARM_TEST_BUDGET_S=$${FOLIOFARM_TEST_BUDGET_S:-14400} tools/as-user.sh -ra $(PYTEST_ARGS) $(HOSTILE_TESTS)

## bench: warm, series and cold run times as ratios, build overhead, boot times,
## where the time goes; then every mutant and every fault (hours: BENCH_ARGS=
## without --cold leaves out the cold run and the raw makes; the pre-submit
## figures alone, hours: foliofarm selfcheck bench --series-only, the two-patch
## series and the area series (readahead, khugepaged, contpte) with selection
## and with --selftests all; --areas for those alone; each run is kept as it
## ends, and --resume goes on from a bench stopped part way)
BENCH_ARGS ?= --cold
bench: setup
	$(VENV)/bin/foliofarm selfcheck bench --results "$(RESULTS)/bench" $(BENCH_ARGS)
	$(VENV)/bin/foliofarm selfcheck mutants --results "$(RESULTS)/mutants"
	$(VENV)/bin/foliofarm selfcheck faults --results "$(RESULTS)/faults"

## coverage: the default kernel's coverage map, every page size (three coverage
## kernels, gcov; the own checks and every mm selftest run twice): a series then
## runs the selftests it can reach (docs/coverage.md; COVERAGE_ARGS='--page-sizes 4k')
COVERAGE_ARGS ?=
coverage: setup
	$(VENV)/bin/foliofarm coverage make --results "$(RESULTS)/coverage" $(COVERAGE_ARGS)

## mutants: every own mutant of 7.3 as a series against the warm base, and the
## benign series; prints caught/total (MUTANTS_ARGS='--only NAME' for one)
mutants: setup
	$(VENV)/bin/foliofarm selfcheck mutants --results "$(RESULTS)/mutants" $(MUTANTS_ARGS)

## faults: kill -9 at each stage, QEMU killed, damaged cache files, full disks;
## prints faults tried / survived (FAULTS_ARGS='--only NAME' for some)
faults: setup
	$(VENV)/bin/foliofarm selfcheck faults --results "$(RESULTS)/faults" $(FAULTS_ARGS)

## emulation: each way to make a TCG guest cheaper (pointer authentication off,
## SVE off, another CPU model, a thread per vCPU, one vCPU, more guests) as a
## --fresh run of the matrix beside the default's: time, and the same results
## or not (15 to 30 minutes each here; EMULATION_ARGS='--only NAME,...' for some,
## and --interleave to run the default again after each: the host's speed drifts)
emulation: setup
	$(VENV)/bin/foliofarm selfcheck emulation --results "$(RESULTS)/emulation" $(EMULATION_ARGS)

## fuzz: the fuzz suite with fresh inputs, 5000 per target (make test runs 500, seeded)
fuzz: setup
	FOLIOFARM_FUZZ_RANDOM=1 FOLIOFARM_FUZZ_EXAMPLES=$${FOLIOFARM_FUZZ_EXAMPLES:-5000} \
		$(VENV)/bin/pytest -ra -W ignore::DeprecationWarning tests/test_fuzz.py

list: setup
	$(VENV)/bin/foliofarm list

setup: setup-host venv

setup-host:
	tools/setup-host.sh

venv: $(VENV)/.stamp

$(VENV)/.stamp: requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check -r requirements.txt
	$(VENV)/bin/pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e .
	touch $@

clean:
	rm -rf $(VENV) results

import os
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DATA = Path(__file__).resolve().parent / "data"
STARTED = time.monotonic()

# Every results.json a test run writes is read back through the reader's schema
# as it is written (foliofarm/results/writer.py), subprocesses of the CLI included.
os.environ.setdefault("FOLIOFARM_CHECK_RESULTS", "1")

# A cold `make test` is meant to take at most 45 minutes (CI allows 90, host set-up
# included): a budget-gated test runs only if its cold cost fits in what is left of
# this; with the kernels cached (a second `make test`) every one fits.
BUDGET_S = float(os.environ.get("FOLIOFARM_TEST_BUDGET_S", 44 * 60))
# The gated tests in the order they get what is left: a sample of each slow suite
# first (mutants, the selftests' negative control, faults), then the tests that
# need kernels of their own or many builds.
GATED_ORDER = ("test_mutants", "test_last_part", "test_touched_runs", "test_mm_selftests",
               "test_negative_controls", "test_faults",
               "test_reproducer_runs", "test_bisect", "test_series_runs", "test_lab_runs",
               "test_concurrent_runs", "test_vng", "test_debug_variant", "test_coverage_runs", "test_kernel_612")


def pytest_configure(config):
    config.addinivalue_line("markers", "budget: runs only if the build it needs is cached or "
                                       "fits in what is left of the test time budget")
    config.addinivalue_line("markers", "early: an integration test run before the others, "
                                       "so that a run whose budget they spend still has it")


def pytest_collection_modifyitems(config, items):
    """Unit tests first, then the early integration tests, then the other
    integration tests, then the budget-gated ones."""
    def rank(item):
        if item.get_closest_marker("budget"):
            mod = item.module.__name__.rpartition(".")[2]
            return 3, GATED_ORDER.index(mod) if mod in GATED_ORDER else len(GATED_ORDER)
        if item.get_closest_marker("early"):
            return 1, 0
        return (2 if item.get_closest_marker("integration") else 0), 0
    items.sort(key=rank)


@pytest.fixture
def data_dir() -> Path:
    return DATA


@pytest.fixture
def budget():
    """Call budget(needs_s, what) to skip, with the reason, when a test's cold cost
    does not fit in what is left of the run's time budget."""
    def check(needs_s: float, what: str) -> None:
        left = BUDGET_S - (time.monotonic() - STARTED)
        if needs_s > left:
            pytest.skip(f"{what} needs about {needs_s / 60:.0f} min cold; {max(0, left) / 60:.0f} min "
                        f"of the {BUDGET_S / 60:.0f} min test budget left; `FOLIOFARM_TEST_BUDGET_S=14400 make test` "
                        "gives every gated test the time (hours on two cores)")
    return check


def pytest_terminal_summary(terminalreporter):
    """The fuzz suite's inputs tried per target (tests/test_fuzz.py)."""
    fuzz = sys.modules.get("test_fuzz") or sys.modules.get("tests.test_fuzz")
    counts = getattr(fuzz, "COUNTS", None)
    if counts:
        terminalreporter.write_sep("-", "fuzz: inputs tried per target")
        for target, n in counts.items():
            terminalreporter.write_line(f"{target}: {n} inputs")


@pytest.fixture
def reads_back():
    """reads_back(run_dir) on a folder a real run wrote: `foliofarm report`
    renders it again (exit 0), as a user re-renders a run or CI merges one;
    returns the document as read."""
    import json

    def check(run_dir: Path) -> dict:
        from foliofarm.cli import main
        run_dir = Path(run_dir).resolve()
        (run_dir / "report.md").unlink(missing_ok=True)
        code = main(["report", str(run_dir)])
        assert code == 0, f"foliofarm report refused {run_dir / 'results.json'}"
        assert (run_dir / "report.md").stat().st_size > 0
        return json.loads((run_dir / "results.json").read_text())
    return check


# The farm's own checks and the thpmaps cross-check of its reading, in every cell.
def matrix_checks() -> str:
    from foliofarm.judge import catalogue
    return catalogue.own() + ",thpmaps"


MATRIX_CHECKS = matrix_checks()


def load(results: Path) -> dict:
    import json
    return json.loads((results / "latest" / "results.json").read_text())


@pytest.fixture(scope="session")
def matrix_run(tmp_path_factory):
    """The whole matrix on 7.3 with every own check and thpmaps, booted for
    real (--fresh: not from an earlier run's cached measurements); shared by
    the integration tests that read a real run (test_integration.py) and those
    that compare another runner's figures with the farm's (test_vng.py)."""
    from foliofarm.cli import main
    results = tmp_path_factory.mktemp("results")
    code = main(["run", "--kernel", "debian:7.3", "--fresh", "--checks", MATRIX_CHECKS,
                 "--results", str(results)])
    return code, load(results), results


@pytest.fixture
def the_lab():
    """A LAVA lab on loopback (foliofarm/lava/lab.py: lava-server, its
    scheduler, two workers with a qemu device each): its URL and token file."""
    from foliofarm.lava import lab
    state = lab.up(workers=2, port=8900)
    try:
        yield state["url"], lab.lab_dir() / "token"
    finally:
        lab.down()

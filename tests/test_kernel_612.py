"""Debian 6.12 against 7.3: the behaviours 7.x fixed, reproduced on 6.12.

6.12 must give its own outcomes: the checks state the behaviour a kernel should
have, and the expectations mark what 6.12 is known to lack as xfail with the
reason. A 6.12 xfail that starts passing is an xpass; anything else (fail,
error) fails these tests. The cells: 64K (where the mmap_miss and force-THP
bugs live) and 4K."""

import json
from pathlib import Path

import pytest

from foliofarm import matrix
from foliofarm.intake import source

from foliofarm.kernel import build
from foliofarm.cli import main
from foliofarm.paths import cache_dir

pytestmark = [pytest.mark.integration, pytest.mark.budget]

CHECKS = "exec-text,mmap-miss,force-thp-ra,anon-mthp,sparse-read"
COLD_BUILD_S = 20 * 60      # source fetch and unpack, one kernel build, a boot


def cold_cost(page: str) -> float:
    """Seconds a run of 6.12 on ``page`` would spend building, 0 if cached."""
    cache = cache_dir()
    if not list((cache / "src").glob("linux-source-6.12_*/.foliofarm-ready")):
        return COLD_BUILD_S
    src = source.resolve("debian:6.12", cache)
    return 0 if build.Builder(cache).is_cached(src, matrix.page_sizes()[page]) else COLD_BUILD_S - 120


def run_612(page: str, results: Path) -> tuple[int, dict]:
    code = main(["run", "--kernel", "debian:6.12", "--fresh", "--page-sizes", page, "--fs", "xfs",
                 "--checks", CHECKS, "--results", str(results)])
    doc = json.loads((results / "latest" / "results.json").read_text())
    return code, {c["name"]: c for cell in doc["cells"] for c in cell["checks"]}


def test_612_64k_reproduces_mmap_miss_and_force_thp_bugs(budget, tmp_path):
    budget(cold_cost("64k"), "a Debian 6.12 64K kernel")
    code, got = run_612("64k", tmp_path)
    # exec readahead throttled after ~100 faults: the bug 7.2 fixed
    mm = got["mmap-miss"]
    assert mm["outcome"] == "xfail", mm["reason"]
    assert 95 <= mm["metrics"]["exec_ra_touches"] <= 105
    # MADV_HUGEPAGE file readahead unreachable: order-0 folios only
    ft = got["force-thp-ra"]
    assert ft["outcome"] == "xfail", ft["reason"]
    assert ft["metrics"]["max_folio_kb"] == 64
    for name, c in got.items():
        assert c["outcome"] in ("pass", "xfail"), (name, c["reason"])
    assert code == 0


def test_612_4k(budget, tmp_path):
    budget(cold_cost("4k"), "a Debian 6.12 4K kernel")
    code, got = run_612("4k", tmp_path)
    # no exec_folio_order(): exec text is not in 64K folios
    assert got["exec-text"]["outcome"] == "xfail", got["exec-text"]["reason"]
    # on 4K, fault-around's decrements keep exec readahead alive
    assert got["mmap-miss"]["metrics"]["exec_ra_pct"] == 100
    for name, c in got.items():
        assert c["outcome"] in ("pass", "xfail"), (name, c["reason"])
    assert code == 0


def test_compare_612_against_73_on_64k(budget, tmp_path, reads_back):
    """--compare: the before/after of the two 64K fixes, judged as `fixed`."""
    budget(cold_cost("64k"), "a Debian 6.12 64K kernel")
    code = main(["run", "--kernel", "debian:6.12", "--compare", "debian:7.3", "--page-sizes", "64k",
                 "--fs", "xfs", "--checks", "exec-text,mmap-miss,force-thp-ra",
                 "--results", str(tmp_path)])
    doc = json.loads((tmp_path / "latest" / "results.json").read_text())
    assert doc["sides"]["base"]["kernel"] == "6.12" and doc["sides"]["series"]["kernel"] == "7.3"
    got = {r["check"]: r for r in doc["verdicts"]}
    assert got["mmap-miss"]["verdict"] == "fixed", got["mmap-miss"]
    touches = {f["metric"]: f for f in got["mmap-miss"]["figures"]}["exec_ra_touches"]
    assert 95 <= touches["base"] <= 105 and touches["series"] == 400
    assert got["force-thp-ra"]["verdict"] == "fixed"
    assert got["exec-text"]["verdict"] in ("pass", "changed")   # same outcome; figures may move
    assert got["console"]["verdict"] == "pass"
    assert code == 0
    md = (tmp_path / doc["run_id"] / "report.md").read_text()
    assert md.startswith("# foliofarm: 6.12 vs 7.3")
    assert reads_back(tmp_path / doc["run_id"])["cells"] == doc["cells"]
    assert "| mmap-miss | 64k xfs 6.12 | 64k xfs 7.3 |" in md

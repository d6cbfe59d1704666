"""The coverage map made for real and used by a series run: a 4K coverage
kernel (gcov) runs the mremap and mlock selftests twice, the map is kept,
`foliofarm coverage reach` and `select` read it, and a series that changes
mm/mremap.c's move_ptes runs the mremap tests alone on its side: the mlock
tests are `not-reached`, the base's result standing."""

import gzip
import json
from pathlib import Path

import pytest

from foliofarm import matrix
from foliofarm.cli import main
from foliofarm.coverage import cmap
from foliofarm.intake import source
from foliofarm.kernel import build
from foliofarm.paths import cache_dir

pytestmark = [pytest.mark.integration, pytest.mark.budget]

MUTANT = Path(__file__).resolve().parent / "mutants" / "mremap-moved-unfolded.patch"
COLD_BUILD_S = 12 * 60      # a 4K coverage kernel (kernel/profiled.py), two cores
CATEGORIES = "mremap mlock"


def test_the_map_selects_what_a_series_reaches(budget, tmp_path, capsys, reads_back):
    cache = cache_dir()
    src = source.resolve("debian:7.3", cache)
    if not build.Builder(cache).is_cached(src, matrix.page_sizes()["4k"], "coverage"):
        budget(COLD_BUILD_S, "a 7.3 4K coverage kernel")
    budget(14 * 60, "two coverage runs, two series runs and a series built with gcov")
    code = main(["coverage", "make", "--page-sizes", "4k", "--fs", "ext4", "--mm-selftests", CATEGORIES,
                 "--results", str(tmp_path / "cov")])
    assert code == 0
    m = cmap.load(cmap.path(cache, src.xy, src.state(), "4k"))
    for t in ("mm-selftests: mremap_test", "mm-selftests: mlock2-tests", "exec-text"):
        assert len(m.tests[t].boots) >= 2, (t, m.tests[t].boots)
    assert "mm/mremap.c" in m.seen
    assert "move_ptes" in m.tests["mm-selftests: mremap_test"].executed.functions["mm/mremap.c"]
    assert "mm-selftests: mremap_test" in m.reaching("mm/mremap.c", "move_ptes")
    assert "mm-selftests: mlock2-tests" not in m.reaching("mm/mremap.c", "move_ptes")
    # the map as kept: gzip'd JSON, read back the same
    doc = json.loads(gzip.decompress(cmap.path(cache, src.xy, src.state(), "4k").read_bytes()))
    assert doc["tests"]["mm-selftests: mremap_test"]["lines"]["mm/mremap.c"]

    capsys.readouterr()
    assert main(["coverage", "reach", "--page-sizes", "4k", "mm/mremap.c:move_ptes"]) == 0
    said = capsys.readouterr().out
    assert "mm-selftests: mremap_test" in said and "mlock2-tests" not in said

    code = main(["run", "--page-sizes", "4k", "--fs", "ext4", "--checks", "mm-selftests",
                 "--mm-selftests", CATEGORIES, "--series", str(MUTANT), "--results", str(tmp_path / "run")])
    doc = reads_back(tmp_path / "run" / "latest")
    (reached,) = doc["series"]["reached"]
    assert reached["page_size"] == "4k" and not reached.get("everything")
    assert "mm-selftests: mremap_test" in reached.get("run", {})
    assert "mm-selftests: mlock2-tests" in reached["not_reached"]
    assert "mm/mremap.c: move_ptes" in doc["series"]["changed_functions"]
    rows = {r["check"]: r for r in doc["verdicts"] if r.get("subtest_of") == "mm-selftests"}
    assert rows["mm-selftests: mlock2-tests"]["verdict"] == "not-reached"
    assert rows["mm-selftests: mlock2-tests"]["series"] == "skip"
    assert rows["mm-selftests: mremap_test"]["verdict"] != "not-reached"
    junit = (tmp_path / "run" / "latest" / "junit.xml").read_text()
    assert "not-reached: base" in junit and "not reached" in junit
    assert code in (0, 1)

    # --selftests all: every test runs on the series' side
    code = main(["run", "--page-sizes", "4k", "--fs", "ext4", "--checks", "mm-selftests",
                 "--mm-selftests", CATEGORIES, "--series", str(MUTANT), "--selftests", "all",
                 "--results", str(tmp_path / "all")])
    doc = json.loads((tmp_path / "all" / "latest" / "results.json").read_text())
    assert doc["series"]["reached"][0]["everything"] == "--selftests all"
    assert not any(r["verdict"] == "not-reached" for r in doc["verdicts"])

    # --coverage: the series built with gcov too; which of its changed lines
    # ran, and by which tests, read back from what the run wrote
    code = main(["run", "--coverage", "--page-sizes", "4k", "--fs", "ext4", "--checks",
                 "contpte-mremap,mm-selftests", "--mm-selftests", "mremap", "--series", str(MUTANT),
                 "--results", str(tmp_path / "patch")])
    doc = reads_back(tmp_path / "patch" / "latest")
    (pc,) = doc["series"]["patch_coverage"]
    assert pc["page_size"] == "4k" and pc["cell"] == "4k-ext4"
    assert 2 <= pc["changed"] <= 3 and pc["ran"] == pc["changed"], pc
    assert {ln["file"] for ln in pc["lines"]} == {"mm/mremap.c"}
    ran_by = {t for ln in pc["lines"] for t in ln["tests"]}
    assert "contpte-mremap" in ran_by and "mm-selftests: mremap_test" in ran_by, ran_by
    assert not any("mlock" in t for t in ran_by)
    text = (tmp_path / "patch" / "latest" / "report.txt").read_text()
    assert f"4k-ext4: changed lines run: {pc['ran']} of {pc['changed']}" in text
    assert code in (0, 1)

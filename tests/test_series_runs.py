"""Pre-submit runs end to end: `foliofarm run --series` on the example series
against the cached Debian 7.3 tree, with real incremental builds and boots.

- benign.mbox (cover letter, base-commit trailer, a no-functional-change
  refactoring of mm/filemap.c): the full 3x3 matrix, every verdict `pass`, exit 0;
- no-apply: patch 2/2 does not apply; the run stops before building anything,
  names the patch and leaves the cached tree exactly as it was, exit 2;
- no-build with --each-commit: commit 1 builds, commit 2 is reported as the first
  that breaks, with the compiler's error line, exit 1.
The negative controls (regressions, exit 1) are in test_negative_controls.py."""

import json
from pathlib import Path

import pytest

from foliofarm import shown
from foliofarm.intake import apply, source
from foliofarm.judge import catalogue
from foliofarm.cli import main
from foliofarm.paths import cache_dir

pytestmark = pytest.mark.integration

EX = Path(__file__).resolve().parent.parent / "examples" / "series"


def load(results: Path) -> dict:
    return json.loads((results / "latest" / "results.json").read_text())


def cached_tree() -> Path:
    return source.resolve("debian:7.3", cache_dir()).tree


@pytest.mark.budget
def test_benign_series_gives_no_regression_on_the_full_matrix(budget, tmp_path, reads_back):
    budget(5 * 60, "the benign series on the full matrix (three incremental builds)")
    code = main(["run", "--kernel", "debian:7.3", "--series", str(EX / "benign.mbox"),
                 "--checks", catalogue.own(), "--results", str(tmp_path)])
    doc = load(tmp_path)
    assert doc["sides"]["base"]["kernel"] == "7.3"
    assert doc["sides"]["series"]["kernel"] == "7.3+series"
    assert doc["series"]["cover"] == "mm/filemap: one helper for the mmap_miss decrement"
    assert len(doc["series"]["patches"]) == 1
    # the mbox's base-commit is the unpacked 7.3 tree's commit: nothing to report
    assert "base_commit_note" not in doc["series"]
    assert doc["checkpatch"][0]["errors"] == 0
    rows = doc["verdicts"]
    assert len(rows) == 9 * (len(catalogue.own().split(",")) + 1)       # every cell, every check, console
    # pass, or xfail on both sides where the expectations say why (EROFS: no write path)
    bad = [(r["page_size"], r["fs"], r["check"], r["verdict"], r["series_reason"]) for r in rows
           if r["verdict"] != "pass" and (r["verdict"], r["check"], r["fs"]) != ("xfail", "write-folios", "erofs")]
    assert not bad
    # the series was really built (incrementally, in the base's build directory) and booted
    series_kernels = [k for k in doc["kernels"] if k["side"] == "series"]
    assert len(series_kernels) == 3 and all(not k.get("build_failed") for k in series_kernels)
    assert {k["artifacts"] for k in series_kernels}.isdisjoint(
        k["artifacts"] for k in doc["kernels"] if k["side"] == "base")
    assert code == 0
    run_dir = tmp_path / doc["run_id"]
    md = (run_dir / "report.md").read_text()
    assert "| thp-aligned-64kB |" in md and "| cont-aligned-64kB |" in md
    assert "4k ext4 base | 4k ext4 series" in md
    assert "foliofarm run --kernel debian:7.3 --series" in md
    html = (run_dir / "report.html").read_text()
    assert html.count("data:image/png;base64,") >= 3
    assert (run_dir / "plots" / "exec-text-4k.png").stat().st_size > 1000
    assert reads_back(run_dir)["cells"] == doc["cells"]


def test_series_that_does_not_apply_stops_and_leaves_the_tree(tmp_path, capsys):
    tree = cached_tree()
    before = apply.tree_snapshot(tree)
    code = main(["run", "--page-sizes", "4k", "--fs", "xfs", "--checks", "exec-text",
                 "--series", str(EX / "no-apply"), "--results", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2
    assert "patch 2/2 'mm/filemap: tolerate twice as many mmap misses" in " ".join(err.split())
    assert "does not apply" in err and "patch failed: mm/filemap.c" in err
    doc = load(tmp_path)
    assert doc["errors"][0]["stage"] == "input"
    assert doc["kernels"] == [] and doc["cells"] == []     # nothing was built or booted
    assert apply.tree_snapshot(tree) == before


def test_series_that_does_not_build_names_the_first_broken_commit(tmp_path, reads_back):
    tree = cached_tree()
    before = apply.tree_snapshot(tree)
    code = main(["run", "--page-sizes", "4k", "--fs", "xfs", "--checks", "exec-text",
                 "--series", str(EX / "no-build"), "--each-commit", "--results", str(tmp_path)])
    doc = load(tmp_path)
    assert code == 1
    each = doc["each_commit"]
    assert [(e["number"], e["ok"]) for e in each] == [(1, True), (2, False)]
    assert "mm/filemap.c:" in each[1]["errors"] and "error: implicit declaration" in each[1]["errors"]
    assert {r["verdict"] for r in doc["verdicts"]} == {"build-broken"}
    md = (tmp_path / doc["run_id"] / "report.md").read_text()
    # as Markdown shows it: the subject's "ra_ " escaped
    assert shown.markdown("First commit that does not build: 2 'mm/filemap: give the mmap_miss helper "
                          "a ra_ prefix'") in md
    assert reads_back(tmp_path / doc["run_id"])["each_commit"] == doc["each_commit"]
    assert apply.tree_snapshot(tree) == before

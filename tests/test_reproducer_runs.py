"""`foliofarm run --repro` for real: the 7.3 kernel of one cell built (or
cached), booted under QEMU with the reproducer's disk, the reproducer run
from a cold page cache: a C one (examples/repro/exec-resident.c: compiled for
arm64 in the sandbox) prints its figures, a shell one reads the guest's THP
state; each judged, its output kept in the cell's dump. Then base against
series on a 4K and a 64K cell: a readahead control (examples/series/) moves
the reproducer's figure in exactly the cell it affects, and a series that
WARNs on 64K only is the reproducer's regression there, with the WARN line,
confirmed by a second boot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foliofarm.cli import main

pytestmark = pytest.mark.integration
EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "repro"
SERIES = EXAMPLES.parent / "series"
EXEC_RESIDENT = str(EXAMPLES / "exec-resident.c")


def run(tmp_path: Path, *args: str, cells: str = "4k-xfs") -> tuple[int, dict, Path]:
    code = main(["run", "--cells", cells, "--fresh", "--results", str(tmp_path), *args])
    latest = (tmp_path / "latest").resolve()
    return code, json.loads((latest / "results.json").read_text()), latest


def repro_result(doc: dict) -> dict:
    [cell] = doc["cells"]
    return next(c for c in cell["checks"] if c["name"] == "repro")


def test_a_c_reproducer_runs_in_the_guest_and_its_figures_are_judged(tmp_path):
    code, doc, latest = run(tmp_path, "--repro", str(EXAMPLES / "exec-resident.c"))
    assert code == 0
    assert [c["name"] for c in doc["cells"][0]["checks"]] == ["repro", "console"]
    r = repro_result(doc)
    assert r["outcome"] == "pass" and r["metrics"]["exit_status"] == 0
    assert r["metrics"]["resident_pages"] > 0
    assert r["metrics"]["resident_kb"] == r["metrics"]["resident_pages"] * 4
    dump = (latest / "cells" / "4k-xfs-7.3" / "repro.dump").read_text()
    assert "meta check=repro fs=xfs page_size=4096" in dump and "X repro resident_pages: " in dump


def test_a_shell_reproducer_reads_the_guests_state_and_a_failing_one_fails(tmp_path):
    code, doc, latest = run(tmp_path / "ok", "--repro", str(EXAMPLES / "thp-state.sh"))
    assert code == 0 and repro_result(doc)["metrics"]["page_kb"] == 4
    dump = (latest / "cells" / "4k-xfs-7.3" / "repro.dump").read_text()
    assert "X repro always [madvise] never" in dump or "X repro [always] madvise never" in dump
    failing = tmp_path / "fails.sh"
    failing.write_text("#!/bin/sh\necho 'not there' >&2\nexit 7\n")
    code, doc, _ = run(tmp_path / "fails", "--repro", str(failing))
    r = repro_result(doc)
    assert r["outcome"] == "fail" and r["reason"] == "exit_status 7 (wanted <= 0)"
    assert code == 1


def repro_rows(doc: dict) -> dict[str, dict]:
    return {r["page_size"] + "-" + r["fs"]: r for r in doc["verdicts"] if r["check"] == "repro"}


@pytest.mark.budget
def test_a_readahead_control_moves_the_reproducers_figure_in_exactly_the_cells_it_affects(tmp_path, budget):
    """neg-force-thp-ra gates MADV_HUGEPAGE readahead off where the PMD order
    is over the page cache's largest (64K pages): exec-resident in its
    hugepage mode reads far less there, and the same on 4K."""
    budget(5 * 60, "a readahead control against a reproducer (4K and 64K series builds)")
    code, doc, latest = run(tmp_path, "--series", str(SERIES / "neg-force-thp-ra"), "--repro", EXEC_RESIDENT,
                            "--repro-args", "hugepage", cells="4k-xfs,64k-xfs")
    rows = repro_rows(doc)
    assert rows["4k-xfs"]["verdict"] == "pass" and rows["4k-xfs"].get("changed", []) == []
    moved = {f["metric"]: f for f in rows["64k-xfs"]["changed"]}
    assert rows["64k-xfs"]["verdict"] == "changed", rows["64k-xfs"]
    assert moved["resident_pages"]["series"] < moved["resident_pages"]["base"] / 2
    assert code == 0
    text = (latest / "report.txt").read_text()
    assert "Reproducer exec-resident.c hugepage (C, " in text
    assert "  64k-xfs: base exit 0, after exit 0: changed" in text
    assert "  4k-xfs: base exit 0, after exit 0: pass" in text
    assert doc["reproducer"]["args"] == ["hugepage"]


@pytest.mark.budget
def test_a_series_that_warns_on_64k_only_is_the_reproducers_regression_there_alone(tmp_path, budget):
    """examples/series/warn-64k-exec WARNs where exec_folio_order() is 0: the
    reproducer's exec faults reach it on 64K, not on 4K; on the base alone
    the reproducer has no news."""
    budget(5 * 60, "a 64K-only WARN against a reproducer (4K and 64K series builds)")
    code, doc, latest = run(tmp_path / "series", "--series", str(SERIES / "warn-64k-exec"),
                            "--repro", EXEC_RESIDENT, cells="4k-xfs,64k-xfs")
    rows = repro_rows(doc)
    assert rows["4k-xfs"]["verdict"] == "pass"
    assert rows["64k-xfs"]["verdict"] == "regression", rows["64k-xfs"]
    assert "WARNING" in rows["64k-xfs"]["series_reason"] and "filemap" in rows["64k-xfs"]["series_reason"]
    [series_64k] = [c for c in doc["cells"] if c["id"] == "64k-xfs-7.3+series"]
    [result] = [c for c in series_64k["checks"] if c["name"] == "repro"]
    assert result["confirmed"] is True, result       # booted again on both sides: again
    assert code == 1
    text = (latest / "report.txt").read_text()
    assert "  64k-xfs: base exit 0, after exit 0: regression" in text and "WARNING" in text
    code, doc, _ = run(tmp_path / "base", "--repro", EXEC_RESIDENT, cells="64k-xfs")
    assert code == 0 and repro_result(doc)["outcome"] == "pass"

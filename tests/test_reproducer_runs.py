"""`foliofarm run --repro` for real: the 7.3 kernel of one cell built (or
cached), booted under QEMU with the reproducer's disk, the reproducer run
from a cold page cache: a C one (examples/repro/exec-resident.c: compiled for
arm64 in the sandbox) prints its figures, a shell one reads the guest's THP
state; each judged, its output kept in the cell's dump."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foliofarm.cli import main

pytestmark = pytest.mark.integration
EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "repro"


def run(tmp_path: Path, *args: str) -> tuple[int, dict, Path]:
    code = main(["run", "--cells", "4k-xfs", "--fresh", "--results", str(tmp_path), *args])
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

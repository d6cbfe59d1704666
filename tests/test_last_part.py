"""No regression slips through the schedule's order: a series that regresses
only in the part the schedule runs last is still caught, in exactly its cells.

The run schedules the tree's parts longest first by their recorded times
(measure/durations.py). Here the records say the 16K selftests' page part is
the shortest of all, so it is the last of its page size's tree parts to start;
the series (tests/mutants/populate-half-16k.patch) breaks MADV_POPULATE on 16K
pages only, which only that part's madv_populate test sees. The records are
put back as they were after the run."""

from __future__ import annotations

import shutil

import pytest

from foliofarm import matrix
from foliofarm.measure import durations
from foliofarm.paths import cache_dir
from foliofarm.results.outcome import Verdict
from foliofarm.run import child
from foliofarm.selfcheck import mutants

pytestmark = [pytest.mark.integration, pytest.mark.budget]


def test_a_regression_only_in_the_last_scheduled_part_is_caught(tmp_path, budget):
    budget(12 * 60, "a one-file series on the 16K kernel, its selftests' parts booted")
    m = next(x for x in mutants.load() if x.name == "populate-half-16k")
    d = matrix.defaults()
    page = durations.GuestWork("7.3", "16k", "page", "", ("mm-selftests",),
                               durations.machine_key(d["guest_cpus"], d["guest_memory_mb"], "auto", "qemu"))
    path = durations.path_of(cache_dir())
    kept = tmp_path / "durations.json"
    had = path.exists()
    if had:
        shutil.copy2(path, kept)
    try:
        for _ in range(durations.KEEP):       # the shortest part of all, by its records
            durations.record(cache_dir(), page, 0.5, 0.5, 0.0)
        rc, doc = child.run_to_end(["--series", str(m.patch), "--page-sizes", "16k",
                                    "--checks", ",".join(m.checks), *m.run_args],
                                   tmp_path / "run", log=tmp_path / "run.log")
    finally:
        if had:
            shutil.copy2(kept, path)
        else:
            path.unlink(missing_ok=True)
    assert doc is not None, (tmp_path / "run.log").read_text()[-3000:]
    series = doc.sides.series.kernel
    tree = [b for b in doc.boots if b.kernel == series and b.part in ("tree", "page", "race")
            and b.started_s is not None]
    last = max(tree, key=lambda b: b.started_s)
    assert last.part == "page" and last.expected_s is not None and last.expected_s < 1, \
        [(b.part, b.fs, b.started_s, b.expected_s) for b in tree]
    assert len(tree) >= 4          # the page part and each cell's part
    rows = {(v.page_size, v.fs, v.check): v.verdict for v in doc.verdicts if not v.subtest_of}
    assert {k for k, v in rows.items() if v == Verdict.REGRESSION} == {
        ("16k", fs, "mm-selftests") for fs in ("ext4", "xfs", "erofs")}, rows
    cell = next(c for c in doc.cells if c.kernel == series and c.fs == "ext4")
    chk = next(c for c in cell.checks if c.name == "mm-selftests")
    assert any("madv_populate" in t.name and t.outcome.value == "fail" for t in chk.subtests), \
        [(t.name, t.outcome) for t in chk.subtests]
    assert rc == 1

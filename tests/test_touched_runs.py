"""A series that touches the THP code, on the real 4K kernel: MAINTAINERS
names khugepaged, split_huge_page_test and transhuge-stress for
mm/huge_memory.c, so the series' side runs those of them that take no folder
first, in a guest of their own, and their verdict is told (a milestone)
before the rest of the selftests' (measure/first.py). The whole verdict
still judges every test once, as a run without the split does."""

from __future__ import annotations

from pathlib import Path

import pytest

from foliofarm.measure.first import TOUCHED
from foliofarm.results.outcome import Verdict
from foliofarm.run import child

pytestmark = [pytest.mark.integration, pytest.mark.budget]
ROOT = Path(__file__).resolve().parent.parent


def test_the_touched_selftests_run_first_and_their_verdict_is_told_first(tmp_path, budget):
    budget(12 * 60, "a one-file series on the 4K kernel, its THP selftests booted on both sides")
    rc, doc = child.run_to_end(["--series", str(ROOT / "examples" / "series" / "touch-thp.mbox"),
                                "--cells", "4k-ext4", "--checks", "mm-selftests", "--mm-selftests", "thp"],
                               tmp_path, log=tmp_path / "run.log")
    assert doc is not None, (tmp_path / "run.log").read_text()[-3000:]
    touched = {t.program: t for t in doc.series.touched_selftests}
    assert set(touched) == {"khugepaged", "split_huge_page_test", "transhuge-stress"}
    assert touched["khugepaged"].named_by == ["MEMORY MANAGEMENT - THP (TRANSPARENT HUGE PAGE)"]
    series = doc.sides.series.kernel
    parts = {b.part: b for b in doc.boots if b.kernel == series and b.started_s is not None}
    assert {"touched", "page", "tree"} <= set(parts), sorted(parts)
    # first of the series' selftests guests: started with the first of them (each
    # guest's start is its end less its wall time, to a tenth of a second; guests
    # given a slot at once start within moments, one waiting for a part to end minutes later)
    assert parts["touched"].started_s <= min(b.started_s for p, b in parts.items() if p != "touched") + 2
    (mile,) = [m for m in doc.milestones if m.part == TOUCHED]
    whole = doc.milestones[-1]
    assert mile.seconds < whole.seconds and whole.part != TOUCHED
    assert {t.split()[0] for t in mile.tests} == {"khugepaged", "transhuge-stress"}   # not those taking the folder
    assert set(mile.verdicts) <= {str(Verdict.PASS), str(Verdict.XFAIL)}, mile.verdicts
    # the whole verdict: every test once, on both sides the same names
    cells = {c.kernel: c for c in doc.cells}
    names = {k: [t.name for t in next(x for x in c.checks if x.name == "mm-selftests").subtests]
             for k, c in cells.items()}
    assert names[series] == names[doc.sides.base.kernel] and len(set(names[series])) == len(names[series])
    assert any(n.startswith("khugepaged") for n in names[series])
    rows = {v.check: v.verdict for v in doc.verdicts if not v.subtest_of}
    assert rows["mm-selftests"] == Verdict.PASS, rows
    assert Verdict.REGRESSION not in rows.values(), rows
    # the series' KTAP, as kept beside the results, says where the touched tests ran
    kept = [f.read_text() for f in (tmp_path / "latest").resolve().rglob("mm-selftests.ktap")]
    assert any("the tests the series touches, run first, in boot 4k-nofs-touched" in k for k in kept)
    assert rc == 0

"""Every guest check must fail when the kernel misbehaves: each negative-control
series under examples/series/ breaks the behaviour one check guards. Run as a
pre-submit series (`foliofarm run --series`), it must be judged a regression in
the cells it should, leave every other verdict `pass`, and exit 1.

Cells: 4K and 64K on XFS (the controls touch mm/, not a filesystem)."""

import json
from pathlib import Path

import pytest

from foliofarm.cli import main

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parent.parent
PAGES = "4k,64k"
CHECKS = "exec-text,mmap-miss,force-thp-ra,anon-mthp,mthp-swap"

# control -> the page sizes where its check must regress (passes elsewhere)
CONTROLS = {
    "exec-text": {"4k"},
    "mmap-miss": {"4k", "64k"},
    "force-thp-ra": {"64k"},
    "anon-mthp": {"4k", "64k"},
    "mthp-swap": {"4k"},             # 64K splits every mTHP before swap-out anyway
}


# the first runs in every `make test`; the others when the time budget has room
# for their builds (tests/conftest.py), and always with the kernels cached
@pytest.mark.parametrize("check", [c if i == 0 else pytest.param(c, marks=pytest.mark.budget)
                                   for i, c in enumerate(CONTROLS)])
def test_negative_control(check, tmp_path, reads_back, budget):
    if check != next(iter(CONTROLS)):
        budget(4 * 60, f"the {check} negative control (4K and 64K series builds)")
    series = ROOT / "examples" / "series" / f"neg-{check}"
    code = main(["run", "--page-sizes", PAGES, "--fs", "xfs", "--checks", CHECKS,
                 "--series", str(series), "--results", str(tmp_path)])
    doc = json.loads((tmp_path / "latest" / "results.json").read_text())
    rows = doc["verdicts"]
    assert len(rows) == 2 * (len(CHECKS.split(",")) + 1)
    for r in rows:
        want = "regression" if r["check"] == check and r["page_size"] in CONTROLS[check] else "pass"
        assert r["verdict"] == want, (r["page_size"], r["check"], r["base_reason"], r["series_reason"],
                                      r["figures"])
    assert code == 1
    assert {cell["kernel"] for cell in doc["cells"]} == {"7.3", "7.3+series"}
    assert reads_back(tmp_path / doc["run_id"])["cells"] == doc["cells"]

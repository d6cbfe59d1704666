"""Every guest check must fail when the kernel misbehaves: each negative-control
series under examples/series/ breaks the behaviour one check guards. Applied with
git am to the cached 7.3 tree and rebuilt incrementally, it must make that check
fail in the cells it should, and leave every other check's outcome as on base.

Cells: 4K and 64K on XFS (the controls touch mm/, not a filesystem)."""

import json
from pathlib import Path

import pytest

from foliofarm.cli import main

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parent.parent
PAGES = "4k,64k"
CHECKS = "exec-text,mmap-miss,force-thp-ra,anon-mthp"

# control -> the page sizes where its check must fail (passes elsewhere)
CONTROLS = {
    "exec-text": {"4k"},
    "mmap-miss": {"4k", "64k"},
    "force-thp-ra": {"64k"},
    "anon-mthp": {"4k", "64k"},
}


def outcomes(results: Path) -> dict[tuple[str, str], dict]:
    doc = json.loads((results / "latest" / "results.json").read_text())
    return {(cell["page_size"], c["name"]): c for cell in doc["cells"] for c in cell["checks"]}


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    results = tmp_path_factory.mktemp("base")
    code = main(["run", "--page-sizes", PAGES, "--fs", "xfs", "--checks", CHECKS,
                 "--results", str(results)])
    got = outcomes(results)
    assert code == 0, {k: (v["outcome"], v["reason"]) for k, v in got.items()}
    return got


@pytest.mark.parametrize("check", list(CONTROLS))
def test_negative_control(check, base, tmp_path):
    series = ROOT / "examples" / "series" / f"neg-{check}"
    code = main(["run", "--page-sizes", PAGES, "--fs", "xfs", "--checks", CHECKS,
                 "--series", str(series), "--results", str(tmp_path)])
    got = outcomes(tmp_path)
    for (page, name), result in got.items():
        if name == check and page in CONTROLS[check]:
            assert result["outcome"] == "fail", (page, name, result["reason"], result["metrics"])
        else:
            assert result["outcome"] == base[(page, name)]["outcome"], (page, name, result["reason"])
    assert code == 1
    doc = json.loads((tmp_path / "latest" / "results.json").read_text())
    assert all(cell["kernel"] == "7.3+series" for cell in doc["cells"])

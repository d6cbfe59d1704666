"""The terminal tables fit an 80-column CI log without cutting a cell id."""

import copy
import io
import json
from pathlib import Path

from rich.console import Console

from foliofarm.results import read
from foliofarm.report import summary
from foliofarm.judge import catalogue, compare

DATA = Path(__file__).resolve().parent / "data" / "results"


def full_matrix() -> dict:
    """The recorded 4k-xfs series run spread over the 3x3 (ids as long as they get)."""
    d = json.loads((DATA / "benign-4k.json").read_text())
    cells = []
    for page in ("4k", "16k", "64k"):
        for fs in ("ext4", "xfs", "erofs"):
            for c in d["cells"]:
                c = copy.deepcopy(c)
                c.update(page_size=page, fs=fs, id=f"{page}-{fs}-{c['kernel']}")
                cells.append(c)
    d["cells"] = cells
    d["cells"][-1]["checks"][0]["outcome"] = "fail"
    d["verdicts"] = [r.model_dump() for r in compare.verdicts(read.typed(d))]
    return d


def render(width: int) -> str:
    d = full_matrix()
    buf = io.StringIO()
    console = Console(file=buf, width=width, force_terminal=False, color_system=None)
    summary.print_table(read.typed(d), [c.name for c in catalogue.select(None)], console)
    summary.print_verdicts(read.typed(d), console)
    return buf.getvalue()


def test_an_80_column_log_shows_every_cell_id_whole():
    out = render(80)
    assert max(len(line) for line in out.splitlines()) <= 80
    for page in ("4k", "16k", "64k"):
        for fs in ("ext4", "xfs", "erofs"):
            assert f" {page}-{fs}-7.3+series " in out and f" {page}-{fs}-7.3 " in out
            assert f" {page}-{fs} " in out
    assert "..." not in out and "…" not in out
    assert "exec-text: fail" in out and "regression" in out


def test_a_wide_terminal_gets_the_figures():
    out = render(200)
    assert "aligned 100.0%" in out and " 16k-erofs-7.3+series " in out

"""The farm against its own mutants (tests/mutants/), on the full 7.3 matrix:
a bounded sample here (`make mutants` runs them all), one per way of catching:
a figure that moves inside the bounds (exec readahead past the VMA end), a WARN
on one page size (a taint and a console report; run before the other
integration tests), a hang on one cell. Each must
be a regression in exactly the cells it names, and the hang reported within the
base's time for the check plus a minute."""

import json
import tomllib
from pathlib import Path

import pytest

from foliofarm.results.read import read
from foliofarm.results.schema import VerdictRow
from foliofarm.selfcheck import mutants

pytestmark = pytest.mark.integration


def test_mutant_rows_are_patches_kept_beside_them():
    rows = tomllib.loads((mutants.MUTANTS / "mutants.toml").read_text())["mutant"]
    assert len(rows) >= 25
    for m in mutants.load():
        text = m.patch.read_text()
        assert text.startswith("From ") and "\ndiff --git a/" in text, m.name
        assert m.cells and m.why


def test_judging_a_mutant_run():
    """On a real series run's document, its verdicts set by hand."""
    real = read(Path(__file__).parent / "data" / "results" / "benign-4k.json")
    rows = [("64k", "ext4", "exec-text", "regression"), ("64k", "ext4", "console", "regression"),
            ("64k", "xfs", "exec-text", "pass"), ("4k", "xfs", "ra-window", "changed")]
    doc = real.model_copy(update={"verdicts": [VerdictRow(page_size=p, fs=f, check=c, verdict=v)
                                               for p, f, c, v in rows]})
    m = mutants.Mutant("warn", mutants.MUTANTS / "x.patch", ["64k-ext4"], "")
    o = mutants.judge(doc, 1, m, ["4k-xfs", "64k-ext4", "64k-xfs"])
    assert o.caught == {"64k-ext4": ["exec-text", "console"]} and o.exit_status == 1
    assert o.elsewhere == {"4k-xfs": ["ra-window: changed"]} and not o.ok
    m.cells = ["64k-*"]
    o = mutants.judge(doc, 1, m, ["4k-xfs", "64k-ext4", "64k-xfs"])
    assert o.missed == ["64k-xfs"]


def test_a_hang_is_reported_with_the_base_time():
    """hang_reports on a real series run's document: the series' check that
    hung, with its time against the base's."""
    doc = read(Path(__file__).parent / "data" / "results" / "benign-4k.json")
    series_kernel = doc.sides.series.kernel
    cell = next(c for c in doc.cells if c.kernel == series_kernel)
    chk = cell.checks[0]
    chk.reason = "kernel hung or crashed: boot failed"
    chk.metrics["guest_seconds"] = 99.0
    (report,) = mutants.hang_reports(doc)
    assert report["cell"] == f"{cell.page_size}-{cell.fs}" and report["check"] == chk.name
    assert report["reported_after_s"] == 99.0 and report["base_s"] is not None


# Which the sample runs first, before the other integration tests (the `early`
# marker): a WARN on 64K only, caught in the three 64K cells and no other, so a
# `make test` whose budget the rest of the suite spends still tries one mutant.
FIRST = "warn-exec-order-zero"


def run_sample(names: list[str], results: Path) -> dict:
    code = mutants.main(["--only", ",".join(names), "--no-benign", "--results", str(results)])
    report = json.loads((results / "mutants.json").read_text())
    for o in report["outcomes"]:
        assert o["ok"], (o["name"], o["missed"], o["elsewhere"], o["error"])
    assert report["caught"] == report["total"] == len(names)
    assert code == 0
    return report


@pytest.mark.early
def test_a_warn_on_64k_only_is_caught_in_exactly_the_64k_cells(tmp_path):
    (o,) = run_sample([FIRST], tmp_path)["outcomes"]
    assert sorted(o["caught"]) == ["64k-erofs", "64k-ext4", "64k-xfs"] and not o["elsewhere"]


@pytest.mark.budget
def test_sample_of_mutants_is_caught_where_named_and_nowhere_else(tmp_path, budget):
    # two series on the full matrix: three incremental rebuilds and boots each
    budget(10 * 60, "the rest of the mutant sample (2 series x 3 incremental kernel builds)")
    rest = [n for n in mutants.SAMPLE if n != FIRST]
    report = run_sample(rest, tmp_path)
    hang = next(o for o in report["outcomes"] if o["name"] == "hang-64k-xfs-exec")
    assert hang["hang_report"]
    for h in hang["hang_report"]:
        assert h["cell"] == "64k-xfs"
        assert h["reported_after_s"] < (h["base_s"] or 0) + 60, h

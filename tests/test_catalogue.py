"""A check is one row (tests/vmtests/checks.toml): its program, arguments,
deadline, the function that reads its dump, its key figures and summary
column. The catalogue loads strictly, and every row is whole: a metrics
function, expectations for each page size and filesystem, and a dump recorded
from a real guest of each page size whose figures hold every key figure and
summary column the row names."""

import shutil
from pathlib import Path

import pytest

from foliofarm import matrix
from foliofarm.errors import ConfigError
from foliofarm.judge import catalogue, checks
from foliofarm.judge.metrics import METRICS
from foliofarm.matrix import cell_of
from foliofarm.paths import VMTESTS

DUMPS = Path(__file__).resolve().parent / "data" / "dumps"
# (a reproducer's row reads what a reproducer printed: tests/test_reproducer.py)
READ_FROM_DUMPS = [c for c in catalogue.by_name().values() if c.tree != "selftests" and not c.on_request]


def test_every_check_reads_its_dump_with_a_function_that_is_there():
    for chk in READ_FROM_DUMPS:
        assert chk.metrics in METRICS, chk.name
    assert [c.name for c in catalogue.by_name().values() if c.metrics is None] == ["mm-selftests"]
    assert catalogue.by_name()["repro"].metrics in METRICS


def test_a_check_on_request_runs_only_when_named():
    assert "repro" not in [c.name for c in catalogue.select(None)]
    assert "repro" not in catalogue.own().split(",")
    assert [c.name for c in catalogue.select("exec-text,repro")] == ["exec-text", "repro"]


@pytest.mark.parametrize("chk", READ_FROM_DUMPS, ids=lambda c: c.name)
def test_every_check_has_expectations_for_each_cell_of_73(chk):
    missing = [f"{p}-{fs}" for p in matrix.page_sizes() for fs in matrix.filesystems()
               if catalogue.expectation_for(chk.name, "7.3", p, fs) is None]
    assert missing == []


@pytest.mark.parametrize("chk", READ_FROM_DUMPS, ids=lambda c: c.name)
def test_every_check_has_a_real_dump_of_each_page_size_with_its_key_figures(chk):
    for page in matrix.page_sizes():
        found = sorted(DUMPS.glob(f"{page}-*-7.3.{chk.name}.dump"))
        assert found, f"no recorded 7.3 dump of {chk.name} on {page} (tools/record_dump.py)"
        fs = found[0].name.split("-")[1]
        got = checks.evaluate(chk, found[0].read_text(), cell_of(page, fs, "7.3"), "7.3")
        assert got.outcome == "pass", (found[0].name, got.reason)
        named = set(chk.figures) | {k for k, _ in chk.summary}
        assert chk.figures and chk.summary, chk.name
        assert named - set(got.metrics) == set(), f"{found[0].name}: figures the row names that it has not"


def test_the_selftests_row_names_its_counts():
    chk = catalogue.by_name()["mm-selftests"]
    assert set(chk.figures) >= {"pass", "fail", "xfail", "skip"}
    assert {k for k, _ in chk.summary} <= set(chk.figures)


def catalogue_with(tmp_path, monkeypatch, text: str) -> dict:
    shutil.copytree(VMTESTS, tmp_path / "vmtests", ignore=shutil.ignore_patterns("*.c", "*.o", "*.h"),
                    dirs_exist_ok=True)
    (tmp_path / "vmtests" / "checks.toml").write_text(text)
    monkeypatch.setattr(catalogue, "VMTESTS", tmp_path / "vmtests")
    catalogue.by_name.cache_clear()
    try:
        return catalogue.by_name()
    finally:
        monkeypatch.undo()
        catalogue.by_name.cache_clear()


ROW = '[x]\nprogram = "exec-text"\nargs = []\ntimeout = 10\n'


def test_a_misspelt_key_in_a_row_is_refused_naming_it(tmp_path, monkeypatch):
    with pytest.raises(ConfigError, match="timout"):
        catalogue_with(tmp_path, monkeypatch, ROW + 'metrics = "exec-text"\ntimout = 5\n')


def test_a_metrics_name_that_is_not_there_is_refused_naming_the_row(tmp_path, monkeypatch):
    with pytest.raises(ConfigError, match=r"\[x\] metrics = 'exec_text' is not a function"):
        catalogue_with(tmp_path, monkeypatch, ROW + 'metrics = "exec_text"\n')
    with pytest.raises(ConfigError, match=r"\[x\] has no metrics"):
        catalogue_with(tmp_path, monkeypatch, ROW)
    got = catalogue_with(tmp_path, monkeypatch, ROW + 'metrics = "exec-text"\nfigures = ["faults"]\n')
    assert got["x"].figures == ("faults",) and got["x"].mapping == "text"

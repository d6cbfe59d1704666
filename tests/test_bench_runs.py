"""make bench's pre-submit runs are kept as each ends and read back by
--resume (selfcheck/series_runs.py), on the document a real run wrote:
`examples/series/benign.mbox` with every default check on the 3x3 after
`make run` (2 cores, 2026-11-29; its own checks' verdict final after 92.6 s,
its whole verdict after 2,014 s)."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from foliofarm.errors import InfraError
from foliofarm.run import child
from foliofarm.selfcheck import bench, series_runs
from foliofarm.selfcheck.series_runs import Timed

DOC = Path(__file__).parent / "data" / "results" / "benign-series-7.3.json.gz"


def run_folder(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "results.json").write_bytes(gzip.decompress(DOC.read_bytes()))
    return folder


def kept_runs(tmp_path: Path, n: int) -> tuple[Timed, list[Timed]]:
    """The runs as a bench would have them: each read back from its folder."""
    def one(name: str, seconds: float) -> Timed:
        folder = run_folder(tmp_path, name)
        return Timed(seconds, 0, child.read_back(folder), folder)
    return one("make-run", 2096.0), [one(f"series-{i}", 2020.0 + 10 * i) for i in range(n)]


def test_a_stopped_bench_keeps_its_runs_and_resume_reads_them_back(tmp_path):
    base, runs = kept_runs(tmp_path, 2)
    path = tmp_path / "bench" / series_runs.FILE
    series_runs.save(path, "7.3", base, runs)
    again, more, lost = series_runs.load(path, "7.3")
    assert lost == [] and again is not None and len(more) == 2
    assert (again.seconds, again.rc, again.folder) == (2096.0, 0, base.folder)
    assert [r.seconds for r in more] == [2020.0, 2030.0]
    # read back and judged again from its cells: the run's own verdicts
    assert len(more[0].doc.verdicts) == len(runs[0].doc.verdicts) > 100
    assert {v.verdict for v in more[0].doc.verdicts if not v.subtest_of} <= {"pass", "flaky"}


def test_the_figures_of_resumed_runs_are_the_runs_own(tmp_path):
    base, runs = kept_runs(tmp_path, 4)
    path = tmp_path / series_runs.FILE
    series_runs.save(path, "7.3", base, runs[:2])         # stopped after two series runs
    base2, kept, _ = series_runs.load(path, "7.3")
    sv = bench.series_figures(base2, kept + runs[2:])
    json.dumps(sv, allow_nan=False)                         # bench.json is plain JSON
    assert sv["runs_seconds"] == [2030.0, 2040.0, 2050.0] and sv["seconds"] == 2040.0
    assert sv["first_after_make_run_seconds"] == 2020.0 and sv["make_run_seconds"] == 2096.0
    assert sv["own_seconds"] == 92.6 and sv["own_ratio_to_target"] == round(92.6 / bench.OWN_TARGET_S, 2)
    # benign.mbox touches no selftest's file: no such milestone, said as none
    assert sv["touched_seconds"] is None and sv["touched_runs_seconds"] == []
    assert sv["guest_cpu_seconds"] == pytest.approx(2445.8, abs=0.1) and sv["cores"] >= 1


def test_a_run_whose_folder_is_gone_is_made_again(tmp_path):
    base, runs = kept_runs(tmp_path, 2)
    path = tmp_path / series_runs.FILE
    series_runs.save(path, "7.3", base, runs)
    shutil.rmtree(runs[1].folder)
    again, more, lost = series_runs.load(path, "7.3")
    assert lost == [str(runs[1].folder)] and [r.folder for r in more] == [runs[0].folder]
    assert again is not None


def test_runs_of_another_kernel_or_a_damaged_file_say_what_to_do(tmp_path):
    base, runs = kept_runs(tmp_path, 1)
    path = tmp_path / series_runs.FILE
    series_runs.save(path, "7.2", base, runs)
    with pytest.raises(InfraError, match=r"kernel 7.2, not 7.3: bench --kernel 7.2 --resume"):
        series_runs.load(path, "7.3")
    path.write_text(path.read_text()[:40])
    with pytest.raises(InfraError, match="remove it to bench from the start"):
        series_runs.load(path, "7.2")
    assert series_runs.load(tmp_path / "none.json", "7.3") == (None, [], [])


def test_a_run_killed_by_a_signal_is_not_kept_and_the_bench_stops(tmp_path):
    """A series run stopped by SIGTERM (exit -15) once went into the median:
    it is left out of the file, the bench stops saying how to go on, and
    --resume makes that run again."""
    base, runs = kept_runs(tmp_path, 3)
    runs[2] = Timed(2105.8, -15, runs[2].doc, runs[2].folder)
    path = tmp_path / "bench" / series_runs.FILE
    with pytest.raises(SystemExit, match="exit -15.*--resume"):
        series_runs.save(path, "7.3", base, runs)
    again, more, lost = series_runs.load(path, "7.3")
    assert again is not None and [r.seconds for r in more] == [2020.0, 2030.0]

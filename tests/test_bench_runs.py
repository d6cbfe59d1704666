"""make bench's pre-submit runs are kept as each ends and read back by
--resume (selfcheck/series_runs.py), on the document a real run wrote:
`examples/series/benign.mbox` with every default check on the 3x3 after
`make run` (2 cores, 2026-11-29; its own checks' verdict final after 92.6 s,
its whole verdict after 2,014 s)."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from foliofarm.errors import InfraError
from foliofarm.run import child
from foliofarm.selfcheck import areas, bench, series_runs
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


# -- the area series (selfcheck/areas.py) ------------------------------------------

STRUCT = Path(__file__).parent / "data" / "results" / "struct-field-4k-7.3.json.gz"
REACHED = Path(__file__).parent / "data" / "results" / "reached-series-7.3.json.gz"


def area_run(tmp_path: Path, name: str, doc: Path, seconds: float) -> Timed:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "results.json").write_bytes(gzip.decompress(doc.read_bytes()))
    return Timed(seconds, 0, child.read_back(folder), folder)


def test_an_area_run_says_what_each_page_size_ran_and_why(tmp_path):
    """Read back from two real runs: the mremap mutant with selection on 4K
    (2 selftests reached, 7 not) and struct-field.mbox (a header: every
    selftest, with the reason)."""
    sel = areas.entry(area_run(tmp_path, "mremap", REACHED, 300.0))
    assert sel["selected"]["4k"]["ran"] == 2 and sel["selected"]["4k"]["not_reached"] == 7
    assert sel["incremental_build_seconds"] == {"4k": 57.8}
    assert sel["own_cpu_seconds"] == 0 and sel["guest_cpu_seconds"] == pytest.approx(318.5, abs=0.1)
    every = areas.entry(area_run(tmp_path, "struct", STRUCT, 510.0))
    assert every["selected"]["4k"]["everything"].startswith("mm/internal.h: not a C file")
    assert every["own_cpu_seconds"] > 0 and every["verdicts"]["pass"] == 15


def test_area_figures_are_medians_kept_and_read_back(tmp_path, monkeypatch):
    """bench-areas.json keeps each run as it ends; a run whose folder is gone
    is dropped (made again); the figures are the medians, selection against all."""
    monkeypatch.setattr(areas.patches, "areas", lambda: [{"name": "khugepaged", "area": "mm/khugepaged.c"}])
    done = {"khugepaged reached": [areas.entry(area_run(tmp_path, f"r{i}", REACHED, s))
                                   for i, s in enumerate((300.0, 280.0, 320.0))],
            "khugepaged all": [areas.entry(area_run(tmp_path, f"a{i}", STRUCT, s))
                               for i, s in enumerate((700.0, 650.0))]}
    path = tmp_path / areas.FILE
    path.write_text(json.dumps({"kernel": "7.3", "runs": done}))
    shutil.rmtree(tmp_path / "a1")
    kept = areas.load(path)
    assert len(kept["khugepaged reached"]) == 3 and len(kept["khugepaged all"]) == 1
    f = areas.area_figures(kept, 2)["khugepaged"]
    json.dumps(f, allow_nan=False)
    assert f["reached"]["seconds"] == 300.0 and f["reached"]["runs_seconds"] == [300.0, 280.0, 320.0]
    assert f["reached"]["ratio_to_target"] == 1.0 and f["all"]["seconds"] == 700.0
    assert f["all_over_reached"] == round(700.0 / 300.0, 2)
    assert f["reached"]["own_limit_seconds"] == 57.8       # its one build; no own boot
    path.write_text("{")
    with pytest.raises(InfraError, match="remove it to bench the areas from the start"):
        areas.load(path)


def test_area_runs_kept_gzipped_read_back_on_another_machine(tmp_path, monkeypatch):
    """Each area run's results.json is kept gzipped beside bench-areas.json:
    copied to another RESULTS with every run folder gone, the runs read back
    from their copies and give the same figures; a damaged copy drops its run."""
    monkeypatch.setattr(areas.patches, "areas", lambda: [{"name": "khugepaged", "area": "mm/khugepaged.c"}])
    here, there = tmp_path / "here", tmp_path / "there"
    done: dict[str, list[dict]] = {}
    for i, s in enumerate((300.0, 280.0)):
        t = area_run(tmp_path, f"r{i}", REACHED, s)
        e = areas.entry(t)
        e["kept"] = areas.keep(t, here, f"khugepaged reached {i + 1}")
        done.setdefault("khugepaged reached", []).append(e)
    (here / areas.FILE).write_text(json.dumps({"kernel": "7.3", "runs": done}))
    before = areas.area_figures(areas.load(here / areas.FILE), 2)
    shutil.copytree(here, there)
    for i in range(2):
        shutil.rmtree(tmp_path / f"r{i}")
    assert sorted(p.name for p in (there / areas.KEPT).iterdir()) == [
        "khugepaged-reached-1.json.gz", "khugepaged-reached-2.json.gz"]
    kept = areas.load(there / areas.FILE)
    assert len(kept["khugepaged reached"]) == 2
    assert areas.area_figures(kept, 2) == before
    (there / areas.KEPT / "khugepaged-reached-2.json.gz").write_bytes(b"\x1f\x8b\x08not gzip")
    assert len(areas.load(there / areas.FILE)["khugepaged reached"]) == 1


def test_a_gzipped_results_json_reads_back_and_a_bomb_is_refused(tmp_path, monkeypatch):
    from foliofarm.results import read
    doc = read.read(DOC)
    assert doc.run_id and doc.cells
    monkeypatch.setattr(read, "GZ_LIMIT", 1 << 20)
    bomb = tmp_path / "results.json.gz"
    bomb.write_bytes(gzip.compress(b" " * (2 << 20)))
    with pytest.raises(read.ResultsError, match="unpacks to more than 1 MB"):
        read.read(bomb)


@pytest.mark.integration          # Debian's 7.3 source, fetched once
def test_each_area_series_changes_one_function_and_compiles_anew(tmp_path):
    """Each area series, made against Debian's 7.3 as shipped, applies with
    git and changes exactly the function it names as selection sees it (its
    unique comment line is inert); two makings differ, so ccache cannot answer."""
    from foliofarm.coverage import reach
    from foliofarm.intake import source
    from foliofarm.paths import cache_dir
    tree = source.resolve("debian:7.3", cache_dir()).tree
    want = {"khugepaged": "collapse_max_ptes_none", "contpte": "contpte_set_ptes"}
    for row in areas.patches.areas():
        if row.get("series"):
            continue
        one = areas.patches.unique_area_patch(tree, row, tmp_path / row["name"] / "1")
        two = areas.patches.unique_area_patch(tree, row, tmp_path / row["name"] / "2")
        assert one.read_text() != two.read_text()
        before, _ = areas.patches.rewritten(tree, row)
        work = tmp_path / row["name"] / "tree"
        (work / row["file"]).parent.mkdir(parents=True)
        (work / row["file"]).write_text(before)
        subprocess.run(["git", "init", "-q", str(work)], check=True)
        subprocess.run(["git", "-C", str(work), "apply", str(one)], check=True)
        after = (work / row["file"]).read_text()
        diff = one.read_text().split("\ndiff --git", 1)[1]
        ch = reach.change(reach.parse_diff("diff --git" + diff), lambda p: before, lambda p: after)
        assert not ch.unseen and {f.name for f in ch.functions} == {want[row["name"]]}, ch


def test_an_area_run_gives_the_planners_16_core_figure_from_its_own_parts(tmp_path):
    """The mremap run's parts (a 4K page part of 291 CPU s) bound a 16-core host."""
    e = areas.entry(area_run(tmp_path, "mremap", REACHED, 300.0))
    assert e["planned_16_cores_bound_seconds"] is not None
    assert e["planned_16_cores_seconds"] >= e["planned_16_cores_bound_seconds"] > 100

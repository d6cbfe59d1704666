"""The mm selftests split by what they touch (foliofarm/measure/split.py): the
two parts a real run wrote, parsed by the kernel's KTAP parser and put
together, judge every test once, as one unsplit run of the same tests does."""

from __future__ import annotations

from pathlib import Path

import pytest

from foliofarm.matrix import cell_of
from foliofarm.results import read
from foliofarm.judge.measurement import Measurement, TestResult
from foliofarm.judge import ktap
from foliofarm.measure import split
from foliofarm.judge.catalogue import by_name
from foliofarm.judge.checks import judge_measurement
from test_ktap import parser  # noqa: F401  (fixture)

DATA = Path(__file__).parent / "data" / "ktap"
PART2 = "# foliofarm: part 2 of 2"


def parts(name: str) -> tuple[str, str]:
    """The page part and the cell part of a merged file a real run wrote."""
    text = (DATA / name).read_text()
    head, _, tail = text.partition(PART2)
    assert tail, f"{name} has no second part"
    return head, tail.partition("\n")[2]


def measured(parser, text: str, kind: str = "ktap", seconds: float = 10.0) -> Measurement:  # noqa: F811
    run = ktap.parse(text, parser)
    return Measurement.model_validate({
        "kind": kind, "ktap": text, "seconds": seconds, "splats": [], "taint": "", "taint_mask": 0,
        "tests": {"results": list(run.results), "complete": run.complete,
                  "planned": run.planned, "parser_errors": run.errors}})


def test_each_part_reports_the_others_tests_as_elsewhere(parser):  # noqa: F811
    page, cell = parts("split-7.3-4k-ext4-thp.ktap")
    p, c = measured(parser, page).tests.results, measured(parser, cell).tests.results
    assert [r.name for r in p] == [r.name for r in c]
    away_p = {r.name for r in p if r.reason.startswith(ktap.ELSEWHERE)}
    away_c = {r.name for r in c if r.reason.startswith(ktap.ELSEWHERE)}
    # the page part ran exactly the tests given no folder, the cell part the others
    assert away_p == {"khugepaged all:file /tmp/mm-fs", "split_huge_page_test /tmp/mm-fs"}
    assert away_p.isdisjoint(away_c) and away_p | away_c == {r.name for r in p}


def test_merged_parts_judge_every_test_once(parser):  # noqa: F811
    page, cell = parts("split-7.3-4k-ext4-thp.ktap")
    m = split.merge(measured(parser, page, seconds=70.0), measured(parser, cell, seconds=23.0),
                    "in boot 4k-nofs-7.3")
    assert m.kind == "ktap" and m.seconds == 93.0
    assert m.split["page"].where == "in boot 4k-nofs-7.3"
    out = judge_measurement(by_name()["mm-selftests"], m, cell_of("4k", "ext4", "7.3"), "7.3")
    assert out.outcome == "pass", out.reason
    names = [s.name for s in out.subtests]
    assert len(names) == len(set(names)) == 9
    assert all(s.outcome == "pass" for s in out.subtests), out.subtests
    assert not any("elsewhere" in s.reason for s in out.subtests)


def test_a_failure_in_either_part_is_the_cells(parser):  # noqa: F811
    page, cell = parts("split-7.3-4k-ext4-thp.ktap")
    broken = cell.replace("ok 7 split_huge_page_test /tmp/mm-fs\n",
                          "not ok 7 split_huge_page_test /tmp/mm-fs # exit=1\n")
    m = split.merge(measured(parser, page), measured(parser, broken), "x")
    out = judge_measurement(by_name()["mm-selftests"], m, cell_of("4k", "ext4", "7.3"), "7.3")
    assert out.outcome == "fail" and "split_huge_page_test" in out.reason
    broken = page.replace("ok 9 folio_split_race_test\n", "not ok 9 folio_split_race_test # exit=1\n")
    m = split.merge(measured(parser, broken), measured(parser, cell), "x")
    out = judge_measurement(by_name()["mm-selftests"], m, cell_of("4k", "ext4", "7.3"), "7.3")
    assert out.outcome == "fail" and "folio_split_race_test" in out.reason


def test_a_crash_of_the_page_part_is_every_cells_crash(parser):  # noqa: F811
    page, cell = parts("split-7.3-4k-ext4-thp.ktap")
    cut = page[:page.index("ok 3 khugepaged all:shmem")]
    dead = measured(parser, cut, kind="crash").model_copy(update={
        "reason": "kernel panic", "ended_boot": True, "splats": ["BUG: kernel NULL pointer dereference"],
        "taint": "D", "taint_mask": 128})
    m = split.merge(dead, measured(parser, cell), "in boot 4k-nofs-7.3")
    assert m.kind == "crash" and m.reason.startswith("the tests run once for the page size")
    assert m.splats == ["BUG: kernel NULL pointer dereference"] and m.taint_mask == 128
    out = judge_measurement(by_name()["mm-selftests"], m, cell_of("4k", "ext4", "7.3"), "7.3")
    assert out.outcome == "fail" and "kernel hung or crashed" in out.reason
    # what ran before the crash is kept, and the cell's own tests with it
    names = [s.name for s in out.subtests]
    assert "khugepaged" in names and "split_huge_page_test /tmp/mm-fs" in names


def test_an_error_of_one_part_names_it():
    ok = Measurement.model_validate({"kind": "ktap", "tests": {"results": [], "complete": True}, "seconds": 1.0})
    err = Measurement(kind="error", reason="the selftests disk is not mounted in the guest")
    m = split.merge(ok, err, "x")
    assert m.kind == "error"
    assert m.reason == "the tests that take the cell's filesystem: the selftests disk is not mounted in the guest"


@pytest.mark.parametrize("page_names,cell_names,expect", [
    # the same list walked by both: each place from the part that ran it
    (["a", "b", "c"], ["a", "b", "c"], ["a:p", "b:c", "c:p"]),
    # a part cut short (a crash): positions no longer agree, both parts' own tests
    (["a", "x"], ["a", "b", "c"], ["a:p", "x:p", "b:c"]),
])
def test_merge_results_order(page_names, cell_names, expect):
    away = {"status": "skip", "reason": ktap.ELSEWHERE + " runs in the other part"}
    # each part's own tests pass, tagged by the part (their reason)
    page = [TestResult(name=n, status="pass", reason="p") if n != "b" else TestResult(name=n, **away)
            for n in page_names]
    cell = [TestResult(name=n, status="pass", reason="c") if n == "b" else TestResult(name=n, **away)
            for n in cell_names]
    got = [f"{r.name}:{r.reason}" for r in split.merge_results(page, cell)]
    assert got == expect


def test_a_split_run_judges_the_selftests_as_an_unsplit_run_did():
    """The whole 3x3 with every default selftest, split (split-run-7.3.json,
    make run of 2026-11-26) against the same kernel unsplit, every test in the
    cell's own boot (default-run-7.3.json, 2026-11-24): every cell has the same
    tests with the same outcomes and counts of results, but for the known
    flaky and known-failing tests that move the known way between any two
    clean boots (tools/same_results.py, as for any two runs)."""
    import sys
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
    import same_results
    data = Path(__file__).parent / "data" / "results"
    before, after = (read.load(data / n) for n in ("default-run-7.3.json", "split-run-7.3.json"))
    st = {k: v for k, v in same_results.table(after).items() if k[2] == "mm-selftests"}
    assert len(st) == 9 and all(len(v["tests"]) == 43 for v in st.values())
    # the tests that take the cell's folder ran in ext4 and XFS, and skip on
    # read-only EROFS, as before
    for (page, fs, _), v in st.items():
        for name in ("khugepaged all:file /tmp/mm-fs", "split_huge_page_test /tmp/mm-fs"):
            assert (v["tests"][name][0] == "skip") == (fs == "erofs"), (page, fs, name)
    noted: list[str] = []
    diffs = [d for d in same_results.differences(before, after, noted) if " mm-selftests" in d]
    assert diffs == [], diffs


RACE = "# foliofarm: the tests that need their threads at once"


def test_the_race_part_and_the_page_part_put_together(parser):  # noqa: F811
    """A real run's three guests for one 16K cell (split-race-7.3-16k-ext4-thp.ktap):
    the page part with the vCPUs in turns, the race part (folio_split_race_test,
    a host thread per vCPU), the cell's part. Put together as the farm does,
    every test is judged once, from the guest that ran it, and the cell's
    verdict is the same as the file's."""
    page_and_race, cell = parts("split-race-7.3-16k-ext4-thp.ktap")
    head, _, race = page_and_race.partition(RACE)
    page = head.partition("\n")[2]                       # the file's own part header
    race = race.partition("\n")[2]
    mp, mr, mc = (measured(parser, t, seconds=s) for t, s in ((page, 60.0), (race, 114.0), (cell, 30.0)))
    for r in mr.tests.results:
        away = r.reason.startswith(ktap.ELSEWHERE)
        assert away == (r.name != "folio_split_race_test"), r
    assert any(r.name == "folio_split_race_test" and r.reason.startswith(ktap.ELSEWHERE)
               for r in mp.tests.results)
    whole_page, where = split.merge_page(mp, mr, "in boot 16k-nofs-7.3", "in boot 16k-nofs-race-7.3")
    assert where == "in boot 16k-nofs-7.3 and in boot 16k-nofs-race-7.3"
    assert whole_page.seconds == 174.0 and whole_page.race.seconds == 114.0
    m = split.merge(whole_page, mc, where)
    assert m.split["race"].where == "in boot 16k-nofs-race-7.3"
    chk = split.part(by_name()["mm-selftests"], "all")
    out = judge_measurement(chk, m, cell_of("16k", "ext4", "7.3"), "7.3")
    assert out.outcome == "pass", out.reason
    names = [s.name for s in out.subtests]
    assert len(names) == len(set(names)) == 9
    assert {s.name: s.outcome for s in out.subtests}["folio_split_race_test"] == "pass"
    assert not any("elsewhere" in s.reason for s in out.subtests)


def test_a_crash_of_the_race_part_is_the_cells(parser):  # noqa: F811
    page_and_race, cell = parts("split-race-7.3-16k-ext4-thp.ktap")
    head, _, race = page_and_race.partition(RACE)
    mp = measured(parser, head.partition("\n")[2])
    dead = measured(parser, race.partition("\n")[2].split("# running ./folio_split_race_test")[0],
                    kind="crash").model_copy(update={"reason": "the kernel panicked"})
    whole_page, where = split.merge_page(mp, dead, "in boot a", "in boot b")
    m = split.merge(whole_page, measured(parser, cell), where)
    assert m.kind == "crash"
    assert "need their threads at once" in m.reason and "panicked" in m.reason


def test_races_only_where_the_categories_hold_them():
    chk = by_name()["mm-selftests"]
    assert split.races(chk)                                           # the default categories
    from foliofarm.judge.catalogue import with_categories
    assert not split.races(with_categories([chk], "mmap rmap")[0])    # no thp: no race guest
    assert split.races(with_categories([chk], "thp")[0])
    assert split.races(with_categories([chk], "all")[0])


def test_the_race_part_judges_the_selftests_as_one_page_part_did():
    """The whole 3x3 with every default selftest, the page part's race test in
    a guest of its own with a host thread per vCPU and the rest with the vCPUs
    in turns (race-run-7.3.json: the base of `make bench` of 2026-11-26),
    against the same kernel with one page part, all of it a thread per vCPU
    (split-run-7.3.json): the same tests with the same outcomes and counts of
    results in every cell, but for known flaky and known-failing tests moving
    the known way, as between any two clean boots."""
    import sys
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
    import same_results
    data = Path(__file__).parent / "data" / "results"
    before, after = (read.load(data / n) for n in ("split-run-7.3.json", "race-run-7.3.json"))
    races = [b for b in after["boots"] if b.get("fs") == "nofs-race"]
    assert sorted(b["page_size"] for b in races) == ["16k", "4k", "64k"]
    assert all("thread=multi" in b["qemu"] for b in races)
    assert all("thread=single" in b["qemu"] for b in after["boots"] if b.get("fs") == "nofs")
    st = {k: v for k, v in same_results.table(after).items() if k[2] == "mm-selftests"}
    # the race test ran in every cell (on 64K a known failure, as before)
    assert len(st) == 9
    assert {k[0]: v["tests"]["folio_split_race_test"][0] for k, v in st.items()} == {
        "4k": "pass", "16k": "pass", "64k": "xfail"}
    noted: list[str] = []
    diffs = [d for d in same_results.differences(before, after, noted) if " mm-selftests" in d]
    assert diffs == [], diffs


def test_the_host_names_the_part_each_test_ran_in_as_the_guest_did(parser):  # noqa: F811
    """split.test_part (which part a boot made again runs alone for a failing
    test: measure/confirm.narrowed) agrees with what the guest script ran
    where, in a real run's parts (its page part held the race test then)."""
    chk = by_name()["mm-selftests"]
    page, cell = parts("split-7.3-4k-ext4-thp.ktap")
    for text, here in ((page, {split.PAGE, split.RACE}), (cell, {split.CELL})):
        ran = [r.name for r in split.ran_here(measured(parser, text).tests.results)]
        assert ran and {split.test_part(chk, n) for n in ran} <= here, ran
    assert split.test_part(chk, "folio_split_race_test") == split.RACE
    assert split.test_part(chk, "khugepaged -s 2") == split.PAGE
    assert split.test_part(chk, "split_huge_page_test /tmp/mm-fs") == split.CELL


def test_a_part_run_alone_is_judged_by_its_own_tests(parser):  # noqa: F811
    """A cell part booted again by itself: its failing test fails, the tests
    it left elsewhere are no failure and no error."""
    chk = by_name()["mm-selftests"]
    _, cell = parts("split-7.3-4k-ext4-thp.ktap")
    broken = cell.replace("ok 7 split_huge_page_test /tmp/mm-fs\n",
                          "not ok 7 split_huge_page_test /tmp/mm-fs # exit=1\n")
    c = cell_of("4k", "ext4", "7.3")
    out = judge_measurement(split.alone(chk, split.CELL), measured(parser, broken), c, "7.3")
    assert out.outcome == "fail" and [s.name for s in out.subtests if s.outcome == "fail"] == [
        "split_huge_page_test /tmp/mm-fs"]
    out = judge_measurement(split.alone(chk, split.CELL), measured(parser, cell), c, "7.3")
    assert out.outcome == "pass", out.reason

"""KTAP of the kernel's selftests read with the kernel's own parser
(foliofarm/judge/ktap.py), judged per test with known failures as data
(foliofarm/judge/selftests.py), and compared per test base against series."""

import re
from pathlib import Path

import pytest

from foliofarm.matrix import cell_of
from foliofarm.judge.measurement import Measurement
from foliofarm.results import read, schema
from foliofarm.intake import source
from foliofarm.judge import ktap
from foliofarm.judge import compare, selftests
from foliofarm.judge import catalogue
from foliofarm.judge.checks import judge_measurement
from foliofarm.paths import cache_dir

DATA = Path(__file__).resolve().parent / "data" / "ktap"


@pytest.fixture(scope="module")
def parser():
    cache = cache_dir()
    d = ktap.parser_dir(cache, lambda: source.resolve(f"debian:{ktap.PARSER_KERNEL}", cache).tree)
    return ktap.load_parser(d)


def by_name(run):
    return {r.name: r for r in run.results}


def test_run_vmtests_shape_plan_at_the_end(parser):
    """run_vmtests.sh's own shape: the plan last, names with spaces, each
    program's KTAP nested under "# ", a SKIP with and without a reason, and a
    test it counts but reports only as "[SKIP] ./X"."""
    run = ktap.parse((DATA / "shape-run_vmtests.txt").read_text(), parser)
    assert run.complete and run.planned == 6 and run.errors == []
    r = by_name(run)
    assert list(r) == ["hugetlb-mmap", "gup_test -u -n 1", "cow", "mdwe_test",
                       "khugepaged all:file", "rmap"]
    assert r["gup_test -u -n 1"].status == "fail" and r["gup_test -u -n 1"].reason == "exit=1"
    assert [(i.name, i.status) for i in r["cow"].inner] == [
        ("Basic COW after fork() ... with base page", "pass"),
        ("Basic COW after fork() ... with THP (2048 kB)", "fail"),
        ("thing", "skip")]
    assert r["cow"].inner[2].reason == "MADV_HUGEPAGE failed"
    assert r["hugetlb-mmap"].inner[1].reason == "no hugetlb pages"
    assert r["mdwe_test"].status == "skip"
    assert r["khugepaged all:file"].status == "skip"


def test_a_run_cut_short_names_the_test_it_ended_in(parser):
    """The guest died inside cow: what ran before keeps its results, cow is a
    crash with the inner results it printed, and the run is not complete."""
    lines = (DATA / "shape-run_vmtests.txt").read_text().splitlines()
    cut = "\n".join(lines[:lines.index("# [RUN] thing")]) + "\n[  12.3] Unable to handle kernel paging"
    run = ktap.parse(cut, parser)
    assert not run.complete and run.planned is None
    r = by_name(run)
    assert r["hugetlb-mmap"].status == "pass" and r["gup_test -u -n 1"].status == "fail"
    assert r["cow"].status == "crash" and "ended inside" in r["cow"].reason
    assert [i.status for i in r["cow"].inner][:2] == ["pass", "fail"]


def test_no_ktap_at_all(parser):
    run = ktap.parse("mm-selftests: the selftests disk is not mounted\n", parser)
    assert run.results == [] and not run.complete


def parsed_tests(parser, text):
    run = ktap.parse(text, parser)
    return {"results": list(run.results), "complete": run.complete,
            "planned": run.planned}


def measurement(parser, text):
    return Measurement.model_validate({"kind": "ktap", "ktap": text, "tests": parsed_tests(parser, text),
                                       "seconds": 1.0})


def test_judged_per_test_with_known_failures(parser, monkeypatch):
    """A failing test is xfail only where every failed result of its own is
    known; a new failure inside it fails the check."""
    text = (DATA / "shape-run_vmtests.txt").read_text()
    known = ({"test": "cow", "inner": "*with THP*", "reason": "THP size assumed 2M",
              "page_size": "64k"},
             {"test": "gup_test *", "reason": "no gup_test debugfs file", "kernel": "7.*"})
    monkeypatch.setattr(selftests, "known_failures", lambda check: known)
    chk = catalogue.by_name()["mm-selftests"]
    out = judge_measurement(chk, measurement(parser, text), cell_of("64k", "xfs", "7.3"), "7.3")
    subs = {s.name: s.model_dump() for s in out.subtests}
    assert subs["gup_test -u -n 1"]["outcome"] == "xfail"
    assert subs["hugetlb-mmap"]["outcome"] == "pass"
    assert subs["mdwe_test"]["outcome"] == "skip"
    # cow passed as a whole (exit 0) though one of its results failed
    assert subs["cow"]["outcome"] == "pass" and subs["cow"]["inner"] == {"pass": 1, "fail": 1, "skip": 1, "xfail": 0}
    assert out.outcome == "pass", out.reason
    assert out.metrics["pass"] == 3 and out.metrics["xfail"] == 1 and out.metrics["skip"] == 2
    # on 4k nothing is known about cow's THP results, and 6.12 knows nothing of gup_test
    failing = text.replace("# [PASS]\nok 3 cow", "# [FAIL]\nnot ok 3 cow # exit=1")
    out = judge_measurement(chk, measurement(parser, failing), cell_of("4k", "xfs", "6.12"), "6.12")
    subs = {s.name: s.model_dump() for s in out.subtests}
    assert subs["cow"]["outcome"] == "fail" and "with THP (2048 kB)" in subs["cow"]["reason"]
    assert subs["gup_test -u -n 1"]["outcome"] == "fail"
    assert out.outcome == "fail" and "cow" in out.reason
    out = judge_measurement(chk, measurement(parser, failing), cell_of("64k", "xfs", "7.3"), "7.3")
    assert {s.name: s.outcome for s in out.subtests}["cow"] == "xfail"


def test_a_crash_keeps_the_tests_before_it(parser):
    lines = (DATA / "shape-run_vmtests.txt").read_text().splitlines()
    cut = "\n".join(lines[:lines.index("# [RUN] thing")]) + "\n"
    m = Measurement.model_validate({"kind": "crash", "reason": "guest died during mm-selftests",
                                    "tests": parsed_tests(parser, cut)})
    out = judge_measurement(catalogue.by_name()["mm-selftests"], m, cell_of("4k", "ext4", "7.3"), "7.3")
    assert out.outcome == "fail" and "guest died" in out.reason
    assert {s.name: s.outcome for s in out.subtests} == {
        "hugetlb-mmap": "pass", "gup_test -u -n 1": "fail", "cow": "fail"}


def test_unparsed_or_empty_runs_are_errors(parser):
    chk = catalogue.by_name()["mm-selftests"]
    assert judge_measurement(chk, Measurement(kind="ktap", ktap="x"), cell_of("4k", "ext4", "7.3"), "7.3").outcome == "error"
    out = judge_measurement(chk, measurement(parser, "nothing here"), cell_of("4k", "ext4", "7.3"), "7.3")
    assert out.outcome == "error"


def cell(kernel, subtests, outcome="fail"):
    return {"id": f"16k-xfs-{kernel}", "page_size": "16k", "fs": "xfs", "kernel": kernel,
            "checks": [{"name": "mm-selftests", "outcome": outcome, "reason": "", "metrics": {},
                        "subtests": subtests}]}


def quiet(row) -> bool:
    """What the report leaves out of its tables: schema.VerdictRow.quiet of a verdict row."""
    return schema.VerdictRow.model_validate(row).quiet


def two_sided(*cells, **more):
    """A series run's document around ``cells`` (7.3 against 7.3+s)."""
    return {"run_id": "r", "command": ["foliofarm", "run"], "complete": True,
            "started": "2026-11-26T00:00:00Z",
            "sides": {"base": {"kernel": "7.3", "origin": "7.3"},
                      "series": {"kernel": "7.3+s", "origin": "7.3 + s"}},
            "cells": list(cells), **more}


def test_verdict_per_test_base_against_series():
    """A test that newly fails, or fails in more of its own results, is a
    regression (and so is the check); one that passes again is fixed; a
    change in how many results a test reported is changed; a result moving
    between pass and skip is not news (it follows what the guest could
    allocate)."""
    base = [{"name": "cow", "outcome": "xfail", "inner": {"pass": 10, "fail": 1, "skip": 0},
             "failed": ["a"]},
            {"name": "rmap", "outcome": "pass"},
            {"name": "merge", "outcome": "fail", "inner": {"pass": 5, "fail": 1, "skip": 0}},
            {"name": "khugepaged", "outcome": "pass", "inner": {"pass": 7, "fail": 0, "skip": 0}},
            {"name": "gup_test", "outcome": "pass", "inner": {"pass": 7, "fail": 0, "skip": 0}}]
    series = [{"name": "cow", "outcome": "xfail", "inner": {"pass": 9, "fail": 2, "skip": 0},
               "failed": ["a", "b"]},
              {"name": "rmap", "outcome": "pass"},
              {"name": "merge", "outcome": "pass", "inner": {"pass": 6, "fail": 0, "skip": 0}},
              {"name": "khugepaged", "outcome": "pass", "inner": {"pass": 6, "fail": 0, "skip": 1}},
              {"name": "gup_test", "outcome": "pass", "inner": {"pass": 8, "fail": 0, "skip": 0}}]
    doc = two_sided(cell("7.3", base), cell("7.3+s", series))
    rows = {r["check"]: r for r in [r.model_dump() for r in compare.verdicts(read.typed(doc))]}
    assert rows["mm-selftests: cow"]["verdict"] == "regression"
    assert "newly failing: b" in rows["mm-selftests: cow"]["series_reason"]
    assert rows["mm-selftests: rmap"]["verdict"] == "pass"
    assert rows["mm-selftests: merge"]["verdict"] == "fixed"
    assert rows["mm-selftests: khugepaged"]["verdict"] == "pass"
    assert quiet(rows["mm-selftests: khugepaged"])
    assert rows["mm-selftests: gup_test"]["verdict"] == "changed"
    assert [f["metric"] for f in rows["mm-selftests: gup_test"]["changed"]] == ["results"]
    assert rows["mm-selftests"]["verdict"] == "regression"
    assert quiet(rows["mm-selftests: rmap"])
    assert not quiet(rows["mm-selftests: cow"])


def test_a_count_that_moved_between_clean_boots_is_noise():
    """A test's count of results judged against the noise the base's two boots
    measured for it: within it, no news."""
    base = [{"name": "gup_test", "outcome": "pass", "inner": {"pass": 7, "fail": 0, "skip": 0}}]
    series = [{"name": "gup_test", "outcome": "pass", "inner": {"pass": 8, "fail": 0, "skip": 0}}]
    doc = two_sided(cell("7.3", base, "pass"), cell("7.3+s", series, "pass"),
                    noise={"16k-xfs": {"mm-selftests": {"results:gup_test": 1.0}}})
    rows = {r["check"]: r for r in [r.model_dump() for r in compare.verdicts(read.typed(doc))]}
    assert rows["mm-selftests: gup_test"]["verdict"] == "pass"
    assert rows["mm-selftests"]["verdict"] == "pass"


def test_a_known_failure_that_bails_out_elsewhere_is_no_news():
    """pagemap_ioctl on 64K bails out (a known failure): where it stops, how
    many of its results pass before it, and the results it never printed are
    no news; a result that fails with a line of its own is."""
    def t(passed, stop, failed=()):
        missing = [f"(no result #{i})" for i in range(stop + 1, 120)]
        return [{"name": "pagemap_ioctl", "outcome": "xfail",
                 "inner": {"pass": passed, "fail": len(missing) + len(failed), "skip": stop - passed},
                 "failed": [*failed, *missing][:40]},
                {"name": "khugepaged", "outcome": "xfail", "flaky": True,
                 "inner": {"pass": 18, "fail": 8, "skip": 0}, "failed": ["(no result #19)"]}]
    flaky_passed = [{"name": "khugepaged", "outcome": "pass", "inner": {"pass": 26, "fail": 0, "skip": 0}}]

    def judged(base, series):
        doc = two_sided(cell("7.3", base, "pass"), cell("7.3+s", series, "pass"))
        return {r["check"]: r for r in [r.model_dump() for r in compare.verdicts(read.typed(doc))]}

    rows = judged(t(71, 83), t(70, 80)[:1] + flaky_passed)
    assert rows["mm-selftests: pagemap_ioctl"]["verdict"] == "xfail"
    assert quiet(rows["mm-selftests: pagemap_ioctl"])
    assert rows["mm-selftests: khugepaged"]["verdict"] == "pass"
    assert rows["mm-selftests"]["verdict"] == "pass"
    # a known failure that passed on one side is no news either way
    xpass = [{"name": "pagemap_ioctl", "outcome": "xpass", "inner": {"pass": 100, "fail": 0, "skip": 19}}]
    named = t(71, 83, failed=["Hugetlb mem testing: only middle page dirty"])[:1]
    for a, b in ((t(71, 83)[:1], xpass), (xpass, t(71, 83)[:1]), (xpass, named)):
        rows = judged(a, b)
        assert rows["mm-selftests: pagemap_ioctl"]["verdict"] == "xfail"
        assert rows["mm-selftests"]["verdict"] == "pass"
    rows = judged(t(71, 83), t(70, 83, failed=["Anon memory testing: only middle page dirty"]))
    assert rows["mm-selftests: pagemap_ioctl"]["verdict"] == "regression"
    assert rows["mm-selftests"]["verdict"] == "regression"



TOTALS = re.compile(r"^# # Totals: pass:(\d+) fail:(\d+) xfail:(\d+) xpass:(\d+) skip:(\d+)")


def recorded_totals(text):
    """Per test, in run order, the program's own count of its results
    (kselftest's "# Totals:" line): a check on the parser independent of it.
    The last one: a forked child that bails out prints its own first (4K EROFS,
    khugepaged -s 2, collapse_max_ptes_shared: the child's "Totals: pass:23"
    before the parent's 26)."""
    out = []
    for section in re.split(r"^# running .*$", text, flags=re.M)[1:]:
        m = next((TOTALS.match(ln) for ln in reversed(section.splitlines()) if TOTALS.match(ln)), None)
        out.append(tuple(int(g) for g in m.groups()) if m else None)
    return out


@pytest.mark.parametrize("path", sorted(DATA.glob("run_vmtests-*.ktap")), ids=lambda p: p.stem)
def test_recorded_runs_of_real_guests(parser, path):
    """run_vmtests.sh as it ran in a real guest of each page size: every test
    it counted has a result and its time, the outcomes add up to its SUMMARY
    line, and each program's results parsed from its own KTAP agree with the
    totals it printed itself."""
    text = path.read_text()
    run = ktap.parse(text, parser)
    assert run.complete and run.planned == len(run.results) and run.errors == []
    summary = re.search(r"# SUMMARY: PASS=(\d+) SKIP=(\d+) FAIL=(\d+)", text)
    status = [r.status for r in run.results]
    assert (status.count("pass"), status.count("skip"), status.count("fail")) == tuple(
        int(g) for g in summary.groups())
    ran = [r for r in run.results if "not run" not in r.reason]
    totals = recorded_totals(text)
    assert len(totals) == len(ran)
    checked = 0
    for r, t in zip(ran, totals):
        assert r.seconds is not None or "left out" in r.reason or "no writable filesystem" in r.reason, r.name
        if t is None:
            continue
        count = {s: sum(i.status == s for i in r.inner) for s in ("pass", "fail", "xfail", "skip", "crash")}
        assert (count["pass"], count["xfail"], count["skip"]) == (t[0], t[2], t[4]), r.name
        if not count["crash"]:      # a bail-out leaves results missing, its totals do not count them
            assert count["fail"] == t[1], r.name
        checked += 1
    assert checked >= 20


def test_a_known_flaky_failure_is_no_news_either_way():
    """4K khugepaged bails out at collapse_max_ptes_swap in some runs: judged
    on both recordings (one run failing that way, one passing), the counts
    are the same, and base against series the test is a pass either way."""
    fails = {"name": "khugepaged", "status": "fail", "reason": "exit=1",
             "inner": [{"name": f"t{i}", "status": "pass"} for i in range(1, 18)]
             + [{"name": f"(no result #{i})", "status": "crash"} for i in range(18, 27)]}
    passes = {"name": "khugepaged", "status": "pass",
              "inner": [{"name": f"t{i}", "status": "pass"} for i in range(1, 27)]}
    earlier = dict(fails, inner=fails["inner"][:10] + [{"name": f"(no result #{i})", "status": "crash"}
                                                       for i in range(11, 27)])
    a = selftests.judge_tests("mm-selftests", [fails], "7.3", "4k", "xfs", True)
    b = selftests.judge_tests("mm-selftests", [passes], "7.3", "4k", "xfs", True)
    c = selftests.judge_tests("mm-selftests", [earlier], "7.3", "4k", "xfs", True)
    assert a[0] == b[0] == "pass" and a[2]["pass"] == b[2]["pass"] == 1
    assert a[3][0].flaky and a[3][0].outcome == "xfail"
    assert c[0] == "fail"       # bailing out earlier is not the known way
    doc = two_sided(cell("7.3", b[3], "pass"), cell("7.3+s", a[3], "pass"))
    rows = {r["check"]: r["verdict"] for r in [r.model_dump() for r in compare.verdicts(read.typed(doc))]}
    assert rows["mm-selftests: khugepaged"] == "pass"


def test_a_page_out_that_fell_short_is_the_flaky_test_too(parser):
    """Recorded in a real 4K EROFS guest: khugepaged's collapse_max_ptes_swap
    failed a second way ("Swapout 64 of 512 pages... Fail", MADV_PAGEOUT swapped
    out fewer pages than asked) and ran on to the end. The row for it makes the
    test a flaky xfail and the cell passes; any other result of khugepaged that
    fails beside it is still a failure of the cell."""
    text = (DATA / "run_vmtests-7.3-4k-erofs-pageout.ktap").read_text()
    tests = parsed_tests(parser, text)["results"]
    kh = next(t for t in tests if t.name == "khugepaged")
    assert [i.name for i in kh.inner if i.status == "fail"] == ["collapse_max_ptes_swap"]
    outcome, _, _, subs = selftests.judge_tests("mm-selftests", tests, "7.3", "4k", "erofs", True)
    sub = next(s for s in subs if s.name == "khugepaged")
    assert outcome == "pass" and sub.outcome == "xfail" and sub.flaky
    broken = [t.model_copy(update={"inner": [i.model_copy(update={"status": "fail"}) if i.name == "collapse_fork"
                                             else i for i in t.inner]}) if t is kh else t for t in tests]
    assert selftests.judge_tests("mm-selftests", broken, "7.3", "4k", "erofs", True)[0] == "fail"
    assert selftests.judge_tests("mm-selftests", tests, "7.4", "4k", "erofs", True)[0] == "fail"


def test_a_pagecache_folio_left_whole_on_4k_ext4_is_the_known_flaky_split(parser):
    """Recorded in a real 4K ext4 guest (make run, 2026-11-28; the cell part of
    its selftests): the debugfs
    split left one pagecache PMD folio whole and split_huge_page_test bailed
    out 'Split PMD-mapped pagecache folio to order 2 at in-folio offset 384
    failed'. Its row (measured flaky: 4 of 8 clean boots) makes it a flaky
    xfail there; the same failure on XFS, or the test bailing out with other
    words, is still a failure."""
    text = (DATA / "cell-7.3-4k-ext4-unsplit.ktap").read_text()
    tests = parsed_tests(parser, text)["results"]
    split = next(t for t in tests if t.name.startswith("split_huge_page_test /tmp"))
    assert "in-folio offset 384 failed" in split.reason
    outcome, _, _, subs = selftests.judge_tests("mm-selftests", tests, "7.3", "4k", "ext4", True)
    sub = next(s for s in subs if s.name == split.name)
    assert outcome == "pass" and sub.outcome == "xfail" and sub.flaky
    assert selftests.judge_tests("mm-selftests", tests, "7.3", "4k", "xfs", True)[0] == "fail"
    other = [t.model_copy(update={"reason": "exit=1; Bail out! write testfile"}) if t is split else t
             for t in tests]
    assert selftests.judge_tests("mm-selftests", other, "7.3", "4k", "ext4", True)[0] == "fail"


def test_a_skip_without_reason_takes_the_programs_own(parser):
    """run_vmtests.sh prints "ok N hugetlb-mmap # SKIP" with no reason; the
    program said why in its own KTAP, by its plan ("1..0 # SKIP ...") or its
    skipped results, as a real 64K guest printed them with too few 512M pages."""
    run = ktap.parse((DATA / "run_vmtests-7.3-64k-erofs.ktap").read_text(), parser)
    r = by_name(run)
    assert r["hugetlb-mmap"].status == "skip"
    assert r["hugetlb-mmap"].reason == "Not enough 524288 Kb pages"
    assert r["hugetlb-shm"].reason == "Not enough free huge pages"
    assert all(x.reason for x in run.results if x.status == "skip"), [
        x.name for x in run.results if x.status == "skip" and not x.reason]


def test_a_real_runs_tests_give_their_counts_to_the_noise(parser):
    """A clean base's figures for its noise (noise.sample_figures, as a
    --noise run folds them): a recorded real run's judged tests each give
    their count of results, as subtest_rows reads them."""
    from foliofarm import matrix
    from foliofarm.judge import noise
    text = (DATA / "run_vmtests-7.3-4k-xfs.ktap").read_text()
    cell = matrix.Cell(matrix.page_sizes()["4k"], matrix.filesystems()["xfs"], "7.3")
    chk = catalogue.by_name()["mm-selftests"]
    figs = noise.sample_figures([cell], [chk], "7.3", {"xfs/mm-selftests": measurement(parser, text)})
    counts = {k: v for k, v in figs["4k-xfs"]["mm-selftests"].items() if k.startswith("results:")}
    assert len(counts) > 20 and all(isinstance(v, int) and v > 0 for v in counts.values())
    run = ktap.parse(text, parser)
    some = next(r for r in run.results if r.inner)
    assert counts[f"results:{some.name}"] == len(some.inner)

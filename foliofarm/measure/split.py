"""A selftests check split by what its tests touch (``per_page = true`` in
tests/vmtests/checks.toml).

The cell's filesystem reaches a selftest only as the folder run_vmtests.sh
gives it on its command line (/tmp/mm-fs, bound to the cell's scratch
filesystem: khugepaged all:file, split_huge_page_test); every other test runs
in tmpfs on anonymous, shmem and hugetlb memory, the same in each cell of a page
size. So the farm runs those once per page size ("page" part), in a guest with
no cell filesystem attached at all: a test there that needed one could not
reach it, and would fail or skip where the whole run passes (tests/test_split.py
replays full runs to show that they judge the same). The tests that take the
folder run in each cell's own boot ("cell" part). Each part reports the other's
tests as SKIP "elsewhere: ..." (tests/vmtests/mm-selftests.sh); the host puts
a cell's part and its page size's part together into the one measurement the
check has always had, so that judging, comparing base with series, the noise,
the saved measurements and the report see every test in every cell.

The page part's tests whose threads must run at the same time (``at_once``:
folio_split_race_test spins waiting for its other thread) run in a guest of
their own whose vCPUs each have a host thread ("race" part); the rest of the
page part with TCG's vCPUs in turns, a quarter faster on a busy host. The two
are put together into the page part first.

On a series' side, the page part's tests the series touches (``touched``:
the programs MAINTAINERS names for the files it changes, intake/touched.py)
run first, in a guest of their own ("touched" part), and the page part leaves
them out: their verdict is final minutes before the rest's. The touched part
is put together into the page part before the race part."""

from __future__ import annotations

import dataclasses
from typing import Any

from foliofarm.boot import splat
from foliofarm.judge.ktap import ELSEWHERE
from foliofarm.judge.catalogue import Check, Kind
from foliofarm.judge.measurement import Measurement, PartOf, TestResult, TestsRun
from foliofarm.results.outcome import Status
from foliofarm.results.schema import Reached

PAGE, CELL, RACE, TOUCHED = "page", "cell", "race", "touched"
# the parts run once per page size, in guests with no cell filesystem
BARE_PARTS = (PAGE, RACE, TOUCHED)
# the folder run_vmtests.sh gives a test that takes the cell's filesystem: on
# its command line, the test runs in the cell part (tests/vmtests/mm-selftests.sh)
FS_DIR = "/tmp/mm-fs"


def splits(chk: Check) -> bool:
    """``chk`` runs as a page part and a cell part."""
    return chk.tree == "selftests" and bool(chk.options.get("per_page"))


def part(chk: Check, which: str, touched: str = "") -> Check:
    """``chk``'s part ``which``; ``touched``: the programs the series touches
    that run first (the page and touched parts leave each other's out)."""
    more = {"touched": touched} if touched and which in (PAGE, TOUCHED) else {}
    return dataclasses.replace(chk, options={**chk.options, "part": which, **more})


def not_reached(chk: Check, reached: Reached | None) -> Check:
    """``chk`` (a selftests check) with the tests the series cannot reach on
    its page size left out (``reached``: the series' schema.Reached of that
    page size, or None), as the guest driver takes them: "|name|name|"."""
    if reached is None or reached.everything or chk.tree != "selftests":
        return chk
    names = [t.split(": ", 1)[1] for t in reached.not_reached if ": " in t and "|" not in t]
    if not names:
        return chk
    return dataclasses.replace(chk, options={**chk.options, "not_reached": "|" + "|".join(names) + "|"})


def races(chk: Check) -> bool:
    """``chk``'s page part has tests that need their threads at once: they run
    as a part of their own ("race"), in a guest with a host thread per vCPU;
    not where the categories run include none of theirs."""
    if not splits(chk) or not str(chk.options.get("at_once", "")).split():
        return False
    theirs = set(str(chk.options.get("at_once_categories", "")).split())
    run = str(chk.options.get("categories", "all")).split()
    return not theirs or run == ["all"] or bool(theirs & set(run))


def alone(chk: Check, which: str) -> Check:
    """``chk``'s part ``which`` to run by itself, in a boot made again to see
    whether its failing tests fail again: measured and recorded without the
    other parts (their tests SKIP "elsewhere"), never judged as the whole."""
    return dataclasses.replace(chk, options={**chk.options, "part": which, "alone": True})


def is_alone(chk: Check) -> bool:
    return bool(chk.options.get("alone"))


def test_part(chk: Check, test: str) -> str:
    """The part the test named ``test`` (its run_vmtests.sh command line, as
    the results name it) of the split check ``chk`` runs in, in a run with no
    touched part (a boot made again): as the guest script decides it, the
    cell's where it is given the cell's folder, the race part's where its
    program needs its threads at once, else the page size's."""
    words = test.split()
    if FS_DIR in words:
        return CELL
    prog = words[0].rsplit("/", 1)[-1] if words else ""
    if prog in ("bash", "sh") and len(words) > 1:
        prog = words[1].rsplit("/", 1)[-1]
    return RACE if races(chk) and prog in str(chk.options.get("at_once", "")).split() else PAGE


def part_of(chk: Check) -> str | None:
    """"page", "race", "touched" or "cell" for a part of a split check, else None."""
    p = chk.options.get("part")
    return p if p in (*BARE_PARTS, CELL) else None


def page_parts(chk: Check, touched: str = "") -> set[str]:
    """The parts run once per page size that make up ``chk``'s page part
    (``touched``: with a touched part for those programs)."""
    return {PAGE} | ({RACE} if races(chk) else set()) | ({TOUCHED} if touched else set())


def touched_programs(chk: Check, touched: list[tuple[str, list[str]]]) -> str:
    """Of the series' touched programs (each with its categories), those the
    split check ``chk`` runs (its categories, less those it leaves out), as
    the guest script takes them; "" for none."""
    run = str(chk.options.get("categories", "all")).split()
    left_out = set(str(chk.options.get("left_out", "")).split())
    return " ".join(p for p, cats in touched
                    if p not in left_out and (run == ["all"] or set(cats) & set(run)))


def ran_here(results: list[TestResult]) -> list[TestResult]:
    """``results`` without the tests a part left to another (SKIP "elsewhere: ...")."""
    return [r for r in results if not (r.status == Status.SKIP and r.reason.startswith(ELSEWHERE))]


def merge_results(page: list[TestResult], cell: list[TestResult]) -> list[TestResult]:
    """The tests of both parts in the order run_vmtests.sh ran them: both parts
    walk the same list, each reporting the other's tests as "elsewhere", so
    where their names agree test by test each place takes the part that ran
    it (a test left out of both, as SKIP in both, once). Where they do not
    agree (a part cut short by a crash), the page part's tests, then the
    cell's."""
    names_p, names_c = [r.name for r in page], [r.name for r in cell]
    n = min(len(page), len(cell))
    if names_p[:n] != names_c[:n]:
        return ran_here(page) + ran_here(cell)
    out = []
    for i in range(max(len(page), len(cell))):
        mine = ran_here([x for x in (page[i] if i < len(page) else None,
                                  cell[i] if i < len(cell) else None) if x is not None])
        if mine:
            out.append(mine[0])
    return out


def _ktap(page_m: Measurement, cell_m: Measurement, where: str) -> str:
    return (f"# foliofarm: part 1 of 2, the tests that take no filesystem: run once for the "
            f"page size, {where}\n{page_m.ktap or page_m.console or ''}\n"
            f"# foliofarm: part 2 of 2, the tests that take the cell's filesystem: run in the "
            f"cell's own boot\n{cell_m.ktap or cell_m.console or ''}")


def merge_touched(page_m: Measurement, touched_m: Measurement, where_page: str,
                  where_touched: str) -> tuple[Measurement, str]:
    """The page part from the page size's guest (``page_m``) and the tests the
    series touches, run first (``touched_m``), both walking the same list."""
    m = merge(page_m, touched_m, where_page, second=TOUCHED)
    ktap = (f"# foliofarm: the tests the series touches, run first, {where_touched}\n"
            f"{touched_m.ktap or touched_m.console or ''}\n"
            f"# foliofarm: the rest, {where_page}\n{page_m.ktap or page_m.console or ''}")
    touched = PartOf(where=where_touched, kind=touched_m.kind, seconds=touched_m.seconds)
    return m.model_copy(update={"split": {}, "ktap": ktap, "touched": touched}), where_page


def merge_page(page_m: Measurement, race_m: Measurement, where_page: str,
               where_race: str) -> tuple[Measurement, str]:
    """The page part of a split check from its two guests: the tests with the
    vCPUs in turns (``page_m``) and those needing them at once (``race_m``),
    both walking the same list; and where they ran."""
    m = merge(page_m, race_m, where_page, second=RACE)
    ktap = (f"{page_m.ktap or page_m.console or ''}\n"
            f"# foliofarm: the tests that need their threads at once, {where_race}, "
            f"a host thread per vCPU\n{race_m.ktap or race_m.console or ''}")
    race = PartOf(where=where_race, kind=race_m.kind, seconds=race_m.seconds)
    return (m.model_copy(update={"split": {}, "ktap": ktap, "race": race, "touched": page_m.touched}),
            f"{where_page} and {where_race}")


def merge(page_m: Measurement, cell_m: Measurement, where: str, second: str = CELL) -> Measurement:
    """One cell's measurement of a split check from its page size's part
    (``where``: the boot it ran in) and its own part, both already parsed
    (``tests``). A crash in either is the cell's crash; else an error in
    either is the cell's error; the kernel's reports and taint of both count."""
    parts = {PAGE: page_m, CELL: cell_m}
    worst = next((k for k in (Kind.CRASH, Kind.ERROR) if k in (page_m.kind, cell_m.kind)), Kind.KTAP)
    m: dict[str, Any] = {"kind": worst, "split": {
        PAGE: PartOf(where=where, kind=page_m.kind, seconds=page_m.seconds),
        CELL: PartOf(kind=cell_m.kind, seconds=cell_m.seconds)}}
    if page_m.race is not None:
        m["split"][RACE] = page_m.race
    if page_m.touched is not None:
        m["split"][TOUCHED] = page_m.touched
    if worst != Kind.KTAP:
        bad = next(p for p in (PAGE, CELL) if parts[p].kind == worst)
        src = parts[bad]
        what = ("the tests run once for the page size" if bad == PAGE
                else "the tests that need their threads at once" if second == RACE
                else "the tests the series touches" if second == TOUCHED
                else "the tests that take the cell's filesystem")
        m.update(reason=f"{what}: {src.reason}", excerpt=src.excerpt, ended_boot=src.ended_boot,
                 boot_failed=src.boot_failed, console=src.console)
    tp, tc = page_m.tests, cell_m.tests
    if tp is not None and tc is not None:
        m["tests"] = TestsRun(results=merge_results(tp.results, tc.results), planned=tp.planned,
                              complete=tp.complete and tc.complete,
                              parser_errors=tp.parser_errors + tc.parser_errors, parser=tp.parser or tc.parser)
    elif tp is not None or tc is not None:
        m["tests"] = tp or tc
    if any(p.ktap is not None or p.console is not None for p in (page_m, cell_m)):
        m["ktap"] = _ktap(page_m, cell_m, where)
    for key in ("seconds", "transfer_seconds"):
        vals = [getattr(p, key) for p in (page_m, cell_m) if isinstance(getattr(p, key), (int, float))]
        if vals:
            m[key] = round(sum(vals), 2)
    m["splats"] = list(dict.fromkeys(page_m.splats + cell_m.splats))
    m["taint_mask"] = page_m.taint_mask | cell_m.taint_mask
    m["taint"] = splat.taint_letters(m["taint_mask"])
    m["kernel_log"] = "\n".join(x for x in (page_m.kernel_log, cell_m.kernel_log) if x)
    return Measurement(**m)

"""Which mm selftests a series can reach on one page size, and why each of
the others cannot: the base's coverage map (cmap.py) against the series'
change (reach.py).

A selftest runs when, on the base, it executed a line of a function the
series changes (or entered it). Everything runs when the map cannot answer:
the change is something no function map sees (reach.Change.unseen), it
touches a file the map holds no record of, or there is no map of this base
on this page size yet. A selftest whose source the series changes runs too
(intake/touched.py names them)."""

from __future__ import annotations

from dataclasses import dataclass, field

from foliofarm.coverage.cmap import CoverageMap, program
from foliofarm.coverage.reach import Change
from foliofarm.intake import touched


@dataclass
class Selection:
    page_size: str
    everything: str = ""                                   # why all run, or ""
    map: str = "this base's"                               # whose map answered
    run: dict[str, str] = field(default_factory=dict)      # test -> what it reaches
    not_reached: dict[str, str] = field(default_factory=dict)  # test -> why not

    def said(self) -> str:
        if self.everything:
            return f"{self.page_size}: every selftest runs: {self.everything}"
        return (f"{self.page_size}: {len(self.run)} of {len(self.run) + len(self.not_reached)} selftests "
                "reach what the series changes" + ("" if self.map == "this base's" else f" (map {self.map})"))


def select(cmap: CoverageMap | None, ch: Change, page_size: str, touched_programs: set[str] = frozenset(),
           borrowed: bool = False) -> Selection:
    """``borrowed``: the map is another base's (cmap.nearest): its line
    numbers are not this base's, so a test reaches a changed function when it
    entered a function of that name; a function the map cannot name there
    (inlined into its callers) in a file some test ran leaves every test to run."""
    sel = Selection(page_size)
    if cmap is None:
        sel.everything = (f"no coverage map of this base on {page_size} yet (`foliofarm coverage make` "
                          "makes it; `make run` does)")
        return sel
    if ch.whole:
        more = f" (and {len(ch.unseen) - 1} more)" if len(ch.unseen) > 1 else ""
        sel.everything = ch.unseen[0] + more
        return sel
    programs = {program(t) for t in cmap.selftests()} - {""}
    helpers = sorted(p for p in ch.selftest_sources if touched.program_of(p) not in programs)
    if helpers:
        sel.everything = (f"{helpers[0]}: a selftests source no mapped test is built from alone "
                          "(a helper, or a test the map has not run)")
        return sel
    unknown = sorted({f.file for f in ch.functions} - cmap.seen)
    if unknown:
        sel.everything = f"{unknown[0]}: the coverage map holds no record of it (not profiled, or not built)"
        return sel
    if borrowed:
        unnamed = [f for f in sorted(ch.functions, key=lambda f: (f.file, f.first))
                   if f.name not in cmap.defined.get(f.file, set()) and cmap.reaching(f.file)]
        if unnamed:
            sel.everything = (f"{unnamed[0].file}: {unnamed[0].name}: the borrowed map of another base cannot "
                              "name it (inlined there)")
            return sel
    for test in cmap.selftests():
        hits = [f for f in sorted(ch.functions, key=lambda f: (f.file, f.first))
                if (not borrowed and cmap.ran_any(test, f.file, f.lines))
                or f.name in cmap.tests[test].executed.functions.get(f.file, set())]
        if hits:
            sel.run[test] = "reaches " + ", ".join(f"{f.file}: {f.name}" for f in hits[:4]) + (
                f" and {len(hits) - 4} more" if len(hits) > 4 else "")
        elif program(test) in touched_programs:
            sel.run[test] = "the series changes its source"
        else:
            sel.not_reached[test] = _why_not(ch, page_size)
    return sel


def _why_not(ch: Change, page_size: str) -> str:
    names = sorted(f"{f.name}" for f in ch.functions)
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    if not names:
        return "the series changes no function the kernel runs (comments, blank lines or new functions alone)"
    return f"on the base ({page_size}) it executed none of {shown}"

"""A series' reach, from its commits in the tree: its diff against its base
read as a map sees it (reach.py), against the base's coverage map of each
page size (select.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from foliofarm.coverage import cmap, reach, select
from foliofarm.errors import FarmError, UsageError
from foliofarm.intake import git, touched
from foliofarm.results.schema import Reached
from foliofarm.results.writer import ResultsWriter


THIS_BASE = select.Selection("").map


def side(tree: Path, rev: str) -> Callable[[str], str]:
    """A file's text at ``rev`` ("" where it is not there)."""
    def text(path: str) -> str:
        try:
            return git.out(tree, "show", f"{rev}:{path}")
        except FarmError:
            return ""
    return text


def change(tree: Path, base: str, tip: str) -> reach.Change:
    diff = git.out(tree, "diff", "--no-color", "--no-renames", "-U0", base, tip)
    return reach.change(reach.parse_diff(diff), side(tree, base), side(tree, tip))


def reached(cache: Path, kernel_xy: str, base_state: str, tree: Path, base: str, tip: str,
            pages: list[str]) -> tuple[list[select.Selection], reach.Change]:
    """Per page size, the selftests the series between ``base`` and ``tip``
    reaches on the base's map (keyed by ``kernel_xy`` and ``base_state``)."""
    ch = change(tree, base, tip)
    programs = {touched.program_of(p) for p in ch.selftest_sources}
    out = []
    for page in pages:
        try:
            m = cmap.loaded(cache, kernel_xy, base_state, page)
            borrowed = nearest(cache, tree, kernel_xy, base_state, page) if m is None else None
        except UsageError as exc:
            out.append(select.Selection(page, everything=str(exc)))
            continue
        if borrowed is not None:
            m, away = borrowed
            sel = select.select(m, ch, page, programs, borrowed=True)
            sel.map = f"borrowed from the base {m.state[:12]}, {away} commit(s) away, by function name"
        else:
            sel = select.select(m, ch, page, programs)
        out.append(sel)
    return out, ch


def nearest(cache: Path, tree: Path, kernel_xy: str, state: str, page: str
            ) -> tuple[cmap.CoverageMap, int] | None:
    """The map of the base nearest ``state`` in ``tree``'s history (a
    followed tree's earlier base), and how many commits away; None where
    no other base of the tree has one."""
    best: tuple[cmap.CoverageMap, int] | None = None
    head = state.split("-", 1)[0]
    for p in cmap.others(cache, kernel_xy, page, state)[:20]:
        m = cmap.load(p)
        try:
            away = int(git.out(tree, "rev-list", "--count", f"{m.state.split('-', 1)[0]}...{head}").strip())
        except (FarmError, ValueError):
            continue            # not of this tree's history
        if best is None or away < best[1]:
            best = (m, away)
    return best


def functions_named(ch: reach.Change) -> list[str]:
    return sorted(f"{f.file}: {f.name}" for f in ch.functions)


def record(writer: ResultsWriter, log: Callable[..., None], cache: Path, tree: Path, kernel_xy: str,
           base_state: str, commits: list[str], pages: list[str]) -> None:
    """Which mm selftests the series (``commits`` on the base) reaches, by
    the base's coverage map of each page size: said in the log, kept in the
    results (the series' side leaves the others out: measure/passes.py)."""
    sels, ch = reached(cache, kernel_xy, base_state, tree, f"{commits[0]}^", commits[-1], pages)
    for sel in sels:
        log(f"reach: {sel.said()}", None)
    writer.set_series_reach([Reached(page_size=s.page_size, everything=s.everything, run=s.run,
                                     not_reached=s.not_reached, map="" if s.map == THIS_BASE else s.map)
                             for s in sels], functions_named(ch))

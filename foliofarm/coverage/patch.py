"""Patch coverage: which of a series' changed lines ran, on each page size
and filesystem, and by which check or selftest.

A series run on the coverage variant (`run --coverage`) builds the series'
side with gcov; its build keeps the notes (.gcno) of the objects it compiled
again (kernel/profiled.py keep_notes: the files it changes, and those that
include a header it changes), and its guests save the counters after each
check and selftest (boot/gcov.py). Here the notes alone, read by gcov, say
which changed lines are code (gcov lists them); each test's counters say
which of those it ran. A changed line is one the series adds or rewrites
(`git diff -U0`, its new side), not blank and not a comment. A changed file
no recompiled profiled object lists (one outside the profiled directories, a
header no profiled object includes) is named as not measured."""

from __future__ import annotations

import os
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable

from foliofarm.bounded import remove_tree
from foliofarm.coverage import cmap, gcda, reach
from foliofarm.errors import FarmError, GuestError
from foliofarm.intake import git
from foliofarm.kernel.profiled import NOTES
from foliofarm.results.schema import ChangedLine, PatchCoverage, Role
from foliofarm.results.writer import ResultsWriter

# changed lines kept per cell in results.json (the counts are of them all)
LINES_CAP = 2000


def changed_lines(tree: Path, base: str, tip: str) -> dict[str, set[int]]:
    """The lines the series adds or rewrites, per file, on its side: not blank,
    not a comment, not a selftest's."""
    diff = git.out(tree, "diff", "--no-color", "--no-renames", "-U0", base, tip)
    out: dict[str, set[int]] = {}
    for d in reach.parse_diff(diff):
        lines = {n for n, text in d.added if not reach.inert(text)}
        if lines and not d.path.startswith(reach.SELFTESTS):
            out[d.path] = lines
    return out


def code_lines(notes: Path, tree: Path, changed: dict[str, set[int]], work: Path
               ) -> dict[str, set[int]]:
    """Of ``changed``, the lines gcov lists (code) in the objects of ``notes``."""
    d = work / "notes"
    rels = gcda.unpack(notes, d, ".gcno")
    listed = gcda.gcov(d, rels, tree, d, set(changed)).listed if rels else {}
    return {f: ls & changed[f] for f, ls in listed.items() if ls & changed[f]}


def measure(run_dir: Path, page: str, label: str, notes: Path, tree: Path,
            changed: dict[str, set[int]]) -> list[PatchCoverage]:
    """Per cell of ``page``, which changed lines each test of the series' side
    (boots of kernel ``label``) ran."""
    work = Path(tempfile.mkdtemp(prefix="ffpatch-"))
    try:
        code = code_lines(notes, tree, changed, work)
        found = [a for a in cmap.archives(run_dir, page) if _side(a[1], label)]
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            ran = list(pool.map(lambda a: _ran(a[0], a[4], work / "notes", tree, set(code)), found))
    finally:
        remove_tree(work)
    by_cell: dict[str, dict[tuple[str, int], set[str]]] = {}
    lost: dict[str, list[str]] = {}
    for (_archive, _boot, check, cell, what), (lines, why) in zip(found, ran):
        cell = cell.removesuffix(f"-{label}")       # "4k-ext4-7.3+series-coverage": "4k-ext4"
        hits = by_cell.setdefault(cell, {})
        if lines is None:
            name = check if what.startswith("lost:") else cmap.test_name(check, what)
            lost.setdefault(cell, []).append(f"{name}: {why}" if why else name)
            continue
        for f, ls in lines.items():
            for n in ls & code.get(f, set()):
                hits.setdefault((f, n), set()).add(cmap.test_name(check, what))
    unmeasured = sorted(f"{f}: {len(ls)} line(s)" for f, ls in changed.items() if f not in code)
    every = sorted((f, n) for f, ls in code.items() for n in ls)
    return [PatchCoverage(
        page_size=page, cell=cell, changed=len(every), ran=sum(1 for k in every if hits.get(k)),
        lines=[ChangedLine(file=f, line=n, tests=sorted(hits.get((f, n), ()))) for f, n in every[:LINES_CAP]],
        unmeasured=unmeasured, lost=lost.get(cell, [])[:50]) for cell, hits in sorted(by_cell.items())]


def _side(boot: str, label: str) -> bool:
    """A boot (run/<boot dir>/<attempt>) of the kernel ``label`` ("7.3+series")."""
    name = boot.split("/")[-2] if boot.count("/") >= 2 else boot
    return f"-{label}-" in f"{name}-"


def _ran(archive: Path, what: str, notes: Path, tree: Path, files: set[str]
         ) -> tuple[dict[str, set[int]] | None, str]:
    if what.startswith("lost:") or not archive.is_file():
        return None, what.removeprefix("lost:").strip()
    work = Path(tempfile.mkdtemp(prefix="ffpatch-"))
    try:
        return gcda.executed(work, gcda.unpack(archive, work), notes, tree, files).lines, ""
    except (GuestError, FarmError) as exc:
        return None, str(exc)
    finally:
        remove_tree(work)


def record(writer: ResultsWriter, log: Callable[..., None], tree: Path, commits: list[str],
           label: str) -> None:
    """Patch coverage of the series (``commits`` in ``tree``) on each page size
    its side built with gcov, kept in the results and said in the log."""
    doc = writer.results()
    changed = changed_lines(tree, f"{commits[0]}^", commits[-1])
    found: list[PatchCoverage] = []
    for k in doc.kernels:
        notes = Path(k.artifacts) / NOTES if k.artifacts else None
        if k.side != Role.SERIES or k.build_failed or notes is None or not notes.is_file():
            continue
        try:
            cells = measure(writer.dir, k.page_size, label, notes, tree, changed)
        except (GuestError, FarmError) as exc:
            log(f"patch coverage {k.page_size}: not measured: {exc}", "yellow")
            continue
        for pc in cells:
            log(f"patch coverage {pc.page_size} {pc.cell}: changed lines run: {pc.ran} of {pc.changed}", None)
        found += cells
    writer.set_patch_coverage(found)

"""A base's coverage map, per page size: for every farm check and every mm
selftest the coverage kernel ran, the kernel lines it executed and the
functions it entered, the union over every boot that ran it (background
work such as khugepaged, kcompactd and reclaim differs between boots).

Made from a run of the coverage variant (boot/gcov.py wrote the counters
beside it) and kept in the cache: coverage/<X.Y>-<tree state>/<page>.json.gz.
A test is named as the farm names it: a check by its name ("exec-text"), a
selftest as "mm-selftests: <its run_vmtests.sh name>" ("mm-selftests:
khugepaged -s 2")."""

from __future__ import annotations

import gzip
import json
import os
import re
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from foliofarm.bounded import remove_tree
from foliofarm.coverage import gcda
from foliofarm.errors import GuestError, UsageError
from foliofarm.util import sha256_text, write_atomic

# 3: made from kernels that profile the directories of kernel/profiled.py alone (2: every object)
SCHEMA = 3
SELFTESTS = "mm-selftests"
INDEX = "index.tsv"


@dataclass
class Reach:
    """One test's reach: lines and functions per file, and the boots seen."""
    executed: gcda.Executed = field(default_factory=gcda.Executed)
    boots: set[str] = field(default_factory=set)
    cells: set[str] = field(default_factory=set)


@dataclass
class CoverageMap:
    kernel: str                 # "7.3"
    state: str                  # the tree's content (KernelSource.state())
    page_size: str
    tests: dict[str, Reach] = field(default_factory=dict)
    runs: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)       # archives the guest could not give
    seen: set[str] = field(default_factory=set)         # every profiled file, run or not
    defined: dict[str, set[str]] = field(default_factory=dict)   # file -> its functions gcov lists

    def reaching(self, file: str, function: str | None = None, line: int | None = None) -> list[str]:
        """The tests that executed ``function`` (entered it, or ran a line of
        it where ``lines`` says which are its), or ``line``, or anything of
        ``file``."""
        out = []
        for name, r in sorted(self.tests.items()):
            ran = r.executed.lines.get(file, set())
            if function is not None:
                hit = function in r.executed.functions.get(file, set())
            elif line is not None:
                hit = line in ran
            else:
                hit = bool(ran) or bool(r.executed.functions.get(file))
            if hit:
                out.append(name)
        return out

    def ran_any(self, test: str, file: str, lines: range) -> bool:
        r = self.tests.get(test)
        return r is not None and any(n in r.executed.lines.get(file, ()) for n in lines)

    def selftests(self) -> list[str]:
        return sorted(t for t in self.tests if t.startswith(f"{SELFTESTS}: "))


def test_name(check: str, what: str) -> str:
    return f"{SELFTESTS}: {what}" if check == SELFTESTS else check


def program(test: str) -> str:
    """The selftest program a map's test runs ("mm-selftests: ksm_tests -U": ksm_tests)."""
    words = test[len(SELFTESTS) + 2:].split() if test.startswith(f"{SELFTESTS}: ") else []
    return words[0] if words else ""


def key(kernel: str, state: str) -> str:
    return f"{kernel}-{sha256_text(state)[:16]}"


def path(cache: Path, kernel: str, state: str, page: str) -> Path:
    return cache / "coverage" / key(kernel, state) / f"{page}.json.gz"


def archives(run_dir: Path, page: str) -> Iterator[tuple[Path, str, str, str, str]]:
    """(archive, boot, check, cell, what) for every test the run's coverage
    kernels saved on ``page`` (boots named <page>-...)."""
    for index in sorted((run_dir / "coverage").glob(f"{page}-*/*/{INDEX}")):
        boot = f"{run_dir.name}/{index.parent.parent.name}/{index.parent.name}"
        for line in index.read_text(errors="replace").splitlines():
            parts = line.split("\t")
            if len(parts) != 4:
                continue
            name, check, cell, what = parts
            yield index.parent / f"{name}.tgz", boot, check, cell, what


def add_run(cmap: CoverageMap, run_dir: Path, build: Path, tree: Path) -> int:
    """Every test of ``run_dir`` on the map's page size read in (a gcov at a
    time per core); how many."""
    found = list(archives(run_dir, cmap.page_size))
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        read = list(pool.map(lambda a: _read(a[0], a[4], build, tree), found))
    n = 0
    for (archive, boot, check, cell, what), (ex, lost) in zip(found, read):
        if ex is None:
            cmap.lost.append(f"{boot}: {check} {what}" + (f": {lost}" if lost else ""))
            continue
        reach = cmap.tests.setdefault(test_name(check, what), Reach())
        reach.executed.add(ex)
        reach.boots.add(boot)
        reach.cells.add(cell)
        cmap.seen |= ex.seen
        for f, names in ex.defined.items():
            cmap.defined.setdefault(f, set()).update(names)
        n += 1
    if run_dir.name not in cmap.runs:
        cmap.runs.append(run_dir.name)
    return n


def _read(archive: Path, what: str, build: Path, tree: Path) -> tuple[gcda.Executed | None, str]:
    if what.startswith("lost:") or not archive.is_file():
        return None, ""
    work = Path(tempfile.mkdtemp(prefix="ffgcov-"))
    try:
        return gcda.executed(work, gcda.unpack(archive, work), build, tree), ""
    except GuestError as exc:
        return None, str(exc)
    finally:
        remove_tree(work)


# -- kept in the cache ------------------------------------------------------------

def ranges(lines: set[int]) -> str:
    """"1-5,9,12-20": a file's executed lines, compact."""
    out: list[str] = []
    for n in sorted(lines):
        if out and (m := re.fullmatch(r"(\d+)(?:-(\d+))?", out[-1])) and int(m.group(2) or m.group(1)) == n - 1:
            out[-1] = f"{m.group(1)}-{n}"
        else:
            out.append(str(n))
    return ",".join(out)


def unranges(text: str) -> set[int]:
    out: set[int] = set()
    for part in filter(None, text.split(",")):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


def save(cache: Path, cmap: CoverageMap) -> Path:
    doc = {"schema": SCHEMA, "kernel": cmap.kernel, "state": cmap.state, "page_size": cmap.page_size,
           "runs": cmap.runs, "lost": cmap.lost, "seen": sorted(cmap.seen),
           "defined": {f: sorted(n) for f, n in sorted(cmap.defined.items())},
           "tests": {name: {"boots": sorted(r.boots), "cells": sorted(r.cells),
                            "lines": {f: ranges(ls) for f, ls in sorted(r.executed.lines.items())},
                            "functions": {f: sorted(fs) for f, fs in sorted(r.executed.functions.items())}}
                     for name, r in sorted(cmap.tests.items())}}
    out = path(cache, cmap.kernel, cmap.state, cmap.page_size)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(out, gzip.compress(json.dumps(doc, sort_keys=True).encode(), 6))
    return out


def load(file: Path) -> CoverageMap:
    try:
        doc = json.loads(gzip.decompress(file.read_bytes()))
    except (OSError, ValueError, EOFError) as exc:
        raise UsageError(f"{file}: not a coverage map the farm reads ({exc}); delete it and "
                         "`foliofarm coverage make` again") from exc
    if doc.get("schema") != SCHEMA:
        raise UsageError(f"{file}: coverage map schema {doc.get('schema')}, this farm reads {SCHEMA}: "
                         "make it again (`foliofarm coverage make`)")
    cmap = CoverageMap(doc["kernel"], doc["state"], doc["page_size"], runs=doc["runs"], lost=doc["lost"],
                       seen=set(doc["seen"]), defined={f: set(n) for f, n in doc["defined"].items()})
    for name, t in doc["tests"].items():
        ex = gcda.Executed(lines={f: unranges(s) for f, s in t["lines"].items()},
                           functions={f: set(fs) for f, fs in t["functions"].items()})
        cmap.tests[name] = Reach(ex, set(t["boots"]), set(t["cells"]))
    return cmap


def loaded(cache: Path, kernel: str, state: str, page: str) -> CoverageMap | None:
    p = path(cache, kernel, state, page)
    return load(p) if p.is_file() else None


def others(cache: Path, kernel: str, page: str, state: str) -> list[Path]:
    """The maps of other bases of ``kernel`` on ``page``, newest first."""
    found = [p for p in (cache / "coverage").glob(f"{kernel}-*/{page}.json.gz")
             if p.parent.name != key(kernel, state)]
    return sorted(found, key=lambda p: p.stat().st_mtime, reverse=True)

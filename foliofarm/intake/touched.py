"""The kernel's mm selftests a series touches, named by the tree itself.

MAINTAINERS names each area's sources (F: patterns) and, in the mm sections,
that area's selftests (F: tools/testing/selftests/mm/khugepaged.c, ...). A
file the series changes falls in every section one of whose patterns matches
it (get_maintainer.pl's rules, matches());
the selftests those sections name, and any selftest source the series
changes itself, are the touched ones. A section that names the whole
selftests folder (the catch-all mm sections) names no test in particular
and adds none. run_vmtests.sh then says which programs it runs and in which
categories (its `CATEGORY="thp" run_test ./khugepaged ...` lines): a touched
source no line runs (a helper such as uffd-common.c) is no test."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from foliofarm.errors import InfraError
from foliofarm.intake import git

SELFTESTS = "tools/testing/selftests/mm/"
RUN_VMTESTS = SELFTESTS + "run_vmtests.sh"


@dataclass(frozen=True)
class Area:
    name: str
    files: tuple[str, ...]        # F: patterns
    excluded: tuple[str, ...]     # X: patterns

    def covers(self, path: str) -> bool:
        return any(matches(p, path) for p in self.files) and not any(matches(p, path) for p in self.excluded)

    def selftests(self) -> tuple[str, ...]:
        """The F: patterns of particular mm selftests (not the whole folder)."""
        return tuple(p for p in self.files if p.startswith(SELFTESTS) and p != SELFTESTS)


def sections(text: str) -> list[Area]:
    """MAINTAINERS' sections: a name line, then its tagged lines (X: tab)."""
    out: list[Area] = []
    name, files, excluded = "", [], []
    for line in text.splitlines() + [""]:
        tag = re.match(r"^([A-Z]):\s*(.*)$", line)
        if tag and name:
            if tag.group(1) == "F":
                files.append(tag.group(2).strip())
            elif tag.group(1) == "X":
                excluded.append(tag.group(2).strip())
        elif not line.strip():
            if name and files:
                out.append(Area(name, tuple(files), tuple(excluded)))
            name, files, excluded = "", [], []
        elif not tag and not name:
            name = line.strip()
    return out


def matches(pattern: str, path: str) -> bool:
    """get_maintainer.pl's F:/X: rule for one file: the pattern as a regular
    expression (. literal, * any run of characters, / included, ? one) that
    matches the path's start; a pattern not ending in / must also have as
    many / as the path."""
    rx = re.escape(pattern).replace(r"\*", ".*").replace(r"\?", ".").replace(r"\[", "[").replace(r"\]", "]")
    if not re.match(rx, path):
        return False
    return pattern.endswith("/") or pattern.count("/") == path.count("/")


def programs(run_vmtests: str) -> dict[str, list[str]]:
    """Each program run_vmtests.sh runs, and its categories (in its order)."""
    assigned = dict(re.findall(r"^\s*(\w+)=(\S+)\s*$", run_vmtests, re.M))
    out: dict[str, list[str]] = {}
    for cat, rest in re.findall(r'CATEGORY="([^"]+)"\s+run_test\s+(.*)$', run_vmtests, re.M):
        words = [w for w in rest.split() if w not in ("bash", "sh", "-c") and not w.startswith("-")]
        words = [assigned.get(w[2:-1], w) if w.startswith("${") else w for w in words]
        prog = next((w for w in words if w.startswith("./")), None)
        if prog is None:
            continue
        cats = out.setdefault(prog[2:], [])
        if cat not in cats:
            cats.append(cat)
    return out


def program_of(path: str) -> str:
    """The program a selftest source builds (khugepaged.c: khugepaged; a script is itself)."""
    name = path.rsplit("/", 1)[-1]
    return name[:-2] if name.endswith(".c") else name


@dataclass
class Touched:
    """The selftests a series touches: each program with the categories that
    run it, and why (the section, or the series changing its source)."""
    programs: dict[str, list[str]] = field(default_factory=dict)
    why: dict[str, list[str]] = field(default_factory=dict)

    @property
    def categories(self) -> list[str]:
        return sorted({c for cats in self.programs.values() for c in cats})

    def said(self) -> str:
        if not self.programs:
            return "no mm selftest is named by MAINTAINERS for the files it changes"
        return "; ".join(f"{p} ({', '.join(c)}: {', '.join(self.why[p])})" for p, c in self.programs.items())


def touched(tree: Path, changed: list[str], ref: str = "") -> Touched:
    """The selftests ``changed`` (paths in ``tree``, at commit ``ref`` where
    given) touch. A tree without MAINTAINERS or run_vmtests.sh touches none."""
    try:
        if ref:
            secs = sections(git.out(tree, "show", f"{ref}:MAINTAINERS"))
            runs = programs(git.out(tree, "show", f"{ref}:{RUN_VMTESTS}"))
            sources = git.out(tree, "ls-tree", "--name-only", ref, SELFTESTS).split()
        else:
            secs = sections((tree / "MAINTAINERS").read_text(errors="replace"))
            runs = programs((tree / RUN_VMTESTS).read_text(errors="replace"))
            sources = sorted(str(p.relative_to(tree)) for p in (tree / SELFTESTS).iterdir() if p.is_file())
    except (OSError, InfraError):
        return Touched()
    return touched_by(secs, runs, sources, changed)


def touched_by(secs: list[Area], runs: dict[str, list[str]], sources: list[str],
               changed: list[str]) -> Touched:
    """touched(), given the tree's sections, run_vmtests.sh's programs and
    the selftests folder's files."""
    out = Touched()

    def add(src: str, why: str) -> None:
        prog = program_of(src)
        if prog in runs:
            out.programs.setdefault(prog, list(runs[prog]))
            if why not in out.why.setdefault(prog, []):
                out.why[prog].append(why)

    for path in changed:
        if path.startswith(SELFTESTS):
            add(path, "changed by the series")
        for s in secs:
            if s.covers(path):
                for src in (f for f in sources for p in s.selftests() if matches(p, f)):
                    add(src, s.name)
    out.programs = dict(sorted(out.programs.items()))
    return out

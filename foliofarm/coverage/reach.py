"""What a series changes, as a coverage map can see it: the kernel functions
whose lines it changes, or the reason no function map can say.

Functions are found as the kernel's coding style writes them: a body opens
with "{" alone at the start of a line and closes with "}" alone at the start
of a line; the declarator lines above it belong to it. A changed line (a
removed one on the base's side, an added one on the series' side) that is
blank or a comment changes nothing; one inside a function changes that
function (an added line in a function the base has: the base's function of
that name; in a new function: nothing by itself, its callers change too);
anything else (a global, a macro, a type, an initialiser) is what a function
map cannot see. So is every file that is not C: a header, assembly, Kconfig,
a Makefile."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
IDENT_BEFORE_PAREN = re.compile(r"([A-Za-z_]\w*)\s*\(")
DEFINE_MACRO = re.compile(r"^\s*\w*DEFINE\w*\(\s*([A-Za-z_]\w*)")
SELFTESTS = "tools/testing/selftests/mm/"


@dataclass(frozen=True)
class Function:
    file: str
    name: str
    first: int          # its first declarator line, 1-based
    last: int           # its closing brace's line

    @property
    def lines(self) -> range:
        return range(self.first, self.last + 1)


@dataclass
class Change:
    """A series' change as a map sees it."""
    functions: set[Function] = field(default_factory=set)     # the base's functions it changes
    new_functions: set[str] = field(default_factory=set)      # "file: name" it adds
    unseen: list[str] = field(default_factory=list)           # why a function map cannot see all of it
    selftest_sources: set[str] = field(default_factory=set)   # selftest sources it changes

    @property
    def whole(self) -> bool:
        """Only running everything is safe."""
        return bool(self.unseen)


def functions(file: str, text: str) -> list[Function]:
    """The functions of a C file written in the kernel's style."""
    lines = text.splitlines()
    out: list[Function] = []
    i = 0
    while i < len(lines):
        if lines[i] != "{":
            i += 1
            continue
        first = i
        while first > 0 and _declarator(lines[first - 1]):
            first -= 1
        end = next((j for j in range(i + 1, len(lines)) if lines[j] == "}"), None)
        if end is None or first == i:
            i += 1
            continue
        out.append(Function(file, _name(" ".join(lines[first:i])), first + 1, end + 1))
        i = end + 1
    return out


def _declarator(line: str) -> bool:
    s = line.strip()
    return bool(s) and not s.endswith((";", "}", "*/")) and not s.startswith(("#", "/*", "*", "//"))


def _name(decl: str) -> str:
    if m := DEFINE_MACRO.match(decl):
        return m.group(1)
    found = IDENT_BEFORE_PAREN.findall(decl.split("(", 1)[0] + "(") if "(" in decl else []
    return found[-1] if found else decl.strip()[:40]


def inert(line: str) -> bool:
    """A changed line that changes nothing the kernel runs: blank or a comment."""
    s = line.strip()
    return not s or s.startswith(("/*", "*", "//")) or s.endswith("*/") and "/*" not in s


@dataclass
class FileDiff:
    path: str
    removed: list[tuple[int, str]] = field(default_factory=list)   # base's line numbers
    added: list[tuple[int, str]] = field(default_factory=list)     # series' line numbers
    new_file: bool = False
    deleted: bool = False


def parse_diff(diff: str) -> list[FileDiff]:
    """`git diff` output (any context) read into each file's removed and added lines."""
    out: list[FileDiff] = []
    cur: FileDiff | None = None
    old = new = 0
    for line in diff.splitlines():
        if line.startswith("diff --git "):
            parts = line.split(" b/", 1)
            cur = FileDiff(parts[1] if len(parts) == 2 else line.split()[-1])
            out.append(cur)
        elif cur is None:
            continue
        elif line.startswith("new file mode"):
            cur.new_file = True
        elif line.startswith("deleted file mode"):
            cur.deleted = True
        elif m := HUNK.match(line):
            old, new = int(m.group(1)), int(m.group(3))
        elif line.startswith(("--- ", "+++ ", "index ", "similarity", "rename ", "old mode", "new mode", "Binary")):
            continue
        elif line.startswith("-"):
            cur.removed.append((old, line[1:]))
            old += 1
        elif line.startswith("+"):
            cur.added.append((new, line[1:]))
            new += 1
        elif line.startswith(" "):
            old, new = old + 1, new + 1
    return out


def change(diffs: list[FileDiff], base_text, series_text) -> Change:
    """The change ``diffs`` make: ``base_text(path)`` and ``series_text(path)``
    give a file's text on each side ("" where it is not there)."""
    ch = Change()
    for d in diffs:
        if d.path.startswith(SELFTESTS):
            ch.selftest_sources.add(d.path)
            continue
        if not d.path.endswith(".c"):
            ch.unseen.append(f"{d.path}: not a C file (a header, assembly, Kconfig or a Makefile "
                             "reaches code no function map can name)")
            continue
        old = functions(d.path, base_text(d.path)) if not d.new_file else []
        new = functions(d.path, series_text(d.path)) if not d.deleted else []
        by_name: dict[str, list[Function]] = {}
        for f in old:
            by_name.setdefault(f.name, []).append(f)
        for n, text in d.removed:
            if inert(text):
                continue
            f = _within(old, n)
            if f is None:
                ch.unseen.append(f"{d.path}:{n}: a line outside any function (a global, a macro, a type)")
                break
            ch.functions.add(f)
        for n, text in d.added:
            if inert(text):
                continue
            f = _within(new, n)
            if f is None:
                ch.unseen.append(f"{d.path}:{n} (series' side): a line outside any function "
                                 "(a global, a macro, a type)")
                break
            if f.name in by_name:
                ch.functions.update(by_name[f.name])
            else:
                ch.new_functions.add(f"{d.path}: {f.name}")
    return ch


def _within(funcs: list[Function], line: int) -> Function | None:
    return next((f for f in funcs if f.first <= line <= f.last), None)

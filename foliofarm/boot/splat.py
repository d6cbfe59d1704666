"""Kernel reports in console text and kernel log lines, and the kernel's taint:
pure functions over text and numbers. The patterns are data
(configs/kernels/splats.toml), written from the kernel's own format strings."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from foliofarm.paths import KERNEL_CONFIGS


@dataclass(frozen=True)
class Pattern:
    kind: str
    regex: re.Pattern[str]
    fatal: bool
    hang: bool


@dataclass(frozen=True)
class Splat:
    kind: str
    line: str
    lineno: int
    excerpt: str


@cache
def patterns() -> tuple[Pattern, ...]:
    from foliofarm import datafiles
    rows = datafiles.load(KERNEL_CONFIGS / "splats.toml", datafiles.SplatsFile)["splat"]
    return tuple(Pattern(r["kind"], re.compile(r["regex"]), bool(r.get("fatal")),
                         bool(r.get("hang"))) for r in rows)


@cache
def hang_regex() -> re.Pattern[str]:
    """One regex for every report of a stuck CPU or task."""
    return re.compile("|".join(f"(?:{p.regex.pattern})" for p in patterns() if p.hang))


def kinds() -> list[str]:
    return list(dict.fromkeys(p.kind for p in patterns()))


def classify(line: str) -> str | None:
    """The kind of report ``line`` starts, or None."""
    for p in patterns():
        if p.regex.search(line):
            return p.kind
    return None


# A die() report (BUG or bad access) runs to the Oops line and its registers
# within this many lines; an "oops" or "bug" line inside it is the same report.
REPORT_LINES = 30
DIE = {"bug", "oops"}


def scan(text: str, context: int = 20) -> list[Splat]:
    """Every report in ``text``, with the lines that follow it."""
    lines = re.sub(r"\r+\n", "\n", text).replace("\r", "\n").split("\n")
    out: list[Splat] = []
    skip_until = -1
    die_until = -1
    for i, line in enumerate(lines):
        if i <= skip_until:
            continue
        kind = classify(line)
        if kind is None or (kind in DIE and i <= die_until):
            continue
        end = min(len(lines), i + context)
        out.append(Splat(kind, line.strip(), i + 1, "\n".join(lines[max(0, i - 2):end])))
        # the next lines of one report (a lockdep banner's dashes, a KASAN title)
        # are not reports of their own
        skip_until = i + 2
        if kind in DIE:
            die_until = i + REPORT_LINES
    return out


def is_fatal(splats: list[Splat]) -> bool:
    fatal = {p.kind for p in patterns() if p.fatal}
    return any(s.kind in fatal for s in splats)


# -- taint -------------------------------------------------------------------------

# kernel/panic.c taint_flags[], bit by bit (6.12 ends at 'N'; 7.x adds 'J').
TAINT_LETTERS = "PFSRMBUDAWCIOELKXTNJ"
TAINT_NAMES = ("proprietary module", "forced module load", "CPU out of spec", "forced rmmod",
               "machine check", "bad page", "user request", "kernel died (Oops or BUG)",
               "overridden ACPI table", "WARN", "staging driver", "firmware workaround",
               "out-of-tree module", "unsigned module", "soft lockup", "live patch",
               "auxiliary", "randomized struct layout", "test module", "fwctl")
# Taints the farm itself causes at boot: its own out-of-tree modules.
EXPECTED_TAINT = (1 << 12) | (1 << 13)


def taint_letters(mask: int) -> str:
    """The letters the kernel prints for ``mask`` ('W', 'DL', ...); unknown bits as #N."""
    out = []
    for bit in range(max(mask.bit_length(), len(TAINT_LETTERS))):
        if mask >> bit & 1:
            out.append(TAINT_LETTERS[bit] if bit < len(TAINT_LETTERS) else f"#{bit}")
    return "".join(out)


def describe_taint(mask: int) -> str:
    """'W (WARN), D (kernel died (Oops or BUG))' for the bits of ``mask``."""
    parts = []
    for bit in range(mask.bit_length()):
        if mask >> bit & 1:
            letter = TAINT_LETTERS[bit] if bit < len(TAINT_LETTERS) else f"#{bit}"
            name = TAINT_NAMES[bit] if bit < len(TAINT_NAMES) else "unknown"
            parts.append(f"{letter} ({name})")
    return ", ".join(parts)


def new_taint(before: int, after: int) -> int:
    """Taint bits set by what ran between ``before`` and ``after``, other than the
    farm's own module loads."""
    return after & ~before & ~EXPECTED_TAINT

"""Scanning console output for kernel splats: pure functions over text."""

from __future__ import annotations

import re
from dataclasses import dataclass

# What counts as a splat, and its kind. Order matters: the first match names it.
PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("panic", re.compile(r"Kernel panic - not syncing")),
    ("oops", re.compile(r"Internal error: Oops|\bOops\b[:\s-]")),
    ("bug", re.compile(r"\bBUG: |kernel BUG at")),
    ("warning", re.compile(r"\bWARNING: (?:CPU|at|.*\bPID\b)")),
    ("fault", re.compile(r"Unable to handle kernel ")),
    ("hung-task", re.compile(r"INFO: task \S+ blocked for more than|hung_task: blocked tasks")),
    ("rcu-stall", re.compile(r"rcu: INFO: \S+ detected stalls")),
    ("lockdep", re.compile(r"WARNING: possible (?:circular|recursive) locking")),
)


@dataclass(frozen=True)
class Splat:
    kind: str
    line: str
    lineno: int
    excerpt: str


def scan(text: str, context: int = 20) -> list[Splat]:
    """Every splat in ``text``, with the console lines that follow it."""
    lines = re.sub(r"\r+\n", "\n", text).replace("\r", "\n").split("\n")
    out: list[Splat] = []
    skip_until = -1
    for i, line in enumerate(lines):
        if i <= skip_until:
            continue
        for kind, pat in PATTERNS:
            if pat.search(line):
                end = min(len(lines), i + context)
                out.append(Splat(kind, line.strip(), i + 1,
                                 "\n".join(lines[max(0, i - 2):end])))
                # the lines of one report are not separate splats
                skip_until = i + 2
                break
    return out


def is_fatal(splats: list[Splat]) -> bool:
    return any(s.kind == "panic" for s in splats)

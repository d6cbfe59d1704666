"""The check catalogue (tests/vmtests/checks.toml): each check a row of data
(its guest program, arguments, timeout, kind), and the expectations each is
judged by (tests/vmtests/expectations/CHECK.toml), matched by kernel, page size
and filesystem."""

from __future__ import annotations

import dataclasses
import enum
import fnmatch
import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from foliofarm import datafiles
from foliofarm.errors import UsageError
from foliofarm.paths import VMTESTS


class Kind(enum.StrEnum):
    """What a measurement is (boot/session.py): a dump of the guest program's
    findings, a selftests run's KTAP, the program's own skip, the kernel hung or
    crashed during it, or the farm could not measure."""
    DUMP = "dump"
    KTAP = "ktap"
    SKIP = "skip"
    CRASH = "crash"
    ERROR = "error"


@dataclass(frozen=True)
class Check:
    name: str
    program: str
    args: tuple[str, ...]
    timeout: float
    description: str
    options: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    tree: str | None = None     # the tree's program it runs ("selftests", "thpmaps"), not the farm's own


@cache
def by_name() -> dict[str, Check]:
    table = datafiles.load(VMTESTS / "checks.toml", datafiles.CHECKS_FILE)
    out = {}
    for name, row in table.items():
        row = dict(row)
        out[name] = Check(name=name, program=row.pop("program"), args=tuple(row.pop("args")),
                          timeout=float(row.pop("timeout")),
                          description=row.pop("description", ""), tree=row.pop("tree", None), options=row)
    return out


def select(requested: str | None) -> list[Check]:
    cat = by_name()
    if not requested:
        return list(cat.values())
    names = [n.strip() for n in requested.split(",") if n.strip()]
    bad = [n for n in names if n not in cat]
    if bad:
        raise UsageError(f"unknown check {', '.join(bad)}; valid: {', '.join(cat)}")
    return [cat[n] for n in names]


def is_own(c: Check) -> bool:
    """One of the farm's own checks of the kernel: not the kernel's selftests
    nor the thpmaps cross-check (of the farm's own reading, not of the kernel)."""
    return c.tree is None


def own() -> str:
    """The farm's own checks, as --checks takes them: what the speed targets
    and the mutants measure."""
    return ",".join(n for n, c in by_name().items() if is_own(c))


def with_categories(selected: list[Check], categories: str | None) -> list[Check]:
    """``selected`` with the selftests checks running ``categories`` (their
    run_vmtests.sh -t list, or "all") instead of the catalogue's."""
    if categories is None:
        return selected
    words = categories.split()
    if not words or not all(re.fullmatch(r"[a-z0-9_-]+", w) for w in words):
        raise UsageError(f"--mm-selftests {categories!r}: give run_vmtests.sh categories separated "
                         "by spaces (e.g. \"cow thp\"), or all")
    return [dataclasses.replace(c, options={**c.options, "categories": " ".join(words), "left_out": "-"})
            if c.tree == "selftests" else c for c in selected]


@cache
def expectations(check: str) -> list[dict[str, Any]]:
    path = VMTESTS / "expectations" / f"{check}.toml"
    return datafiles.load(path, datafiles.ExpectationsFile).get("expect", [])


def expectation_for(check: str, kernel_xy: str, page: str, fs: str) -> dict[str, Any] | None:
    """First row matching the kernel's "X.Y", the page size and the filesystem."""
    for row in expectations(check):
        if (fnmatch.fnmatch(kernel_xy, row.get("kernel", "*"))
                and fnmatch.fnmatch(page, row.get("page_size", "*"))
                and fnmatch.fnmatch(fs, row.get("fs", "*"))):
            return row
    return None



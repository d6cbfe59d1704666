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
from foliofarm.errors import ConfigError, UsageError
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
    """A check, as its row in tests/vmtests/checks.toml names it."""
    name: str
    program: str
    args: tuple[str, ...]
    timeout: float
    description: str
    options: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    tree: str | None = None     # the tree's program it runs ("selftests", "thpmaps"), not the farm's own
    metrics: str | None = None  # its figures from its dump: judge/metrics.METRICS[metrics]
    figures: tuple[str, ...] = ()                 # its key figures, base against series
    summary: tuple[tuple[str, str], ...] = ()     # the summary table's column: (figure, "how {}")
    in_text: bool = False       # report.txt shows its folio table whatever moved
    on_request: bool = False    # run only when asked for by name, never by default
    # seconds on one core a first run expects of it, per part ("cell"; a split
    # check's "page" and "race"), until the cache has its times (measure/durations.py)
    estimate: dict[str, float] = field(default_factory=dict, hash=False, compare=False)

    @property
    def mapping(self) -> str:
        """The dump's mapping its figures are of."""
        return str(self.options.get("mapping", "text"))


# What a row says of the check itself; the rest of the row (mapping, setup,
# the selftests' own) stays in its options, where the guest's command line
# finds its placeholders.
OWN_FIELDS = ("program", "args", "timeout", "description", "tree", "metrics", "figures", "summary", "in_text",
              "on_request", "estimate")


@cache
def by_name() -> dict[str, Check]:
    """The catalogue, refused where a row names a metrics function that is
    not there, or a check of the farm's own names none."""
    from foliofarm.judge.metrics import METRICS
    path = VMTESTS / "checks.toml"
    table = datafiles.load(path, datafiles.CHECKS_FILE)
    out = {}
    for name, row in table.items():
        row = dict(row)
        own = {k: row.pop(k) for k in OWN_FIELDS if k in row}
        chk = Check(name=name, program=own["program"], args=tuple(own["args"]), timeout=float(own["timeout"]),
                    description=own.get("description", ""), tree=own.get("tree"), metrics=own.get("metrics"),
                    figures=tuple(own.get("figures", ())), summary=tuple(map(tuple, own.get("summary", ()))),
                    in_text=bool(own.get("in_text", False)), on_request=bool(own.get("on_request", False)),
                    estimate=dict(own.get("estimate", {})), options=row)
        if chk.metrics is not None and chk.metrics not in METRICS:
            raise ConfigError(f"{path}: [{name}] metrics = {chk.metrics!r} is not a function of "
                              f"foliofarm/judge/metrics.py METRICS ({', '.join(sorted(METRICS))})")
        if chk.metrics is None and chk.tree != "selftests":
            raise ConfigError(f"{path}: [{name}] has no metrics: name the function of "
                              "foliofarm/judge/metrics.py METRICS that reads its dump")
        out[name] = chk
    return out


def select(requested: str | None) -> list[Check]:
    cat = by_name()
    if not requested:
        return [c for c in cat.values() if not c.on_request]
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
    return ",".join(n for n, c in by_name().items() if is_own(c) and not c.on_request)


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


def with_reproducer(selected: list[Check], digest: str, args: list[str]) -> list[Check]:
    """``selected`` and the reproducer's check (its row, repro): after its
    driver's arguments, the reproducer's own ``args`` (braces kept as given:
    nothing of the cell is put into them); its content's ``digest`` among its
    options, so that measurements kept of another reproducer are never taken
    for this one's."""
    row = by_name()["repro"]
    own = tuple(a.replace("{", "{{").replace("}", "}}") for a in args)
    chk = dataclasses.replace(row, args=row.args + own, options={**row.options, "reproducer": digest})
    return [c for c in selected if c.name != "repro"] + [chk]


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



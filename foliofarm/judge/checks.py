"""The check catalogue (tests/vmtests/checks.toml), expectations matching and
judging. The guest measures and dumps; this module turns a dump into metrics and
an outcome, using only the expectations in data."""

from __future__ import annotations

import dataclasses
import enum
import fnmatch
import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from foliofarm import datafiles
from foliofarm.judge import selftests, smaps
from foliofarm.judge.metrics import METRICS
from foliofarm.errors import UsageError
from foliofarm.paths import VMTESTS



class Kind(enum.StrEnum):
    """What a measurement is (guest/session.py): a dump of the guest program's
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


@dataclass
class Outcome:
    name: str
    outcome: str
    reason: str = ""
    metrics: dict[str, Any] = field(default_factory=dict)
    subtests: list[dict[str, Any]] = field(default_factory=list)   # a selftests run's tests
    rows: list[dict[str, Any]] = field(default_factory=list)       # a cross-check's rows
    boot_failed: bool = False      # not measured: the kernel died or hung while booting

    def as_dict(self) -> dict[str, Any]:
        d = {"name": self.name, "outcome": self.outcome, "reason": self.reason,
             "metrics": self.metrics}
        if self.subtests:
            d["subtests"] = self.subtests
        if self.rows:
            d["rows"] = self.rows
        if self.boot_failed:
            d["boot_failed"] = True
        return d


def console_outcome(splats: list[str]) -> Outcome:
    """The console check: the reports the boots' consoles logged."""
    if splats:
        return Outcome("console", "fail", f"{len(splats)} report(s): " + " | ".join(splats[:3]),
                       {"splats": len(splats)})
    return Outcome("console", "pass", "", {"splats": 0})


@cache
def catalogue() -> dict[str, Check]:
    table = datafiles.load(VMTESTS / "checks.toml", datafiles.CHECKS_FILE)
    out = {}
    for name, row in table.items():
        row = dict(row)
        out[name] = Check(name=name, program=row.pop("program"), args=tuple(row.pop("args")),
                          timeout=float(row.pop("timeout")),
                          description=row.pop("description", ""), options=row)
    return out


def select(requested: str | None) -> list[Check]:
    cat = catalogue()
    if not requested:
        return list(cat.values())
    names = [n.strip() for n in requested.split(",") if n.strip()]
    bad = [n for n in names if n not in cat]
    if bad:
        raise UsageError(f"unknown check {', '.join(bad)}; valid: {', '.join(cat)}")
    return [cat[n] for n in names]


# Checks run from a tree's own disk (the kernel's selftests, its thpmaps):
# minutes where the farm's own checks take seconds.
TREE_KINDS = ("selftests", "thpmaps")


def is_own(c: Check) -> bool:
    """One of the farm's own checks of the kernel: not the kernel's selftests
    nor the thpmaps cross-check (of the farm's own reading, not of the kernel)."""
    return c.options.get("kind") not in TREE_KINDS


def own() -> str:
    """The farm's own checks, as --checks takes them: what the speed targets
    and the mutants measure."""
    return ",".join(n for n, c in catalogue().items() if is_own(c))


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
            if c.options.get("kind") == "selftests" else c for c in selected]


@cache
def expectations(check: str) -> list[dict[str, Any]]:
    path = VMTESTS / "expectations" / f"{check}.toml"
    return datafiles.load(path, datafiles.ExpectationsFile).get("expect", [])


def expectation_for(check: str, kernel: str, page: str, fs: str) -> dict[str, Any] | None:
    """First row matching the kernel's "X.Y", the page size and the filesystem."""
    for row in expectations(check):
        if (fnmatch.fnmatch(kernel, row.get("kernel", "*"))
                and fnmatch.fnmatch(page, row.get("page_size", "*"))
                and fnmatch.fnmatch(fs, row.get("fs", "*"))):
            return row
    return None


def bounds_failures(metrics: dict[str, Any], row: dict[str, Any]) -> list[str]:
    """Every min_/max_ bound of ``row`` that ``metrics`` breaks, as readable text."""
    failures = []
    for key, bound in row.items():
        for prefix, ok, sign in (("min_", lambda v, b: v >= b, ">="), ("max_", lambda v, b: v <= b, "<=")):
            if key.startswith(prefix):
                metric = key[len(prefix):]
                if metric not in metrics:
                    failures.append(f"{metric} missing (wanted {sign} {bound})")
                elif metrics[metric] is None:    # e.g. readahead never stopped
                    failures.append(f"{metric} none (wanted {sign} {bound})")
                elif not ok(metrics[metric], bound):
                    failures.append(f"{metric} {metrics[metric]} (wanted {sign} {bound})")
    return failures


def judge(check: str, metrics: dict[str, Any], kernel: str, page: str, fs: str) -> Outcome:
    row = expectation_for(check, kernel, page, fs)
    if row is None:
        return Outcome(check, "skip", f"no expectation for {page}/{fs}/{kernel} in "
                       f"expectations/{check}.toml", metrics)
    failures = bounds_failures(metrics, row)
    xfail = row.get("xfail")
    if xfail and fnmatch.fnmatch(kernel, xfail.get("kernel", "*")):
        if failures:
            return Outcome(check, "xfail", f"{xfail['reason']} ({'; '.join(failures)})", metrics)
        return Outcome(check, "xpass", f"expected to fail ({xfail['reason']}) but passed", metrics)
    if failures:
        return Outcome(check, "fail", "; ".join(failures), metrics)
    return Outcome(check, "pass", "", metrics)


# -- metrics from dumps -----------------------------------------------------------

def evaluate(check: Check, dump_text: str, kernel: str, page: str, fs: str) -> Outcome:
    """Dump text -> metrics -> outcome. A dump that cannot be trusted is an error."""
    try:
        dump = smaps.parse_dump(dump_text)
        row = expectation_for(check.name, kernel, page, fs)
        measured = METRICS[check.name](dump, check, row)
        metrics, rows = measured if isinstance(measured, tuple) else (measured, [])
    except (smaps.DumpError, KeyError, StopIteration, ValueError, TypeError, ArithmeticError,
            IndexError) as exc:
        # a damaged dump (a figure that is not a number, a record cut short):
        # an error to measure again, never a verdict
        return Outcome(check.name, "error", f"unusable dump: {type(exc).__name__}: {exc}")
    if metrics.get("probe_mismatches"):
        return Outcome(check.name, "error", f"the probe and pagemap disagree on "
                       f"{metrics['probe_mismatches']} pages: measurement not trusted", metrics)
    if "mapped_pages" in metrics and metrics["mapped_pages"] == 0:
        return Outcome(check.name, "error", "nothing mapped: the guest program touched no page", metrics)
    outcome = judge(check.name, metrics, kernel, page, fs)
    outcome.rows = rows
    return outcome


def evaluate_tests(check: Check, m: dict[str, Any], kernel: str, page: str, fs: str) -> Outcome:
    """A selftests run (kind "ktap", or a crash with what it printed before):
    one subtest per test, known failures xfail, the counts bounded by the
    expectations' rows."""
    parsed = m.get("tests")
    if not isinstance(parsed, dict) or not isinstance(parsed.get("results"), list):
        return Outcome(check.name, "error", "the run's KTAP output was not parsed")
    outcome, reason, metrics, subs = selftests.judge_tests(
        check.name, parsed["results"], kernel, page, fs, bool(parsed.get("complete")))
    if outcome != "pass":
        return Outcome(check.name, outcome, reason, metrics, subs)
    judged = judge(check.name, metrics, kernel, page, fs)
    judged.subtests = subs
    return judged


def kernel_trouble(m: dict[str, Any]) -> str:
    """What the kernel reported while a measurement ran, as one line: new taint
    letters and the reports' first lines; "" when it reported nothing."""
    parts = []
    if m.get("taint"):
        parts.append(f"kernel tainted {m['taint']}")
    parts += m.get("splats", [])[:4]
    return "; ".join(parts)


def judge_measurement(check: Check, m: dict[str, Any], kernel: str, page: str, fs: str) -> Outcome:
    """The host's judgement of one measurement (guest/session.measure). A check
    during which the kernel tainted itself or printed a report fails, whatever
    its figures say, naming the taint and the report; one that hung or crashed
    the kernel fails too. An error of the farm stays an error."""
    kind = Kind(m["kind"])
    if kind == Kind.DUMP:
        outcome = evaluate(check, m["dump"], kernel, page, fs)
    elif kind == Kind.KTAP:
        outcome = evaluate_tests(check, m, kernel, page, fs)
    elif kind == Kind.CRASH:
        outcome = Outcome(check.name, "fail", f"kernel hung or crashed: {m['reason']}")
        if m.get("tests"):      # the tests that finished before it, and the one it ended in
            done = evaluate_tests(check, m, kernel, page, fs)
            outcome.metrics, outcome.subtests = done.metrics, done.subtests
    else:
        outcome = Outcome(check.name, str(kind), m["reason"])     # skip, error
    if m.get("seconds") is not None:
        outcome.metrics["guest_seconds"] = m["seconds"]
    if m.get("transfer_seconds") is not None:
        outcome.metrics["transfer_seconds"] = m["transfer_seconds"]
    trouble = kernel_trouble(m)
    if trouble and outcome.outcome != "error":
        reason = f"{trouble} (while {check.name} ran)"
        if outcome.reason and kind != Kind.CRASH:
            reason += f"; also: {outcome.reason}"
        elif kind == Kind.CRASH:
            # what the crash's own reason quotes already (a boot death's first report) once
            rest = "; ".join(p for p in trouble.split("; ") if p not in outcome.reason)
            reason = outcome.reason + (f"; {rest}" if rest else "")
        outcome = Outcome(check.name, "fail", reason, outcome.metrics, outcome.subtests, outcome.rows)
    outcome.boot_failed = bool(m.get("boot_failed"))
    return outcome

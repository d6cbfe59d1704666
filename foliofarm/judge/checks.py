"""Judging: a measurement (a dump, a selftests run's KTAP, a crash) turned into
metrics (metrics.py) and an outcome, by the expectations in data
(catalogue.py). The guest measures and dumps; the host judges here."""

from __future__ import annotations

import fnmatch
from typing import Any

from foliofarm.judge import selftests, smaps
from foliofarm.judge.catalogue import Check, Kind, expectation_for
from foliofarm.judge.measurement import Measurement
from foliofarm.judge.metrics import METRICS
from foliofarm.matrix import Cell
from foliofarm.results.judged import result
from foliofarm.results.schema import CheckResult
from foliofarm.results.outcome import Outcome


def console_outcome(splats: list[str]) -> CheckResult:
    """The console check: the reports the boots' consoles logged."""
    if splats:
        return result("console", Outcome.FAIL, f"{len(splats)} report(s): " + " | ".join(splats[:3]),
                       {"splats": len(splats)})
    return result("console", Outcome.PASS, "", {"splats": 0})


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


def judge(check: str, metrics: dict[str, Any], kernel_xy: str, page: str, fs: str,
          subtests: Any = (), rows: Any = ()) -> CheckResult:
    """Figures against the expectations' row of the cell: its outcome and why,
    with the figures, and a run's tests or a cross-check's rows beside them."""
    row = expectation_for(check, kernel_xy, page, fs)
    if row is None:
        outcome, reason = Outcome.SKIP, f"no expectation for {page}/{fs}/{kernel_xy} in expectations/{check}.toml"
        return result(check, outcome, reason, metrics, subtests, rows)
    failures = bounds_failures(metrics, row)
    xfail = row.get("xfail")
    if xfail and fnmatch.fnmatch(kernel_xy, xfail.get("kernel", "*")):
        if failures:
            outcome, reason = Outcome.XFAIL, f"{xfail['reason']} ({'; '.join(failures)})"
        else:
            outcome, reason = Outcome.XPASS, f"expected to fail ({xfail['reason']}) but passed"
    elif failures:
        outcome, reason = Outcome.FAIL, "; ".join(failures)
    else:
        outcome, reason = Outcome.PASS, ""
    return result(check, outcome, reason, metrics, subtests, rows)


# -- metrics from dumps -----------------------------------------------------------

def evaluate(check: Check, dump_text: str, cell: Cell, kernel_xy: str) -> CheckResult:
    """Dump text -> metrics -> outcome, on ``cell`` of kernel version
    ``kernel`` ("X.Y"). A dump that cannot be trusted, or one of another page
    size than the cell's, is an error."""
    page, fs = cell.page.name, cell.fs.name
    try:
        dump = smaps.parse_dump(dump_text)
        if dump.page != cell.page:
            return result(check.name, Outcome.ERROR, f"the dump is of a {dump.page.name} page size, the cell "
                          f"{cell.id} of {page}: measurement not trusted")
        row = expectation_for(check.name, kernel_xy, page, fs)
        if check.metrics is None:
            return result(check.name, Outcome.ERROR, f"{check.name} has no metrics function in its row of "
                          "tests/vmtests/checks.toml: its dump cannot be read")
        measured = METRICS[check.metrics](dump, check.mapping, row)
        metrics, rows = measured if isinstance(measured, tuple) else (measured, [])
    except (smaps.DumpError, KeyError, StopIteration, ValueError, TypeError, ArithmeticError,
            IndexError) as exc:
        # a damaged dump (a figure that is not a number, a record cut short):
        # an error to measure again, never a verdict
        return result(check.name, Outcome.ERROR, f"unusable dump: {type(exc).__name__}: {exc}")
    if metrics.get("probe_mismatches"):
        return result(check.name, Outcome.ERROR, f"the probe and pagemap disagree on "
                       f"{metrics['probe_mismatches']} pages: measurement not trusted", metrics)
    if "mapped_pages" in metrics and metrics["mapped_pages"] == 0:
        return result(check.name, Outcome.ERROR, "nothing mapped: the guest program touched no page", metrics)
    return judge(check.name, metrics, kernel_xy, page, fs, rows=rows)


def evaluate_tests(check: Check, m: Measurement, cell: Cell, kernel_xy: str) -> CheckResult:
    """A selftests run (kind "ktap", or a crash with what it printed before)
    on ``cell``: one subtest per test, known failures xfail, the counts
    bounded by the expectations' rows."""
    page, fs = cell.page.name, cell.fs.name
    if m.tests is None:
        return result(check.name, Outcome.ERROR, "the run's KTAP output was not parsed")
    outcome, reason, metrics, subs = selftests.judge_tests(
        check.name, m.tests.results, kernel_xy, page, fs, m.tests.complete)
    if outcome != Outcome.PASS:
        return result(check.name, outcome, reason, metrics, subs)
    return judge(check.name, metrics, kernel_xy, page, fs, subtests=subs)


def kernel_trouble(m: Measurement) -> str:
    """What the kernel reported while a measurement ran, as one line: new taint
    letters and the reports' first lines; "" when it reported nothing."""
    parts = []
    if m.taint:
        parts.append(f"kernel tainted {m.taint}")
    parts += m.splats[:4]
    return "; ".join(parts)


def judge_measurement(check: Check, m: Measurement, cell: Cell, kernel_xy: str) -> CheckResult:
    """The host's judgement of one measurement of ``cell`` (boot/session.py,
    a booter of boot/protocol.py), by the expectations of kernel version
    ``kernel`` ("X.Y"). A check
    during which the kernel tainted itself or printed a report fails, whatever
    its figures say, naming the taint and the report; one that hung or crashed
    the kernel fails too. An error of the farm stays an error."""
    kind = m.kind
    if kind == Kind.DUMP:
        outcome = evaluate(check, m.dump or "", cell, kernel_xy)
    elif kind == Kind.KTAP:
        outcome = evaluate_tests(check, m, cell, kernel_xy)
    elif kind == Kind.CRASH:
        outcome = result(check.name, Outcome.FAIL, f"kernel hung or crashed: {m.reason}")
        if m.tests is not None:      # the tests that finished before it, and the one it ended in
            done = evaluate_tests(check, m, cell, kernel_xy)
            outcome.metrics, outcome.subtests = done.metrics, done.subtests
    else:
        outcome = result(check.name, Outcome(kind.value), m.reason)     # skip, error
    if m.seconds is not None:
        outcome.metrics["guest_seconds"] = m.seconds
    if m.transfer_seconds is not None:
        outcome.metrics["transfer_seconds"] = m.transfer_seconds
    trouble = kernel_trouble(m)
    if trouble and outcome.outcome != Outcome.ERROR:
        reason = f"{trouble} (while {check.name} ran)"
        if outcome.reason and kind != Kind.CRASH:
            reason += f"; also: {outcome.reason}"
        elif kind == Kind.CRASH:
            # what the crash's own reason quotes already (a boot death's first report) once
            rest = "; ".join(p for p in trouble.split("; ") if p not in outcome.reason)
            reason = outcome.reason + (f"; {rest}" if rest else "")
        outcome = result(check.name, Outcome.FAIL, reason, outcome.metrics, outcome.subtests, outcome.rows)
    outcome.boot_failed = m.boot_failed
    return outcome

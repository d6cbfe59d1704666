"""Judging a run of the kernel's selftests: the measurement's "tests" (the KTAP
the guest printed, parsed on the host by judge/ktap.py) become one subtest
outcome each, with the known failures of tests/vmtests/expectations/<check>.toml
("known" rows, per kernel version, page size, filesystem and test, with the
reason) turning a failure that is understood into xfail.

A test fails as a whole (its exit code) while its own KTAP says which of its
results failed: it is a known failure only where every failed inner result is
covered by a known row (or a row covers the whole test), so a new failure
inside a test that already fails for a known reason is still a failure."""

from __future__ import annotations

import fnmatch
from functools import cache
from typing import Any

from foliofarm import datafiles
from foliofarm.paths import VMTESTS
from foliofarm.judge.measurement import TestResult
from foliofarm.results.outcome import Outcome, Status
from foliofarm.results.schema import Subtest

# Inner results listed by name per subtest (the counts cover the rest).
MAX_NAMED = 40


def missing_result(name: str) -> bool:
    """A placeholder for a result the test never printed (judge/ktap.py)."""
    return name.startswith("(no result #")


@cache
def known_failures(check: str) -> tuple[dict[str, Any], ...]:
    path = VMTESTS / "expectations" / f"{check}.toml"
    return tuple(datafiles.load(path, datafiles.ExpectationsFile).get("known", []))


def _matches(row: dict[str, Any], kernel_xy: str, page: str, fs: str, test: str) -> bool:
    return (fnmatch.fnmatch(kernel_xy, row.get("kernel", "*"))
            and fnmatch.fnmatch(page, row.get("page_size", "*"))
            and fnmatch.fnmatch(fs, row.get("fs", "*"))
            and fnmatch.fnmatch(test, row["test"]))


def subtest(check: str, t: TestResult, kernel_xy: str, page: str, fs: str) -> Subtest:
    """One test's outcome from its result ``t`` as the guest printed it."""
    rows = [r for r in known_failures(check) if _matches(r, kernel_xy, page, fs, t.name)
            and fnmatch.fnmatch(t.reason or "", r.get("bails", "*"))]
    inner = t.inner
    failed = [i.name for i in inner if i.status in (Status.FAIL, Status.CRASH)]
    counts = {s: sum(1 for i in inner if i.status == s)
              for s in (Status.PASS, Status.FAIL, Status.SKIP, Status.XFAIL)}
    counts[Status.FAIL] += sum(1 for i in inner if i.status == Status.CRASH)
    out: dict[str, Any] = {"name": t.name, "outcome": "", "reason": t.reason}
    if inner:
        out["inner"] = counts
    if t.seconds is not None:
        out["seconds"] = t.seconds
    if failed:
        out["failed"] = failed[:MAX_NAMED]
    # results that fail in some clean boots only (a flaky row of their own):
    # never news, even inside a test that fails for a known reason as a whole
    flaky_failed = [n for n in failed if any(r.get("flaky") and r.get("inner")
                                             and fnmatch.fnmatch(n, r["inner"]) for r in rows)]
    if flaky_failed:
        out["flaky_failed"] = flaky_failed[:MAX_NAMED]
    whole = next((r for r in rows if not r.get("inner")), None)
    if t.status == Status.SKIP:
        out["outcome"] = Outcome.SKIP
        out["reason"] = out["reason"] or "skipped (no reason given)"
    elif t.status == Status.PASS:
        # a known failure of the whole test that passes now: xpass (a flaky one: pass)
        out["outcome"] = Outcome.XPASS if whole and not whole.get("flaky") else Outcome.PASS
        if out["outcome"] == Outcome.XPASS:
            out["reason"] = f"known to fail ({whole['reason']}) but passed"
    else:
        by_inner = [r for r in rows if r.get("inner")]
        unknown = [n for n in failed if not any(fnmatch.fnmatch(n, r["inner"]) for r in by_inner)]
        if t.status == Status.CRASH:
            out["outcome"] = Outcome.FAIL
            out["reason"] = t.reason or "no result"
        elif whole or (failed and not unknown):
            why = whole["reason"] if whole else "; ".join(
                dict.fromkeys(r["reason"] for r in by_inner
                              if any(fnmatch.fnmatch(n, r["inner"]) for n in failed)))
            used = [whole] if whole else [r for r in by_inner
                                          if any(fnmatch.fnmatch(n, r["inner"]) for n in failed)]
            out["outcome"] = Outcome.XFAIL
            if all(r.get("flaky") for r in used):
                out["flaky"] = True
            out["reason"] = (f"known{' flaky' if out.get('flaky') else ''}: {why}"
                             + (f" ({t.reason})" if t.reason else ""))
        else:
            out["outcome"] = Outcome.FAIL
            named = unknown[:3]
            more = f" and {len(unknown) - 3} more" if len(unknown) > 3 else ""
            out["reason"] = (t.reason or "failed") + (
                f": {', '.join(named)}{more}" if named else "")
    return Subtest.model_validate(out)


def judge_tests(check: str, tests: list[TestResult], kernel_xy: str, page: str, fs: str,
                complete: bool) -> tuple[Outcome, str, dict[str, Any], list[Subtest]]:
    """The check's outcome, reason, metrics (counts per outcome) and subtests."""
    subs = [subtest(check, TestResult.model_validate(t), kernel_xy, page, fs) for t in tests]
    metrics: dict[str, Any] = {"tests": len(subs)}
    for o in (Outcome.PASS, Outcome.FAIL, Outcome.XFAIL, Outcome.XPASS, Outcome.SKIP):
        metrics[o] = sum(1 for s in subs if s.outcome == o)
    # a flaky test counts as passing whichever way it went: its runs compare
    metrics[Outcome.PASS] += sum(1 for s in subs if s.flaky)
    metrics[Outcome.XFAIL] -= sum(1 for s in subs if s.flaky)
    # the tests' own results, but for those inside a known or flaky failure:
    # where such a test bails out varies from boot to boot, and is no news
    steady = [s for s in subs if s.outcome in (Outcome.PASS, Outcome.FAIL) and not s.flaky]
    metrics["inner_pass"] = sum(s.inner.get(Status.PASS, 0) for s in steady)
    metrics["inner_fail"] = sum(s.inner.get(Status.FAIL, 0) for s in steady)
    failing = [s.name for s in subs if s.outcome == Outcome.FAIL]
    if failing:
        more = f" and {len(failing) - 5} more" if len(failing) > 5 else ""
        return Outcome.FAIL, f"{len(failing)} failed: {', '.join(failing[:5])}{more}", metrics, subs
    if not complete:
        return Outcome.ERROR, "the run printed no plan: it did not finish", metrics, subs
    if not subs:
        return Outcome.ERROR, "no test ran (no KTAP results)", metrics, subs
    return Outcome.PASS, "", metrics, subs

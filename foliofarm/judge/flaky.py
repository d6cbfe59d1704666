"""Flakiness learnt by measurement. Every boot of one kernel adds each of its
results to that kernel's history (measure/history.py): a farm check's
outcome, each test of the kernel's selftests and each of a test's own
results. A result that one kernel passed in some boots and failed in others
is flaky, with its counts: its failure is the moment's, not the kernel's.

Judged with what is known (this run's boots, the kernel's history), a failure
of a flaky result is the outcome ``flaky``: shown with its counts, never a
failure of the run. A test is flaky only where every one of its own results
that failed is flaky (or, failing with none of them named, the test is): a
new failure inside a flaky test still fails it.

A series is judged against its base's history (``needed_boots``): a result the
base fails at rate p (failed f of n boots) is a regression only when the
series fails it in k boots in a row where a kernel that behaves as the base
does would do that with a chance p**k below ``CHANCE`` (5%). One failure of a
result the base fails one time in three is no news; failing it five times in
five is. A result the base never failed is a regression on two failures, as
before (measure/confirm.py)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from foliofarm.judge.measurement import Measurement
from foliofarm.judge.selftests import MAX_NAMED, missing_result as _missing
from foliofarm.results.judged import result
from foliofarm.results.schema import CheckResult, Subtest
from foliofarm.results.outcome import Outcome, Status

PASSED = {Outcome.PASS, Outcome.XPASS}
FAILED = {Outcome.FAIL, Outcome.XFAIL}
# a test's status as the guest printed it (judge/ktap.py): a kselftest XFAIL
# is the test's own expected failure, neither
RAW = {Status.PASS: True, Status.FAIL: False, Status.CRASH: False}
# the chance, for a series run, that a kernel failing as often as the base
# would fail a result in every one of the series' boots, below which it is the series'
CHANCE = 0.05
# the most boots of the series side one flaky result is worth (the first and the confirm boots)
MAX_SERIES_BOOTS = 5
# the base's boots below which its rate of a result is a guess: the base is
# booted again beside the series' confirm boots
MIN_BASE_BOOTS = 6
SEP = ": "


def results_of(check: str, o: CheckResult, m: Measurement | None) -> dict[str, bool]:
    """One boot's results of one check: name -> passed. A farm check is one
    result (its judged outcome); a selftests run is each of its tests and
    each test's own results as the guest printed them (skips and results
    never printed are no result)."""
    tests = m.tests.results if m is not None and m.tests is not None else None
    out: dict[str, bool] = {}
    if tests is not None and o.subtests:
        for t in tests:
            key = f"{check}{SEP}{t.name}"
            if t.status in RAW:
                out[key] = RAW[t.status]
            for i in t.inner:
                if i.status in RAW and not _missing(i.name):
                    out[f"{key}{SEP}{i.name}"] = RAW[i.status]
        return out
    if o.outcome in PASSED | FAILED:
        out[check] = o.outcome in PASSED
    return out


@dataclass
class Count:
    passed: int = 0
    failed: int = 0

    @property
    def boots(self) -> int:
        return self.passed + self.failed

    @property
    def flaky(self) -> bool:
        return bool(self.passed and self.failed)

    def text(self) -> str:
        return f"failed {self.failed} of {self.boots} boots"


def tally(boots: list[dict[str, bool]]) -> dict[str, Count]:
    """Each result's count of passing and failing boots."""
    out: dict[str, Count] = {}
    for boot in boots:
        for name, ok in boot.items():
            c = out.setdefault(name, Count())
            if ok:
                c.passed += 1
            else:
                c.failed += 1
    return out


def flaky_of(counts: dict[str, Count]) -> dict[str, Count]:
    return {k: c for k, c in counts.items() if c.flaky}


def _test_is_flaky(key: str, sub: Subtest, flaky: dict[str, Count]) -> Count | None:
    """The count that makes a failing test flaky, or None: every result of it
    that failed is flaky (a list cut at its limit cannot tell), or where it
    failed with no result of its own named, the test itself is."""
    failed = [f for f in sub.failed if not _missing(f)]
    if failed and len(sub.failed) < MAX_NAMED:
        counts = [flaky.get(f"{key}{SEP}{f}") for f in failed]
        if all(counts):
            return max(counts, key=lambda c: c.failed / c.boots)
        return None
    return flaky.get(key) if not failed else None


def apply(o: CheckResult, flaky: dict[str, Count], where: str) -> CheckResult:
    """``o`` (a judged outcome) with each failure of a result that ``flaky``
    holds made ``flaky``, its counts and ``where`` they were measured in its
    reason. A check all of whose failures are flaky is flaky; one with a
    failure that is not keeps failing, for that one."""
    if o.outcome != Outcome.FAIL or not flaky:
        return o
    if not o.subtests:
        c = flaky.get(o.name)
        if c is None:
            return o
        return result(o.name, Outcome.FLAKY, f"flaky by measurement ({c.text()}, {where}): {o.reason}",
                       o.metrics, o.subtests, o.rows, o.boot_failed)
    subs, named = [], []
    for s in o.subtests:
        c = _test_is_flaky(f"{o.name}{SEP}{s.name}", s, flaky) if s.outcome == Outcome.FAIL else None
        if c is not None:
            s = s.model_copy(update={"outcome": Outcome.FLAKY, "flaky": True,
                                     "reason": f"flaky by measurement ({c.text()}, {where}): {s.reason}"})
            named.append(f"{s.name} ({c.text()})")
        subs.append(s)
    if not named:
        return o
    metrics = dict(o.metrics)
    if isinstance(metrics.get(Outcome.FAIL), int):     # counted as passing, as a flaky known row is
        metrics[Outcome.FAIL] -= len(named)
        metrics[Outcome.PASS] = metrics.get(Outcome.PASS, 0) + len(named)
    failing = [s.name for s in subs if s.outcome == Outcome.FAIL]
    said = f"{len(named)} flaky: {', '.join(named[:5])}"
    if failing:
        more = f" and {len(failing) - 5} more" if len(failing) > 5 else ""
        return result(o.name, Outcome.FAIL, f"{len(failing)} failed: {', '.join(failing[:5])}{more}; {said}",
                       metrics, subs, o.rows, o.boot_failed)
    return result(o.name, Outcome.FLAKY, said, metrics, subs, o.rows, o.boot_failed)


def needed_boots(c: Count) -> int | None:
    """How many boots in a row a series must fail a result the base fails at
    c's rate before it is the series' (p**k < CHANCE); None where more than
    MAX_SERIES_BOOTS would be needed (the base fails it too often to tell)."""
    if not c.failed:
        return 2
    if not c.passed:
        return None
    p = c.failed / c.boots
    k = max(2, math.floor(math.log(CHANCE) / math.log(p)) + 1)
    return k if k <= MAX_SERIES_BOOTS else None


def listed(doc_flaky: list[Any], kernel: str, page: str, fs: str, check: str) -> dict[str, Count]:
    """The flaky results a results document lists (results.json "flaky", as
    its models) for ``kernel`` on the cell ``page``-``fs`` and ``check``, as counts."""
    return {f.result: Count(f.passed, f.failed) for f in doc_flaky
            if (f.kernel, f.page_size, f.fs, f.check) == (kernel, page, fs, check)}


def failed_keys(r: Any) -> set[str]:
    """The results a judged check (a CheckResult) failed, named as results_of
    names them: a test by its own failed results where it named any."""
    if r is None:
        return set()
    subs = list(r.subtests or [])
    if not subs:
        return {r.name} if r.outcome in FAILED else set()
    out = set()
    for s in subs:
        if s.outcome != Outcome.FAIL:
            continue
        named = [f for f in s.failed if not _missing(f)]
        out |= {f"{r.name}{SEP}{s.name}{SEP}{f}" for f in named} or {f"{r.name}{SEP}{s.name}"}
    return out

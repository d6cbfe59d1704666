"""The farm's two vocabularies, the one place their words are spelt.

An *outcome* is what one check (or one test of a selftests check) did on one
cell of one kernel, as the judge gives it and results.json keeps it. A
*verdict* is what a series did to it: the base's outcome against the series'
(judge/compare.py). Both are ``str`` enums: a member is its word, equal to the
string a document read back holds, so a document written before them reads the
same, and JSON carries the word."""

from __future__ import annotations

import enum


class Outcome(enum.StrEnum):
    PASS = "pass"
    FAIL = "fail"
    XFAIL = "xfail"       # failed, as an expectation's row says it does (with its reason)
    XPASS = "xpass"       # passed where a row expected it to fail: the row is stale
    SKIP = "skip"         # not measured here by design (no expectation, a test that skips)
    ERROR = "error"       # the farm could not measure it: never a verdict on the kernel
    FLAKY = "flaky"       # failed in some boots of the kernel, passed in others (judge/flaky.py)


class Verdict(enum.StrEnum):
    """A base/series row's verdict; a side's outcome where both sides agree
    on a result that is not a pass (fail, xfail, xpass, skip, error)."""
    PASS = "pass"
    CHANGED = "changed"            # a figure moved beyond the base's noise, not the wrong way
    REGRESSION = "regression"      # the series broke what the base passed (or a figure went wrong)
    FLAKY = "flaky"                # a regression that did not hold when booted again
    FIXED = "fixed"                # the series passes what the base failed
    FAIL = "fail"
    XFAIL = "xfail"
    XPASS = "xpass"
    SKIP = "skip"
    NOT_REACHED = "not-reached"    # a selftest the series cannot reach (coverage/select.py): not run, the base's result stands
    ERROR = "error"
    INCOMPLETE = "incomplete"      # a side measured nothing of it (a cell that never booted)
    BUILD_BROKEN = "build-broken"  # the series' kernel did not build


OUTCOMES = tuple(Outcome)
VERDICTS = tuple(Verdict)
# what a row's verdict says of a series that needs a reader's eye
NEWS = (Verdict.BUILD_BROKEN, Verdict.REGRESSION, Verdict.CHANGED)


class Status(enum.StrEnum):
    """A test's result as the guest printed it and the KTAP parser read it
    (judge/ktap.py), before any judging: a kselftest's own expected failure
    is XFAIL, a test with no result line (the kernel or the driver cut it
    short) CRASH."""
    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"
    XFAIL = "xfail"
    CRASH = "crash"

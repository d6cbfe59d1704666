"""Base against series (or one kernel against another): a verdict per cell and
check, with the figures of both sides and their deltas. Pure functions over the
results document, so a recorded results.json can be judged again on any host."""

from __future__ import annotations

import fnmatch
from typing import Any, Iterable

from foliofarm.results import schema
from foliofarm.results.schema import CheckResult, FigurePair, Role, Subtest, VerdictRow
from foliofarm.judge import catalogue
from foliofarm.judge import figures as figs, printed
from foliofarm.judge.ktap import NOT_REACHED
from foliofarm.judge.selftests import MAX_NAMED, missing_result as _missing
from foliofarm.results.outcome import Outcome, Status, Verdict

GOOD = {Outcome.PASS, Outcome.XPASS}
BAD = {Outcome.FAIL, Outcome.XFAIL}
# What a verdict means for the exit status: these fail a pre-submit run.
FAILING_VERDICTS = {Verdict.REGRESSION, Verdict.BUILD_BROKEN}

# the console check's key figure (the console is no row of the catalogue)
CONSOLE_FIGURES = ("splats",)


def key_figures(check: str, present: Iterable[str] = ()) -> tuple[str, ...]:
    """The figures of ``check`` shown base against series: its row's
    ``figures`` (tests/vmtests/checks.toml); none for a check the catalogue
    no longer has. A pattern among them (``"*"``: a reproducer's, whose
    figures are whatever it printed) stands for each behaviour figure of
    ``present`` it matches (judge/figures.py kind_of), in their order."""
    if check == "console":
        return CONSOLE_FIGURES
    row = catalogue.by_name().get(check)
    out: list[str] = []
    for key in row.figures if row else ():
        if not figs.is_pattern(key):
            out.append(key)
            continue
        out += [k for k in present if fnmatch.fnmatchcase(k, key)
                and figs.kind_of(check, k) == "behaviour"]
    return tuple(dict.fromkeys(out))


def verdict(base: str | None, new: str | None) -> str:
    """pass / fail / regression / fixed from the two outcomes, plus xfail (a known
    failure on both), skip, error (either side could not measure), incomplete
    (a side is missing) and flaky (a side both passed and failed it).
    Figures refine it further: see verdicts()."""
    if base is None or new is None:
        return Verdict.INCOMPLETE
    if Outcome.ERROR in (base, new):
        return Verdict.ERROR
    if Outcome.SKIP in (base, new):
        return Verdict.SKIP
    if base == Outcome.FLAKY:
        # the base passes and fails it (judge/flaky.py): the series passing it
        # is no news; failing it is a regression to confirm, weighed against
        # how often the base fails it (measure/confirm.py)
        # (a known failure on the series side is no news either)
        return Verdict.PASS if new in GOOD else Verdict.REGRESSION if new == Outcome.FAIL else Verdict.FLAKY
    if new == Outcome.FLAKY:
        return Verdict.FLAKY
    if base in GOOD and new in GOOD:
        return Verdict.PASS
    if base in GOOD and new in BAD:
        return Verdict.REGRESSION
    if base in BAD and new in GOOD:
        return Verdict.FIXED
    return Verdict.XFAIL if base == new == Outcome.XFAIL else Verdict.FAIL


def _delta(a: Any, b: Any) -> Any:
    if isinstance(a, bool) or isinstance(b, bool):
        return None
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        d = b - a
        return round(d, 2) if isinstance(d, float) else d
    return None


def figures(check: str, base: CheckResult | None, new: CheckResult | None) -> list[FigurePair]:
    """The check's key figures base against series (key_figures), with their deltas."""
    bm = base.metrics if base else {}
    nm = new.metrics if new else {}
    out = []
    for key in key_figures(check, [*printed.numbers(bm), *printed.numbers(nm)]):
        if key in bm or key in nm:
            a, b = bm.get(key), nm.get(key)
            out.append(FigurePair(metric=key, base=a, series=b, delta=_delta(a, b)))
    return out


def broken_pages(doc: schema.Results, side: Role) -> set[str]:
    """Page sizes whose kernel on ``side`` did not build."""
    return {k.page_size for k in doc.kernels if k.side == side and k.build_failed}


def verdicts(doc: schema.Results) -> list[VerdictRow]:
    """One row per (page size, filesystem, check) of a two-sided results document."""
    if doc.sides is None:
        return []
    base_k, new_k = doc.sides.base.kernel, doc.sides.series.kernel
    cells: dict[tuple[str, str, str, str], CheckResult] = {}
    order: list[tuple[str, str]] = []
    died: set[tuple[str, str, str]] = set()      # (kernel, page, fs) whose boot died
    names: list[str] = []
    for cell in doc.cells:
        key = (cell.page_size, cell.fs)
        if key not in order:
            order.append(key)
        for c in cell.checks:
            cells[(cell.kernel, *key, c.name)] = c
            if c.boot_failed:
                died.add((cell.kernel, *key))
            if c.name not in names:
                names.append(c.name)
    broken = broken_pages(doc, Role.SERIES)
    noise = doc.noise
    rows: list[VerdictRow] = []
    for page, fs in order:
        for name in names:
            b = cells.get((base_k, page, fs, name))
            n = cells.get((new_k, page, fs, name))
            both_died = (base_k, page, fs) in died and (new_k, page, fs) in died
            row, subs = _row(page, fs, name, b, n, page in broken, both_died,
                             noise.get(f"{page}-{fs}", {}).get(name),
                             # Between two kernel versions (--compare) a figure that
                             # moved is news, not a regression: the newer kernel is
                             # meant to behave differently. Against its own base, a
                             # series that moves a figure the wrong way regressed.
                             judge_direction=doc.series is not None)
            rows += [row, *subs]
    return rows


def standing(b: CheckResult | None, n: CheckResult | None) -> CheckResult | None:
    """The series' selftests result with each test it did not reach (left
    out by the base's coverage map) counted as the base's: its outcome in the
    counts, its results in the inner counts, a failure of it failing the run
    as on the base. Compared so, a test not run is neither fixed nor lost."""
    if b is None or n is None:
        return n
    base = {t.name: t for t in b.subtests}
    left = [base[t.name] for t in n.subtests
            if t.outcome == Outcome.SKIP and t.reason.startswith(NOT_REACHED) and t.name in base]
    if not left:
        return n
    m = dict(n.metrics)
    for t in left:
        if isinstance(m.get(Outcome.SKIP), int):
            m[Outcome.SKIP] -= 1
        key = Outcome.PASS if t.flaky else t.outcome
        if isinstance(m.get(key), int):
            m[key] += 1
        if t.outcome in (Outcome.PASS, Outcome.FAIL) and not t.flaky:
            for k, s in (("inner_pass", Status.PASS), ("inner_fail", Status.FAIL)):
                if isinstance(m.get(k), int):
                    m[k] += t.inner.get(s, 0)
    failing = [t.name for t in left if t.outcome == Outcome.FAIL]
    if failing and n.outcome == Outcome.PASS:
        return n.model_copy(update={"metrics": m, "outcome": Outcome.FAIL, "reason": (
            f"{len(failing)} failed on the base, not reached: {', '.join(failing[:5])}")})
    return n.model_copy(update={"metrics": m})


def _row(page: str, fs: str, name: str, b: CheckResult | None, n: CheckResult | None,
         broken: bool, both_died: bool, noise: dict[str, float] | None, judge_direction: bool
         ) -> tuple[VerdictRow, list[VerdictRow]]:
    """One check's verdict on one cell, and its tests' rows."""
    n = standing(b, n)
    v = Verdict.BUILD_BROKEN if broken else verdict(b.outcome if b else None, n.outcome if n else None)
    if both_died and v != Verdict.BUILD_BROKEN:
        # neither kernel booted: nothing to judge the series by, and
        # nothing the series can be blamed for
        v = Verdict.ERROR
    moved: list[dict[str, Any]] = []
    # a side whose kernel died booting measured nothing: its check's
    # reason says so, no figure or test of it is compared
    died_here = bool((b and b.boot_failed) or (n and n.boot_failed))
    judged_both = (Verdict.PASS, Verdict.FAIL, Verdict.XFAIL, Verdict.FIXED, Verdict.REGRESSION)
    if b and n and v in judged_both and not died_here:
        moved = figs.compare(name, b.metrics, n.metrics, noise)
    if not judge_direction:
        for f in moved:
            f["regression"] = False
    if v in (Verdict.PASS, Verdict.FAIL, Verdict.XFAIL) and any(f["regression"] for f in moved):
        v = Verdict.REGRESSION      # a figure moved the wrong way beyond its tolerance
    elif v == Verdict.PASS and moved:
        v = Verdict.CHANGED         # a figure moved beyond the base's noise
    subs = subtest_rows(page, fs, name, b, n, noise) if not broken and not died_here else []
    if v in (Verdict.PASS, Verdict.FAIL, Verdict.XFAIL, Verdict.CHANGED, Verdict.FIXED) and \
            any(r.verdict == Verdict.REGRESSION for r in subs):
        v = Verdict.REGRESSION      # a test of the run regressed
    elif v in (Verdict.PASS, Verdict.FAIL, Verdict.XFAIL) and any(r.verdict == Verdict.FIXED for r in subs):
        v = Verdict.FIXED
    elif v == Verdict.PASS and any(r.verdict == Verdict.CHANGED for r in subs):
        v = Verdict.CHANGED         # a test reported a different number of results
    if n is not None and n.confirmed is False and v == Verdict.REGRESSION:
        # booted again on both sides, it was no regression there (measure/confirm.py)
        v = Verdict.FLAKY
        for r in subs:
            if r.verdict == Verdict.REGRESSION:
                r.verdict = Verdict.FLAKY
    row = {"page_size": page, "fs": fs, "check": name, "verdict": v,
           "base": b.outcome if b else None, "series": n.outcome if n else None,
           "base_reason": b.reason if b else "",
           "series_reason": ("both kernels died while booting; " if both_died else "")
           + (n.reason if n else "") + (f" [{n.again}]" if n is not None and n.again else ""),
           "figures": figures(name, b, n), "changed": moved}
    return VerdictRow.model_validate(row), subs


def pair_verdict(page: str, fs: str, name: str, b: CheckResult | None, n: CheckResult | None
                 ) -> Verdict:
    """The verdict of one check on one cell between two results (boots made
    again: measure/confirm.py), judged as a run's rows are, noise aside."""
    return _row(page, fs, name, b, n, False, False, None, judge_direction=True)[0].verdict


def results_of(t: Subtest | None) -> int | None:
    """How many of its own results a test reported (its plan, where a bail-out
    or a crash left some without a line): the stable part of its count."""
    return sum(t.inner.values()) if t is not None and t.inner else None


def test_counts(subtests: list[Subtest]) -> dict[str, int]:
    """Per test of a selftests run, the figure its noise is measured on
    (measure.record_noise), keyed as subtest_rows reads it."""
    return {f"results:{t.name}": n for t in subtests if (n := results_of(t)) is not None}


def subtest_rows(page: str, fs: str, check: str, b: CheckResult | None,
                 n: CheckResult | None, noise_of: dict[str, float] | None = None
                 ) -> list[VerdictRow]:
    """Per test of a selftests run on both sides, judged by what is stable in it:
    - its outcome (pass, fail, the known failure, skip) base against series; a
      flaky test passing on one side and failing the known way on the other is
      no news, nor is a known failure that passed on one side (xpass);
    - each of its own results that newly fails on the series side: a regression
      where the test fails on both sides (a new failure inside a failing test).
      Inside a known failure, results the test never reached (after a bail-out
      whose point varies from boot to boot) are not judged, only results that
      failed with a line of their own;
    - how many results it reported (its plan): "changed" where that moved
      beyond its noise, in a test that is neither known nor flaky.
    Not judged, only shown: how many of its results passed. The split between
    passing and skipped results follows what the guest could allocate at that
    moment (a THP, a hugetlb page) and moves between clean boots of the same
    kernel (cow: 662 to 664 of 664 on 4K). Rows are named "check: test"."""
    bs = {t.name: t for t in (b.subtests if b else [])}
    ns = {t.name: t for t in (n.subtests if n else [])}
    return [_subtest_row(page, fs, check, name, bs.get(name), ns.get(name), noise_of or {})
            for name in [*bs, *(t for t in ns if t not in bs)]]


def _subtest_row(page: str, fs: str, check: str, name: str, bt: Subtest | None,
                 nt: Subtest | None, noise_of: dict[str, float]) -> VerdictRow:
    v, new_failures = _subtest_verdict(bt, nt)
    bi, ni = bt.inner if bt else {}, nt.inner if nt else {}
    outcomes = {bt.outcome if bt else None, nt.outcome if nt else None}
    known = bool(outcomes & {Outcome.XFAIL, Outcome.XPASS})
    flaky = bool((bt and bt.flaky) or (nt and nt.flaky))
    changed: list[dict[str, Any]] = []
    rb, rn = results_of(bt), results_of(nt)
    noise = noise_of.get(f"results:{name}", 0.0)
    if (rb is not None and rn is not None and rb != rn and not known and not flaky
            and abs(rn - rb) > noise):
        changed.append({"metric": "results", "base": rb, "series": rn, "delta": rn - rb,
                        "noise": None if noise == float("inf") else noise, "regression": False})
        if v == Verdict.PASS:
            v = Verdict.CHANGED
    figures = []
    if bi or ni:
        figures = [{"metric": "results", "base": rb, "series": rn, "delta": _delta(rb, rn)},
                   {"metric": "inner_pass", "base": bi.get("pass"), "series": ni.get("pass"),
                    "delta": _delta(bi.get("pass"), ni.get("pass"))}]
    return VerdictRow.model_validate({"page_size": page, "fs": fs, "check": f"{check}: {name}", "verdict": v,
            "subtest_of": check,
            "base": bt.outcome if bt else None, "series": nt.outcome if nt else None,
            "base_reason": bt.reason if bt else "",
            "series_reason": ((nt.reason if nt else "")
                              + (f"; newly failing: {', '.join(new_failures[:5])}"
                                 if new_failures else "")).lstrip("; "),
            "figures": figures, "changed": changed})


def _subtest_verdict(bt: Subtest | None, nt: Subtest | None) -> tuple[str, list[str]]:
    """A test's verdict from its outcomes and its own failing results, and the
    results newly failing on the series side."""
    # a test one side never reached (its run ended early) is incomplete there
    v = verdict(bt.outcome if bt else None, nt.outcome if nt else None)
    outcomes = {bt.outcome if bt else None, nt.outcome if nt else None}
    known = bool(outcomes & {Outcome.XFAIL, Outcome.XPASS})
    flaky = bool((bt and bt.flaky) or (nt and nt.flaky))
    base_failed = set(bt.failed if bt else [])
    flaky_failed = set(nt.flaky_failed if nt else [])
    failed_now = nt.failed if nt else []
    new_failures = [f for f in failed_now
                    if f not in base_failed and f not in flaky_failed and not (known and _missing(f))]
    # failing on the base, not on the series: a result the base never printed
    # (its run had stopped) is no failure that went away, and where the
    # series' list of failures is cut (selftests.MAX_NAMED) a name past the
    # cut may still fail there
    gone = [] if len(failed_now) >= MAX_NAMED else sorted(
        f for f in base_failed - set(failed_now) if not _missing(f))
    if nt is not None and bt is not None and nt.outcome == Outcome.SKIP and nt.reason.startswith(NOT_REACHED):
        # left out on the series' side: the series cannot reach it (coverage/select.py)
        return Verdict.NOT_REACHED, []
    if flaky and outcomes <= {Outcome.PASS, Outcome.XFAIL}:
        v = Verdict.PASS        # a known flaky test, passing on one side and failing the known way on the other
    elif outcomes == {Outcome.XFAIL, Outcome.XPASS}:
        # a known failure that passed on one side: it does not fail in every
        # boot (16K's khugepaged all:file passed in one cell and failed in
        # another of the same clean run), and where it fails it fails the
        # known way (or it would not be xfail): no news either way
        v = Verdict.XFAIL
        new_failures = []
    elif v in (Verdict.FAIL, Verdict.XFAIL) and new_failures:
        v = Verdict.REGRESSION
    elif v in (Verdict.FAIL, Verdict.XFAIL) and gone and not new_failures:
        v = Verdict.FIXED
    return v, new_failures


def exit_status(doc: schema.Results, strict_style: bool = False) -> int:
    """The run's exit status from what it recorded. A run of one kernel: 1 if
    a check failed, 3 if one could not be measured, an error was recorded or
    the run is incomplete, else 0. A two-sided run, from its verdicts: 1 for a
    regression, a build break (tip or any commit) or a new splat (a console
    regression), or under --strict-style a checkpatch error or warning; 3 if
    anything else could not be measured; else 0."""
    if doc.sides is None:
        outcomes = [c.outcome for cell in doc.cells for c in cell.checks]
        if not doc.complete or doc.errors or Outcome.ERROR in outcomes:
            return 3
        return 1 if Outcome.FAIL in outcomes else 0
    failing = any(r.verdict in FAILING_VERDICTS for r in doc.verdicts)
    failing |= any(not b.ok for b in doc.each_commit or [])
    if strict_style:
        failing |= any(p.errors or p.warnings for p in doc.checkpatch or [])
    if failing:
        return 1
    if not doc.complete or doc.errors or any(r.verdict in (Verdict.ERROR, Verdict.INCOMPLETE) for r in doc.verdicts):
        return 3
    return 0


def judged(doc: schema.Results) -> schema.Results:
    """``doc`` with its verdicts judged again from its cells: a killed run's
    document has none, a copy's may be stale or damaged (they are derived
    data, never trusted as read)."""
    rows = verdicts(doc) if doc.sides is not None else []
    return doc.model_copy(update={"verdicts": rows})

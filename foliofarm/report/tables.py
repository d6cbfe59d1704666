"""The report's tables, from a results document: one per check in the style of
the mailing-list tables (rows: folio-size categories such as thp-aligned-64kB,
then the check's key figures; columns: base and series per page size and
filesystem), the verdict matrix, what changed, and the cross-checks' rows."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from foliofarm import matrix
from foliofarm.judge import printed
from foliofarm.judge.compare import key_figures
from foliofarm.results.schema import CheckResult, Results, Role
from foliofarm.results.outcome import Outcome, Verdict

Block = tuple  # ("p", text) | ("table", header, rows) | ("pre", text) | ("img", name, png, alt)


@dataclass
class Section:
    title: str
    blocks: list[Block] = field(default_factory=list)


# The matrix's filesystem order, for columns (cells arrive in any order when
# several guests run at once).
FS_ORDER = tuple(matrix.filesystems())


def page_rank(page: str) -> tuple[int, str]:
    """4k, 16k, 64k in that order (not as text sorts them)."""
    digits = "".join(ch for ch in page if ch.isdigit())
    return (int(digits) if digits else 1 << 30, page)


def fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, dict):
        total = sum(v.values()) or 1
        return " ".join(f"{k}K:{100 * n // total}%" for k, n in v.items())
    return str(v)


def delta(d: Any) -> str:
    if d is None:
        return ""
    return f" ({'+' if d > 0 else ''}{d})" if d else ""


def columns(doc: Results) -> list[tuple[str, str, str, str]]:
    """(page, fs, side, kernel label) per column, in matrix order: base then series
    side by side for each page size and filesystem."""
    seen: list[tuple[str, str]] = []
    for pf in ((c.page_size, c.fs) for c in doc.cells):
        if pf not in seen:
            seen.append(pf)
    fs_order = {f: i for i, f in enumerate(FS_ORDER)}
    seen.sort(key=lambda pf: (page_rank(pf[0]), fs_order.get(pf[1], len(fs_order)), pf[1]))
    if not doc.sides:
        kernels = {c.kernel for c in doc.cells}
        return [(p, f, "", k) for p, f in seen for k in sorted(kernels)
                if any(c.page_size == p and c.fs == f and c.kernel == k for c in doc.cells)]
    return [(p, f, side, getattr(doc.sides, side).kernel) for p, f in seen for side in Role]


def by_cell(doc: Results) -> dict[tuple[str, str, str], dict[str, CheckResult]]:
    return {(c.kernel, c.page_size, c.fs): {k.name: k for k in c.checks} for c in doc.cells}


def check_names(doc: Results) -> list[str]:
    return list(dict.fromkeys(c.name for cell in doc.cells for c in cell.checks))


def check_table(doc: Results, name: str) -> tuple[list[str], list[list[str]]]:
    cols = columns(doc)
    by = by_cell(doc)
    results = [by.get((k, p, f), {}).get(name) for p, f, _, k in cols]
    # base/series on a series run; the kernel versions on a compare run
    named = doc.series is not None
    header = [name] + [f"{p} {f} {side if named and side else k}" for p, f, side, k in cols]
    cats: list[str] = []
    for r in results:
        for cat in (r.metrics.get("categories_pct") or {} if r else {}):
            if cat not in cats:
                cats.append(cat)
    rows = []
    for cat in cats:
        rows.append([cat] + [f"{(r.metrics.get('categories_pct') or {}).get(cat, 0)}%"
                             if r and "categories_pct" in r.metrics else "-" for r in results])
    present = [k for r in results if r for k in printed.numbers(r.metrics)]
    for key in key_figures(name, present):
        if any(r and key in r.metrics for r in results):
            rows.append([key] + [fmt(r.metrics.get(key) if r else None) for r in results])
    rows.append(["outcome"] + [r.outcome if r else "-" for r in results])
    return header, rows


def verdict_matrix(doc: Results) -> tuple[list[str], list[list[str]]]:
    """Checks down, cells across; a selftest gets a row only where some cell
    has news of it (Verdict.quiet)."""
    loud = {r.check for r in doc.verdicts if not r.quiet}
    rows = [r for r in doc.verdicts if r.check in loud]
    cells = list(dict.fromkeys(r.cell for r in rows))
    table = {(r.cell, r.check): r.verdict for r in rows}
    names = list(dict.fromkeys(r.check for r in rows))
    return ["check"] + cells, [[n] + [table.get((c, n), "-") for c in cells] for n in names]


def changes_table(doc: Results) -> tuple[list[str], list[list[str]]]:
    """Rows whose verdict is not a plain pass, with every figure that moved."""
    out = []
    for r in doc.verdicts:
        moved = r.changed
        if (r.verdict == Verdict.PASS and not moved) or r.quiet:
            continue
        figs = "; ".join(f"{'!' if f.regression else ''}{f.metric} {fmt(f.base)} → "
                         f"{fmt(f.series)}{delta(f.delta)}" for f in moved[:12])
        if len(moved) > 12:
            figs += f"; ... {len(moved) - 12} more under Changed figures"
        why = r.series_reason if r.verdict in (Verdict.REGRESSION, Verdict.FAIL, Verdict.BUILD_BROKEN, Verdict.ERROR) \
            else r.base_reason if r.verdict == Verdict.FIXED else ""
        out.append([r.cell, r.check, r.verdict, f"{fmt(r.base)} → {fmt(r.series)}", figs, why or ""])
    return ["cell", "check", "verdict", "outcome",
            "figures: base → series (delta); ! moved the wrong way", "reason"], out


def changed_figures(doc: Results) -> tuple[list[str], list[list[str]]]:
    """Every figure that moved beyond the base's noise, one row each."""
    rows = []
    for r in doc.verdicts:
        for f in r.changed:
            rows.append([r.cell, r.check, f.metric, fmt(f.base), fmt(f.series), fmt(f.delta), fmt(f.noise),
                         Verdict.REGRESSION if f.regression else Verdict.CHANGED])
    return ["cell", "check", "figure", "base", "series", "delta", "noise", "judged"], rows


def crosscheck_tables(doc: Results, name: str) -> list[Block]:
    """Per cell, a cross-check's rows (judge/thpmaps.py): each counter the farm
    and the other tool gave, whether they agree and, where they differ by design,
    why. Rows where both say 0 are left out."""
    blocks: list[Block] = []
    by = by_cell(doc)
    for p, f, side, k in columns(doc):
        r = by.get((k, p, f), {}).get(name)
        if r is None or not r.rows:
            continue
        shown = [x for x in r.rows if x.farm_kb or x.thpmaps_kb or not x.agrees]
        blocks.append(("p", f"{p} {f} {side or k}: {r.metrics.get('disagreements', '?')} "
                            f"disagreement(s), {r.metrics.get('explained_differences', '?')} "
                            "difference(s) explained."))
        blocks.append(("table", ["counter", "farm kB", "thpmaps kB", "agrees", "why they differ"],
                       [[x.counter, fmt(x.farm_kb), fmt(x.thpmaps_kb),
                         "yes" if x.agrees else ("explained" if x.note else "NO"),
                         x.note] for x in shown]))
    return blocks


def flaky_table(doc: Results) -> tuple[list[str], list[list[str]]]:
    """The run's flaky results, one row each: those measured (passed in some
    boots of the kernel, failed in others: judge/flaky.py), with their
    counts, and the known rows (tests/vmtests/expectations/) a test failed
    by this run, with their reason: which kind each is."""
    rows = []
    for f in doc.flaky:
        here = (f"{f.run_failed} of {f.run_passed + f.run_failed}"
                if f.run_passed is not None and f.run_failed is not None else "-")
        rows.append([f.kernel, f.cell, f.result, f"{f.failed} of {f.passed + f.failed}", here,
                     ("measured in " + f.measured_in) + ("; failed here, judged flaky" if f.judged else ""),
                     (f.first or "-")[:10], (f.last_failed or "-")[:10]])
    for cell in doc.cells:
        for c in cell.checks:
            for s in c.subtests:
                if s.flaky and s.outcome == Outcome.XFAIL:
                    rows.append([cell.kernel, f"{cell.page_size}-{cell.fs}", f"{c.name}: {s.name}", "-", "-",
                                 f"a known row: {s.reason}", "-", "-"])
    return ["kernel", "cell", "result", "failed (all boots)", "failed (this run)", "kind", "first seen",
            "last failed"], rows

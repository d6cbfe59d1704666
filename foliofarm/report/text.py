"""report.txt: the report as a reply to the list takes it. Plain text, no line
over 72 columns; the folio-size tables in the shape the threads use (one table
per check and page size: categories down, filesystem and side across, a rule
before the contpte row); then what changed, the kernel's reports, checkpatch's
findings and the command that reproduces the run."""

from __future__ import annotations

import shlex
import textwrap
from typing import Any

from foliofarm import shown
from foliofarm.judge import catalogue
from foliofarm.report import finding
from foliofarm.report.sections import patch_lines, reach_lines
from foliofarm.report.tables import by_cell, check_names, columns, flaky_table, page_rank
from foliofarm.results.schema import CheckResult, Results, Role, VerdictRow
from foliofarm.results.outcome import Outcome, Verdict

WIDTH = 72
LABEL = 20          # the category column's text
CELL = 5            # each figure column's text ("100%")
# Column heads of a series run's sides (five characters fit a column).
SIDE = {Role.BASE: "base", Role.SERIES: "after"}
# verdicts whose why is the series side's reason
SERIES_SAYS = (Verdict.REGRESSION, Verdict.BUILD_BROKEN, Verdict.ERROR, Verdict.FLAKY)


def in_text(check: str) -> bool:
    """Whether report.txt shows ``check``'s folio table whatever moved (its
    row's in_text); the others' only when they changed."""
    row = catalogue.by_name().get(check)
    return bool(row and row.in_text)


def _wrap(text: str, indent: str = "", first: str | None = None) -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=indent if first is None else first,
                         subsequent_indent=indent, break_on_hyphens=False,
                         break_long_words=True) or [""]


def _rule(ncols: int, ch: str = "-") -> str:
    return "+" + ch * (LABEL + 2) + ("+" + ch * (CELL + 2)) * ncols + "+"


def _row(label: str, cells: list[str]) -> str:
    return f"| {label[:LABEL]:<{LABEL}} |" + "".join(f" {c[:CELL]:>{CELL}} |" for c in cells)


def _v(v: Any) -> str:
    return "-" if v is None else str(v)


def _pct(v: Any) -> str:
    if v is None:
        return "-"
    return f"{round(float(v))}%"


def folio_tables(doc: Results, check: str) -> list[str]:
    """One table per page size: the check's folio-size categories for each
    filesystem, base and series side by side (or each kernel on a plain run).
    Six figure columns fit in 72; more are split over further tables."""
    by = by_cell(doc)
    cols = columns(doc)
    out: list[str] = []
    for page in sorted(dict.fromkeys(p for p, _, _, _ in cols), key=page_rank):
        pcols = [c for c in cols if c[0] == page]
        results = [by.get((k, p, f), {}).get(check) for p, f, _, k in pcols]
        cats: list[str] = []
        for r in results:
            for cat in _categories(r):
                if cat not in cats:
                    cats.append(cat)
        if not cats:
            continue
        for start in range(0, len(pcols), 6):
            part = list(zip(pcols[start:start + 6], results[start:start + 6]))
            out.append(f"{check}, {page} pages: share of the mapped text by folio size")
            out.append(_rule(len(part)))
            out.append(_row("", [f for (_, f, _, _), _ in part]))
            out.append(_row("", [SIDE.get(side, side) or k for (_, _, side, k), _ in part]))
            out.append(_rule(len(part), "="))
            plain = [c for c in cats if not c.startswith("cont-")]
            cont = [c for c in cats if c.startswith("cont-")]
            for cat in plain:
                out.append(_row(cat, [_pct(_categories(r).get(cat, 0)) if r else "-" for _, r in part]))
            if cont:
                out.append(_rule(len(part)))
                for cat in cont:
                    out.append(_row(cat, [_pct(_categories(r).get(cat, 0)) if r else "-" for _, r in part]))
            out.append(_rule(len(part)))
            out.append("")
    return out


def _categories(r: CheckResult | None) -> dict[str, Any]:
    return (r.metrics.get("categories_pct") if r else None) or {}


def _died_cells(doc: Results) -> dict[str, str]:
    """"page-fs" -> the side ("base", "series", "both") whose kernel died booting."""
    names = {doc.sides.base.kernel: Role.BASE, doc.sides.series.kernel: Role.SERIES} if doc.sides else {}
    out: dict[str, str] = {}
    for cell in doc.cells:
        if any(c.boot_failed for c in cell.checks) and cell.kernel in names:
            key = f"{cell.page_size}-{cell.fs}"
            side = names[cell.kernel]
            out[key] = "both" if key in out and out[key] != side else side
    return out


def _group_died(rows: list[VerdictRow], died: dict[str, str]) -> dict[str, list[VerdictRow]]:
    out: dict[str, list[VerdictRow]] = {}
    for r in rows:
        if r.cell in died and not r.subtest_of:
            out.setdefault(r.cell, []).append(r)
    return out


def render(doc: Results) -> str:
    """report.txt: the run's verdicts and what moved, in plain text for a reply to the list."""
    # a selftest with nothing to say (skipped or failing the known way on both
    # sides) is counted in its check's row, not listed
    notable = [r for r in doc.verdicts if (r.verdict != Verdict.PASS or r.changed) and not r.quiet]
    lines = _head(doc)
    died_lines, notable = _died(doc, notable)
    # a reproducer's rows are told in its own table (_reproducer)
    others = [r for r in notable if r.check != finding.CHECK]
    lines += died_lines + (_notable(doc, others) if others or not notable else [])
    changed_checks = {r.check for r in notable}
    for name in check_names(doc):
        if in_text(name) or name in changed_checks:
            lines += folio_tables(doc, name)
    lines += _reproducer(doc) + _console_reports(doc) + _checkpatch(doc) + _flaky(doc)
    if reach := reach_lines(doc):
        lines += [ln for r in reach for ln in _wrap(r)] + [""]
    if patched := patch_lines(doc):
        lines += [ln for r in patched for ln in _wrap(r)] + [""]
    jobs = [f"  {b.page_size}-{b.fs}-{b.kernel}: {b.lab_job} ({b.device})" for b in doc.boots if b.lab_job]
    lines += ["LAVA jobs:", *jobs, ""] if jobs else []
    lines.append("Reproduce:")
    for cmd in doc.shard_commands or [doc.command]:
        lines += _wrap(shlex.join(cmd), "      ", "  $ ")
    # a Subject, a reproducer's lines, a console's: their escapes shown (shown.py)
    return shown.visible("\n".join(lines).rstrip() + "\n")


def _head(doc: Results) -> list[str]:
    """Which kernels, and the count of each verdict (of each outcome, one-sided)."""
    sides = doc.sides
    lines: list[str] = []
    if sides:
        lines += _wrap(f"foliofarm: {sides.base.kernel} vs {sides.series.kernel} (run {doc.run_id})")
        lines += _wrap(sides.base.origin, "         ", "Base:    ")
        if doc.series and doc.series.base:      # a followed tree: why this base
            lines += _wrap(doc.series.base.text, "         ", "         ")
        lines += _wrap(sides.series.origin, "         ", "Against: ")
        verdicts = [r.verdict for r in doc.verdicts if not r.subtest_of]
        counts = ", ".join(f"{verdicts.count(v)} {v}" for v in dict.fromkeys(verdicts))
        lines += _wrap(f"Verdicts: {counts or 'none'}" + ("" if doc.complete else " (INCOMPLETE run)"))
    else:
        lines += _wrap(f"foliofarm run {doc.run_id}" + ("" if doc.complete else " (INCOMPLETE)"))
        outcomes = [c.outcome for cell in doc.cells for c in cell.checks]
        lines += _wrap("Outcomes: " + ", ".join(f"{outcomes.count(o)} {o}" for o in dict.fromkeys(outcomes)))
    lines.append("")
    return lines


def _died(doc: Results, notable: list[VerdictRow]) -> tuple[list[str], list[VerdictRow]]:
    """A cell whose kernel died booting on one side: one line for all its
    checks; the rows left to list one by one."""
    lines: list[str] = []
    died = _died_cells(doc)
    for cell, rows in _group_died(notable, died).items():
        notable = [r for r in notable if r not in rows]
        lines += _wrap(f"{cell}: every check {rows[0].verdict} ({len(rows)} checks): the "
                       f"{died[cell]} kernel died while booting", "    ", "  ")
        lines += _wrap((rows[0].series_reason if died[cell] == Role.SERIES
                        else rows[0].base_reason or "")[:600], "      ", "    ")
    if died:
        lines.append("")
    return lines, notable


def _notable(doc: Results, notable: list[VerdictRow]) -> list[str]:
    """Each row that did not plainly pass, with the figures that moved."""
    lines: list[str] = []
    if notable:
        lines.append("What changed, or did not pass (! a figure moved the wrong way):")
        for r in notable:
            lines += _wrap(f"{r.cell} {r.check}: {r.verdict} "
                           f"({r.base or '-'} -> {r.series or '-'})", "    ", "  ")
            for f in r.changed[:8]:
                delta = f.delta
                lines += _wrap(f"{'!' if f.regression else ''}{f.metric} {_v(f.base)} -> "
                               f"{_v(f.series)}" + (f" ({'+' if delta > 0 else ''}{delta})"
                                                    if isinstance(delta, (int, float)) and delta else ""),
                               "      ", "    ")
            if r.verdict in SERIES_SAYS and r.series_reason:
                lines += _wrap(r.series_reason[:600], "      ", "    ")
            elif r.verdict in (Verdict.FAIL, Verdict.XFAIL) and r.base_reason:
                lines += _wrap("the base fails it too, the base's failure, not the series': "
                               + r.base_reason[:500], "      ", "    ")
        lines.append("")
    elif doc.sides:
        lines += _wrap("Every check passed on both sides with the same figures.")
        lines.append("")
    return lines


def _reproducer(doc: Results) -> list[str]:
    """A reproducer's run (report/finding.py) cell by cell: each side's exit
    status, the verdict, its figures (base -> series where they differ), why
    a side did not pass; then the last lines it printed where there is news
    (else in the first cell)."""
    if not finding.ran(doc):
        return []
    runs = finding.cell_runs(doc)
    lines = _wrap(finding.headline(doc) + ":")
    for r in runs:
        sides = ", ".join(f"{SIDE.get(s.label, s.label)} {s.exit}" for s in r.sides)
        lines += _wrap(f"{r.cell}: {sides}" + (f": {r.verdict}" if r.verdict else ""), "    ", "  ")
        if figures := r.figures():
            lines += _wrap(", ".join(figures[:8]), "      ", "    ")
        for s in r.sides:
            if s.trouble:
                lines += _wrap(f"{SIDE.get(s.label, s.label)}: {s.trouble[:400]}", "      ", "    ")
    tails = finding.shown_tails(runs)
    for i, (cell, s) in enumerate(tails):
        if i and tails[i - 1][0] == cell and tails[i - 1][1].tail == s.tail:
            continue                            # said once for both sides
        same = i + 1 < len(tails) and tails[i + 1][0] == cell and tails[i + 1][1].tail == s.tail
        whose = "both sides" if same else SIDE.get(s.label, s.label)
        lines.append(f"  Its last lines, {cell} {whose}:")
        lines += ["    " + line[:WIDTH - 4] for line in s.tail.splitlines()]
    return lines + [""]


def _console_reports(doc: Results) -> list[str]:
    reports = [f"{cell.id}: {c.reason}" for cell in doc.cells for c in cell.checks
               if c.name == "console" and c.outcome == Outcome.FAIL]
    if not reports:
        return []
    lines = ["Kernel reports on the console:"]
    for r in reports:
        lines += _wrap(r[:400], "    ", "  ")
    return lines + [""]


def _checkpatch(doc: Results) -> list[str]:
    lines: list[str] = []
    cp = doc.checkpatch or []
    for p in cp:
        if p.errors or p.warnings or p.checks:
            lines += _wrap(f"checkpatch {p.number}/{len(cp)} {p.subject!r}: "
                           f"{p.errors} errors, {p.warnings} warnings, {p.checks} checks")
            for f in p.findings:
                lines += _wrap(f"{f.level}:{f.type}: {f.message} (line {f.line})", "      ", "    ")
    if any(p.errors or p.warnings for p in cp):
        lines.append("")
    return lines


def _flaky(doc: Results) -> list[str]:
    """The run's flaky results with their counts (tables.flaky_table)."""
    _, rows = flaky_table(doc)
    if not rows:
        return []
    lines = ["Flaky results (passed in some boots, failed in others; never a failure of the run):"]
    for kernel, cell, result, total, here, kind, first, last in rows:
        counts = f"failed {total} boots" + (f", {here} in this run" if here != "-" else "")
        lines += _wrap(f"{cell} {kernel} {result}: " + (counts + f"; {kind}" if total != "-" else kind)
                       + (f" (first seen {first}, last failed {last})" if first != "-" else ""), "      ", "  ")
    return lines + [""]

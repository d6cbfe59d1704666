"""A reproducer's run (``run --repro``) cell by cell, as the reports show it:
per cell, each side's exit status, the verdict, the figures that moved, what
the kernel reported while it ran (its result's reason) and the last lines of
its output. report.txt's table and report.md's section are made of these."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from foliofarm.judge import printed
from foliofarm.judge.compare import key_figures
from foliofarm.report.tables import by_cell, columns, fmt
from foliofarm.results.outcome import Outcome, Verdict
from foliofarm.results.schema import CheckResult, Moved, Results

CHECK = "repro"       # the catalogue's row a reproducer runs as


@dataclass
class SideRun:
    """One side's run of the reproducer on a cell."""
    label: str                  # "base", "series", or a kernel's label
    result: CheckResult | None

    @property
    def exit(self) -> str:
        r = self.result
        if r is None:
            return "-"
        status = r.metrics.get("exit_status")
        return f"exit {status}" if status is not None else r.outcome

    @property
    def tail(self) -> str:
        got = self.result.metrics.get("output_tail") if self.result else None
        return got if isinstance(got, str) else ""

    @property
    def trouble(self) -> str:
        """Why it did not pass: its status, the kernel's taint and reports,
        and what booting both sides again found (measure/confirm.py)."""
        r = self.result
        if r is None or r.outcome == Outcome.PASS:
            return ""
        return r.reason + (f" [{r.again}]" if r.again else "")


@dataclass
class CellRun:
    cell: str
    sides: list[SideRun]
    verdict: str | None = None                  # a two-sided run's
    moved: list[Moved] = field(default_factory=list)


    def figures(self) -> list[str]:
        """Its figures, but the exit status: ``name value`` where every side
        printed the same, ``name base -> series`` where they differ."""
        results = [s.result for s in self.sides if s.result is not None]
        present = [k for r in results for k in printed.numbers(r.metrics)]
        out = []
        for key in key_figures(CHECK, present):
            if key == "exit_status":
                continue
            values = [fmt(s.result.metrics.get(key)) if s.result else "-" for s in self.sides]
            out.append(f"{key} {values[0]}" if len(set(values)) == 1 else f"{key} {' -> '.join(values)}")
        return out


def ran(doc: Results) -> bool:
    return any(c.name == CHECK for cell in doc.cells for c in cell.checks)


def cell_runs(doc: Results) -> list[CellRun]:
    """The reproducer's runs, a row per cell in matrix order."""
    by = by_cell(doc)
    verdicts = {r.cell: r for r in doc.verdicts if r.check == CHECK}
    out: dict[str, CellRun] = {}
    for page, fs, side, kernel in columns(doc):
        name = f"{page}-{fs}"
        row = out.setdefault(name, CellRun(name, []))
        row.sides.append(SideRun(side or kernel, by.get((kernel, page, fs), {}).get(CHECK)))
        if (v := verdicts.get(name)) is not None:
            row.verdict, row.moved = v.verdict, v.changed
    return [r for r in out.values() if any(s.result for s in r.sides)]


def headline(doc: Results) -> str:
    """Which reproducer, as called (its arguments after it)."""
    rec = doc.reproducer
    if rec is None:
        return "Reproducer (run --repro)"
    called = shlex.join([rec.name, *rec.args])
    return f"Reproducer {called} ({'C' if rec.kind == 'c' else 'shell'}, {rec.digest})"


def shown_tails(runs: list[CellRun], most: int = 4) -> list[tuple[str, SideRun]]:
    """Whose last lines to show (``most`` at most): the sides that did not
    pass; else both sides of the first cell whose verdict is news; else (all
    quiet) the first cell's sides."""
    failed = [(r.cell, s) for r in runs for s in r.sides if s.tail and s.trouble]
    if failed:
        return failed[:most]
    news = [r for r in runs if r.verdict not in (None, Verdict.PASS)]
    first = (news or runs)[:1]
    return [(r.cell, s) for r in first for s in r.sides if s.tail][:most]

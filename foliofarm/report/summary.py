"""The terminal tables of a run: cells x checks with key figures, and the
verdicts of a two-sided run with every figure that changed."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from foliofarm import shown

from foliofarm.judge import catalogue
from foliofarm.results.schema import Results, VerdictRow
from foliofarm.results.outcome import Outcome, Verdict

# Figures shown in the cells table, per check.
def summary_of(check: str) -> tuple[tuple[str, str], ...]:
    """The summary table's column of ``check``: (figure, "how {}") from its
    row in tests/vmtests/checks.toml."""
    row = catalogue.by_name().get(check)
    return row.summary if row else ()


OUTCOME_COLOUR = {"pass": "green", "fail": "red", "error": "red", "xfail": "yellow",
                  "xpass": "magenta", "skip": "dim", "flaky": "yellow"}
VERDICT_COLOUR = {"pass": "green", "regression": "bold red", "build-broken": "bold red",
                  "changed": "yellow", "flaky": "yellow", "fixed": "cyan", "fail": "red", "xfail": "yellow",
                  "error": "red", "skip": "dim", "not-reached": "dim", "incomplete": "red"}


def short(v: Any) -> str:
    if isinstance(v, dict):   # folio size histogram: "64K:100%"
        total = sum(v.values()) or 1
        return ",".join(f"{k}K:{100 * n // total}%" for k, n in v.items())
    return str(v)


# Below this many columns (a CI log is 80) the cells table leaves the figures
# out: one row per cell with its counts and whatever did not pass.
WIDE = 160


def print_table(doc: Results, names: list[str], console: Console | None = None) -> None:
    console = console or Console()
    # a column for each check some cell has a result of (not for one that ran nowhere)
    ran = {c.name for cell in doc.cells for c in cell.checks}
    names = [n for n in [*names, "console"] if n in ran]
    id_width = max((len(c.id) for c in doc.cells), default=4)
    if console.width < WIDE:
        console.print(narrow_table(doc, names, id_width))
        return
    table = Table(title=shown.rich_text(f"foliofarm {doc.run_id}"))
    table.add_column("cell", no_wrap=True, min_width=id_width)
    for n in names:
        table.add_column(shown.rich_text(n))
    for cell in doc.cells:
        row: list[Text | str] = [shown.rich_text(cell.id)]
        by_name = {c.name: c for c in cell.checks}
        for n in names:
            c = by_name.get(n)
            if c is None:
                row.append("-")
                continue
            figs = " ".join(fmt.format(short(c.metrics[k])) for k, fmt in summary_of(n)
                            if k in c.metrics)
            row.append(_coloured(c.outcome, OUTCOME_COLOUR) + shown.rich_text(f" {figs}".rstrip()))
        table.add_row(*row)
    console.print(table)


def narrow_table(doc: Results, names: list[str], id_width: int) -> Table:
    """Cells x outcomes for a narrow log: cell ids whole, counts, and each
    check that did not pass with its outcome."""
    table = Table(title=shown.rich_text(f"foliofarm {doc.run_id}"))
    table.add_column("cell", no_wrap=True, min_width=id_width)
    table.add_column("passed", no_wrap=True)
    table.add_column("not passed (check: outcome)", overflow="fold")
    for cell in doc.cells:
        by_name = {c.name: c for c in cell.checks}
        ran = [by_name[n] for n in names if n in by_name]
        passed = sum(c.outcome == Outcome.PASS for c in ran)
        others = Text(", ").join(shown.rich_text(f"{c.name}: ") + _coloured(c.outcome, OUTCOME_COLOUR)
                                 for c in ran if c.outcome != Outcome.PASS)
        table.add_row(shown.rich_text(cell.id), shown.rich_text(f"{passed}/{len(ran)}"), others or "-")
    return table


def _coloured(word: str, colours: dict[str, str]) -> Text:
    """An outcome or a verdict in its colour (a Text: nothing in it is markup)."""
    return shown.rich_text(word, colours.get(word, "white"))


def changed_text(r: VerdictRow, limit: int = 6) -> str:
    moved = r.changed
    parts = [f"{'!' if f.regression else ''}{f.metric} {f.base}->{f.series}" for f in moved[:limit]]
    if len(moved) > limit:
        parts.append(f"... {len(moved) - limit} more")
    return ", ".join(parts)


def print_verdicts(doc: Results, console: Console | None = None) -> None:
    sides = doc.sides
    assert sides is not None, "verdicts are a two-sided run's"
    table = Table(title=shown.rich_text(f"{sides.base.kernel} -> {sides.series.kernel}: verdicts "
                                        "(! marks a figure that moved the wrong way)"))
    rows = [r for r in doc.verdicts if not r.quiet]
    widths = {"cell": max((len(r.cell) for r in rows), default=4),
              "check": max((len(r.check) for r in rows), default=5), "verdict": 12}
    for col in ("cell", "check", "verdict", "figures that moved (base -> series)"):
        table.add_column(col, no_wrap=col in widths, min_width=widths.get(col),
                         overflow="fold")
    for r in rows:
        detail = changed_text(r) or ("same" if r.verdict == Verdict.PASS else r.series_reason[:120])
        table.add_row(shown.rich_text(r.cell), shown.rich_text(r.check),
                      _coloured(r.verdict, VERDICT_COLOUR), shown.rich_text(detail))
    (console or Console()).print(table)

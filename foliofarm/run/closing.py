"""The end of a run: what it recorded judged (the verdicts of a two-sided run,
the exit status) and written for the last time. Judging is the run's: the
writer keeps what it is given (results/writer.py)."""

from __future__ import annotations

from foliofarm.judge import compare
from foliofarm.results.writer import ResultsWriter


def close(w: ResultsWriter, complete: bool, strict_style: bool = False) -> int:
    """Judge ``w``'s document, write it for the last time, and return the
    run's exit status (0 all passed, 1 a regression or a failed check, 3 an
    error or an incomplete run)."""
    with w.lock:
        w.order_cells()
        doc = w.results()
        rows = compare.verdicts(doc) if doc.sides is not None else None
        w.finish(complete, rows)
        # judged on what was written, without reading the whole document again
        return compare.exit_status(doc.model_copy(update={
            "complete": complete, "verdicts": rows or []}), strict_style)

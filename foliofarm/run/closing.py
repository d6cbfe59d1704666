"""The end of a run: what it recorded judged (the verdicts of a two-sided run,
the exit status) and written for the last time. Judging is the run's: the
writer keeps what it is given (results/writer.py)."""

from __future__ import annotations

import signal
import threading
from typing import Callable

from foliofarm.judge import compare
from foliofarm.results.writer import ResultsWriter
from foliofarm.util import deadline

INTERRUPTED = ("the run was interrupted (SIGINT, ^C); what it had measured is kept, "
               "the rest is not measured")


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


def on_interrupt(stop: Callable[[str, str], None]) -> Callable[[], None]:
    """^C (SIGINT) stops the run as --timeout does: ``stop(why, stage)`` says
    so in results.json and ends its boots (a lab's jobs too), then everything
    the run started is killed, exit 3, at once. (Raised as KeyboardInterrupt,
    it would wait for every guest in flight to finish its checks: the page
    sizes' threads are joined on the way out.) A second ^C is Python's own.
    Returns what puts the handler it replaced back (nothing to do off the
    main thread, where signals cannot be caught)."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def interrupted(signum: int, frame: object) -> None:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        deadline(0, lambda: stop(INTERRUPTED, "interrupted"))
    previous = signal.signal(signal.SIGINT, interrupted)
    return lambda: signal.signal(signal.SIGINT, previous)

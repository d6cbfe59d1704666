"""A guest command's deadline, counted in the time the guest had a core.

A check's deadline says how long it may take on a guest that runs; with more
guests and builds than cores a guest also waits, runnable, for a core, and a
check that takes 15 s alone takes 45 s beside five other guests on two cores
(measured: thpmaps on 64K, called hung at its 45 s deadline, on a host running
six guests). So when the wall-clock deadline passes, the time the guest's
busiest thread waited for a core since the command began is added to it (read
from the host's scheduler, priority.waited_seconds), up to ``most`` times the
deadline in all. A guest that really hangs keeps its vCPU spinning or idle:
its waiting adds at most the host's overload, never an open end."""

from __future__ import annotations

import time
from typing import Callable

# The most a deadline stretches for the guest's waiting: a command that hangs
# on an overloaded host still ends within this many times its deadline. A
# tree guest yields (nice 19) to the own checks' guests and to a race part:
# measured, a 64K tree guest ran 30 s on a core in 265 s (228 s waiting), and
# thpmaps, 15 s alone, was called hung at four times its 45 s deadline.
MOST = 10.0


class Deadline:
    """``seconds`` from now, extended by what ``waited()`` (cumulative seconds
    the guest waited for a core, or None where unknown) grew since then."""

    def __init__(self, seconds: float, waited: Callable[[], float | None] | None = None,
                 most: float = MOST) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds
        self.waited = waited
        self.limit = self.end + max(0.0, most - 1.0) * seconds
        self.start_wait = self._read()
        self.added = 0.0                # seconds added for the guest's waiting

    def _read(self) -> float | None:
        if self.waited is None:
            return None
        try:
            return self.waited()
        except OSError:
            return None

    def _extend(self) -> None:
        """At the end: add what the guest waited for a core since the start
        and was not added yet (bounded by the limit)."""
        if self.start_wait is None:
            return
        now = self._read()
        if now is None:
            return
        more = (now - self.start_wait) - self.added
        if more <= 0.05:
            return
        new_end = min(self.limit, self.end + more)
        self.added += new_end - self.end
        self.end = new_end

    def remaining(self) -> float:
        left = self.end - time.monotonic()
        if left <= 0:
            self._extend()
            left = self.end - time.monotonic()
        return max(0.0, left)

    def expired(self) -> bool:
        return self.remaining() <= 0

    def describe(self) -> str:
        """The deadline as a hang's message gives it: its seconds, and what was
        added for the guest's waiting for a core."""
        if self.added < 0.5:
            return f"{self.seconds:.0f}s"
        return f"{self.seconds:.0f}s (and {self.added:.0f}s more while it waited for a core)"

"""A guest command's deadline counts the time the guest had a core: read from
the host scheduler's figures of real processes (two CPU hogs pinned to one
core wait for it half the time), and bounded however long the guest waits."""

import os
import subprocess
import sys
import time

import pytest

from foliofarm.boot import priority
from foliofarm.boot.deadline import Deadline

HOG = "while True: pass"


def run_out(d: Deadline) -> float:
    """Wait as the console does (short polls) until the deadline passes; the
    wall seconds it took."""
    t0 = time.monotonic()
    while not d.expired():
        time.sleep(min(0.05, max(0.01, d.remaining())))
    return time.monotonic() - t0


@pytest.mark.skipif(priority.waited_seconds(os.getpid()) is None,
                    reason="this kernel keeps no scheduler figures per task (schedstat)")
def test_a_guest_kept_waiting_for_a_core_gets_that_time_back():
    core = min(os.sched_getaffinity(0))
    hogs = [subprocess.Popen([sys.executable, "-c", HOG]) for _ in range(2)]
    try:
        for h in hogs:
            os.sched_setaffinity(h.pid, {core})
        time.sleep(0.3)
        d = Deadline(1.0, lambda: priority.waited_seconds(hogs[0].pid), most=4.0)
        took = run_out(d)
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    # two runnable processes on one core: each waits about half the time, and
    # every second waited is added back (the extension itself waited too)
    assert d.added > 0.3, d.added
    assert took >= 1.0 + d.added - 0.1
    assert took <= 4.0 + 0.5 and "waited for a core" in d.describe()


def test_a_guest_that_waits_for_nothing_ends_on_time():
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        d = Deadline(0.5, lambda: priority.waited_seconds(sleeper.pid))
        took = run_out(d)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert d.added < 0.05 and 0.5 <= took < 1.0
    assert "waited" not in d.describe()


def test_the_extension_is_bounded_and_counted_once():
    waited = iter([0.0] + [1000.0] * 100)      # a guest that waits without end
    d = Deadline(0.2, lambda: next(waited), most=2.0)
    took = run_out(d)
    assert 0.39 <= took < 0.6                 # at most twice its 0.2 s
    assert abs(d.added - 0.2) < 0.01
    grown = iter([0.0, 0.1, 0.1, 0.1] + [0.1] * 100)   # waited 0.1 s once: added once
    d = Deadline(0.2, lambda: next(grown))
    took = run_out(d)
    assert 0.29 <= took < 0.45 and abs(d.added - 0.1) < 0.01


def test_a_guest_gone_or_without_figures_keeps_the_plain_deadline():
    def gone():
        raise OSError("no such process")
    for waited in (None, gone, lambda: None):
        d = Deadline(0.2, waited)
        assert 0.2 <= run_out(d) < 0.4 and d.added == 0

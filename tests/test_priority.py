"""The tree's guests yield the cores to the own checks' guests while any runs:
on real processes in sessions of their own, as pexpect starts QEMU, the share
each gets read back from the kernel (its autogroup's niceness, or its threads'
where the scheduler has no autogroups)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from foliofarm.boot import priority
from foliofarm.boot.console import GuestSession
from foliofarm.boot.priority import Priorities, niceness

CONSOLES = Path(__file__).resolve().parent / "data" / "consoles"


@pytest.fixture
def guests():
    """Stand-in guests: sleeping processes, each in a session of its own."""
    procs = []

    def start() -> int:
        p = subprocess.Popen(["sleep", "60"], start_new_session=True)
        procs.append(p)
        return p.pid
    yield start
    for p in procs:
        p.kill()
        p.wait()


def can_lower(use_autogroup: bool) -> bool:
    """Whether a niceness once raised can be brought back here: always for an
    autogroup, for a thread only with CAP_SYS_NICE."""
    return use_autogroup or os.geteuid() == 0


@pytest.mark.parametrize("use_autogroup", [
    pytest.param(True, marks=pytest.mark.skipif(not priority.autogroups(),
                                                reason="the host's scheduler has no autogroups")),
    False])
def test_tree_guest_yields_while_an_own_guest_runs(guests, monkeypatch, use_autogroup):
    monkeypatch.setattr(priority, "autogroups", lambda: use_autogroup)
    p = Priorities()
    base = p.base
    tree = guests()
    p.started(tree, tree=True)
    assert niceness(tree) == base            # alone, it runs as fast as anything else
    own = guests()
    p.started(own, tree=False)
    assert niceness(tree) == p.yield_nice > base
    assert niceness(own) == base
    late_tree = guests()                     # a tree guest that starts while an own one runs
    p.started(late_tree, tree=True)
    assert niceness(late_tree) == p.yield_nice
    second_own = guests()
    p.started(second_own, tree=False)
    p.ended(own, tree=False)
    assert niceness(tree) == p.yield_nice    # an own guest still runs
    if can_lower(use_autogroup):
        p.ended(second_own, tree=False)
        assert niceness(tree) == base and niceness(late_tree) == base
    p.ended(tree, tree=True)
    p.ended(late_tree, tree=True)
    assert p.own == 0 and not p.tree


@pytest.mark.skipif(not priority.autogroups(), reason="the host's scheduler has no autogroups")
def test_tree_guests_yield_to_a_race_part_and_all_to_the_own_checks(guests):
    """A race part's guest (claim): the other tree guests yield to it, and it
    yields to the own checks' guests like any tree guest; when it ends the
    others have the cores back."""
    p = Priorities()
    base = p.base
    cell = guests()
    p.started(cell, tree=True)
    race = guests()
    p.started(race, tree=True, claim=True)
    assert niceness(race) == base and niceness(cell) == p.yield_nice
    late = guests()                          # a tree guest starting beside the race part
    p.started(late, tree=True)
    assert niceness(late) == p.yield_nice
    own = guests()                           # a confirming boot of the own checks
    p.started(own, tree=False)
    assert niceness(race) == niceness(cell) == p.yield_nice and niceness(own) == base
    p.ended(own, tree=False)
    assert niceness(race) == base and niceness(cell) == niceness(late) == p.yield_nice
    p.ended(race, tree=True)
    assert niceness(cell) == niceness(late) == base
    assert not p.claims


def test_farm_run_niced_keeps_its_guests_as_nice(guests):
    """A farm started under `nice -n 3` starts its guests at 3 and its yielding
    ones YIELD_NICE above (a new session's autogroup would start at 0);
    where the scheduler weighs sessions, what counts is the farm's session's."""
    code = ("import sys; from foliofarm.boot.priority import Priorities; "
            "p = Priorities(); print(p.base, p.yield_nice)")
    out = subprocess.run(["nice", "-n", "3", "setsid", sys.executable, "-c", code],
                         capture_output=True, text=True, check=True).stdout.split()
    if priority.autogroups():
        # setsid: a session of its own, whose autogroup `nice` did not touch
        # (nice sets the thread's, which weighs only within the session)
        assert out == ["0", str(priority.YIELD_NICE)]
    else:
        assert out == ["3", str(3 + priority.YIELD_NICE)]


def test_guest_session_registers_its_qemu(tmp_path):
    """GuestSession counts its QEMU (here the console stand-in) from spawn to exit."""
    own_before = priority.GUESTS.own
    g = GuestSession(["sh", str(CONSOLES / "replay.sh"), str(CONSOLES / "boot-7.3-4k.log"), "shell"],
                     tmp_path / "console.log", boot_timeout=20, tree=True)
    (tmp_path / "tainted").write_text("4096\n")
    (tmp_path / "klog").write_text("")
    g.taint_file = str(tmp_path / "tainted")
    g.kernel_log_command = f"cat {tmp_path / 'klog'}; : > {tmp_path / 'klog'}"
    with g:
        pid = g.child.pid
        assert pid in priority.GUESTS.tree
        assert priority.GUESTS.own == own_before
    assert pid not in priority.GUESTS.tree


def test_a_processes_cpu_time_and_its_wait_for_a_core_are_read_from_proc():
    import time
    busy = subprocess.Popen([sys.executable, "-c", "import time\nt = time.process_time()\n"
                             "while time.process_time() - t < 0.3: pass\nimport sys; sys.stdin.read()"],
                            stdin=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 10
        while (priority.cpu_seconds(busy.pid) or 0) < 0.3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert priority.cpu_seconds(busy.pid) >= 0.3
        waited = priority.waited_seconds(busy.pid)
        assert waited is not None and 0 <= waited < 10
    finally:
        busy.communicate(b"")
    assert priority.cpu_seconds(busy.pid) is None and priority.waited_seconds(busy.pid) is None


def spinner(seconds: float) -> subprocess.Popen:
    """A process that keeps a core busy for ``seconds`` of its own CPU time, on core 0 only."""
    return subprocess.Popen([sys.executable, "-c", "import time\nt = time.process_time()\n"
                             f"while time.process_time() - t < {seconds}: pass\nimport sys; sys.stdin.read()"],
                            stdin=subprocess.PIPE, preexec_fn=lambda: os.sched_setaffinity(0, {0}))


def test_a_guest_that_shares_its_core_is_measured_as_slower_than_alone():
    """Two processes on one core: each waits for it about as long as it runs
    (slowdown about 2); one alone on it barely waits (about 1)."""
    import time

    def run(n: int) -> float:
        procs = [spinner(0.6) for _ in range(n)]
        try:
            deadline = time.monotonic() + 30
            while (priority.cpu_seconds(procs[0].pid) or 0) < 0.6 and time.monotonic() < deadline:
                time.sleep(0.05)
            return priority.slowdown(procs[0].pid)
        finally:
            for p in procs:
                p.communicate(b"")

    assert run(2) > 1.5
    assert run(1) >= 1.0
    assert priority.slowdown(2 ** 22 + 12345) is None      # no such process

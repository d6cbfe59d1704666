"""The tree's guests yield the cores to the own checks' guests while any runs:
on real processes in sessions of their own, as pexpect starts QEMU, the share
each gets read back from the kernel (its autogroup's niceness, or its threads'
where the scheduler has no autogroups)."""

import os
import re
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
    p.booted(tree)
    assert niceness(tree) == base            # alone, it runs as fast as anything else
    own = guests()
    p.started(own, tree=False)
    assert niceness(tree) == p.yield_nice > base
    assert niceness(own) == base
    late_tree = guests()                     # a tree guest that starts while an own one runs
    p.started(late_tree, tree=True)
    assert niceness(late_tree) == base       # boots unyielded
    p.booted(late_tree)
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
    p.booted(cell)
    race = guests()
    p.started(race, tree=True, claim=True)
    p.booted(race)
    assert niceness(race) == base and niceness(cell) == p.yield_nice
    late = guests()                          # a tree guest starting beside the race part
    p.started(late, tree=True)
    assert niceness(late) == base            # booting, it does not yield
    p.booted(late)
    assert niceness(late) == p.yield_nice
    own = guests()                           # a confirming boot of the own checks
    p.started(own, tree=False)
    assert niceness(race) == niceness(cell) == p.yield_nice and niceness(own) == base
    p.ended(own, tree=False)
    assert niceness(race) == base and niceness(cell) == niceness(late) == p.yield_nice
    p.ended(race, tree=True)
    assert niceness(cell) == niceness(late) == base
    assert not p.claims


@pytest.mark.skipif(not priority.autogroups(), reason="the host's scheduler has no autogroups")
def test_a_booting_tree_guest_does_not_yield_until_its_shell(guests):
    """Yielded from its first instruction, a tree guest on a slow host logged
    soft lockups at boot: it keeps the own guests' weight until booted(),
    whatever starts meanwhile, then yields like any tree guest."""
    p = Priorities(cores=8)
    own = guests()
    p.started(own, tree=False)
    tree = guests()
    p.started(tree, tree=True)
    assert niceness(tree) == niceness(own) == p.base
    second_own = guests()                    # an own guest starting while it boots
    p.started(second_own, tree=False)
    assert niceness(tree) == p.base
    p.booted(tree)
    assert niceness(tree) == p.yield_nice
    p.booted(tree)                           # twice: no change
    assert niceness(tree) == p.yield_nice
    gone = guests()                          # a guest that ends before its shell
    p.started(gone, tree=True)
    p.ended(gone, tree=True)
    assert gone not in p.booting and gone not in p.tree


def waiter(p: Priorities, most: float):
    """wait_to_boot in a thread of its own, as a guest's thread calls it."""
    import threading
    waited: list[float] = []
    t = threading.Thread(target=lambda: waited.append(p.wait_to_boot(most)))
    t.start()
    return t, waited


def test_a_tree_guest_waits_to_boot_for_a_core_free_of_own_guests_and_boots(guests):
    """Two cores, two own guests: a tree guest waits until one ends; with one
    own guest and one tree boot it waits for the boot to reach its shell; the
    wait ends after ``most`` whatever runs."""
    import time
    p = Priorities(cores=2)
    assert p.wait_to_boot(5) < 1             # nothing runs
    a, b = guests(), guests()
    p.started(a, tree=False)
    p.started(b, tree=False)
    t, waited = waiter(p, 30)
    time.sleep(0.5)
    assert t.is_alive() and p.waiting == 1
    p.ended(a, tree=False)
    t.join(10)
    assert not t.is_alive() and 0.4 < waited[0] < 10
    boot = guests()
    p.started(boot, tree=True)               # one own guest and one boot: both cores taken
    t, waited = waiter(p, 30)
    time.sleep(0.5)
    assert t.is_alive()
    p.booted(boot)
    t.join(10)
    assert not t.is_alive() and 0.4 < waited[0] < 10
    t, waited = waiter(p, 0.3)               # one own guest and one new boot again
    p.started(guests(), tree=True)
    t.join(10)
    assert waited and waited[0] < 10


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


def stand_in(tmp_path: Path) -> GuestSession:
    """A tree guest's session on the console stand-in (a recorded 4K boot)."""
    g = GuestSession(["sh", str(CONSOLES / "replay.sh"), str(CONSOLES / "boot-7.3-4k.log"), "shell"],
                     tmp_path / "console.log", boot_timeout=20, tree=True)
    (tmp_path / "tainted").write_text("4096\n")
    (tmp_path / "klog").write_text("")
    g.taint_file = str(tmp_path / "tainted")
    g.kernel_log_command = f"cat {tmp_path / 'klog'}; : > {tmp_path / 'klog'}"
    return g


def test_guest_session_registers_its_qemu(tmp_path):
    """GuestSession counts its QEMU (here the console stand-in) from spawn to exit."""
    own_before = priority.GUESTS.own
    g = stand_in(tmp_path)
    with g:
        pid = g.child.pid
        assert pid in priority.GUESTS.tree
        assert pid not in priority.GUESTS.booting     # at its shell: it yields from now on
        assert priority.GUESTS.own == own_before
    assert pid not in priority.GUESTS.tree


def test_a_tree_guest_session_waits_for_a_core_and_says_so(tmp_path, monkeypatch, guests):
    """With the host's one core taken by an own guest, a tree GuestSession
    waits before it starts QEMU, BOOT_WAIT_MOST at most, and its console log
    says how long; its boot time does not count the wait."""
    p = Priorities(cores=1)
    p.started(guests(), tree=False)
    monkeypatch.setattr(priority, "GUESTS", p)
    monkeypatch.setattr(priority, "BOOT_WAIT_MOST", 1.5)
    g = stand_in(tmp_path)
    with g:
        assert 1.4 < g.boot_waited < 10 and g.boot_seconds < g.boot_waited + 20
        assert not p.booting and g.child.pid in p.tree
    head = (tmp_path / "console.log").read_text().splitlines()[1]
    assert re.match(r"# waited [12] s for a core free of the own checks' guests", head)


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

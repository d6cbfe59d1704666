"""Which guest gets the cores: the tree's checks yield to the farm's own.

Each QEMU runs in a session of its own (pexpect gives it a terminal, and a new
terminal means setsid). Where the scheduler groups processes by session
(/proc/sys/kernel/sched_autogroup_enabled, on in Debian's and most
distributions' kernels), a process's niceness weighs only against the other
processes of its session: every QEMU then weighs as much as another, and as the
whole of a kernel build (make and its compilers share the farm's session),
whatever niceness it was started with. What does weigh across sessions is the
session's own niceness, /proc/PID/autogroup, which any process may raise and
lower again between 0 and 19 for its own processes.

So a guest of the tree's checks (selftests, thpmaps: minutes) runs at
YIELD_NICE while any guest of the farm's own checks (seconds) runs, and at the
builds' and own guests' weight otherwise (but for a tree guest of the
selftests' race parts, that the others yield to as well: Priorities.claims):
the own checks' verdict is final in
the time their boots take alone, and the tree's guests are slowed only for as
long (their tests run under deadlines that count the time they had a core).
Without autogroups the same niceness is set on each of the guest's threads
(a niceness an unprivileged user cannot lower again stays: the tree's guest
then runs below the own checks' until it ends).

A tree guest does not yield while it boots. Yielded from its first
instruction, on a slow host (three own guests, or a kernel build, on two
cores) it ran so little that its kernel logged "soft lockup - CPU#0 stuck
for 11-15s" at boot (slab_late_init, trace_event_update_all, the idle task:
the guest's clock is the host's, and a TCG vCPU that waits for a core does
not run its watchdog), and the console check failed. So a tree guest waits
to start until a core is free of the own guests and the other tree boots
(Priorities.wait_to_boot, BOOT_WAIT_MOST at most), boots at the builds' and
own guests' weight, and yields from its shell on: its tests run under
wall-clock deadlines that count the time it waited for a core."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

# CFS weight 36 against 1024: three own guests and two tree guests on two cores
# give the own ones 98% of the cores. Measured with 10 (weight 110, 93%): the
# own checks' nine boots of a series took 41 s beside the tree's guests, 32 s
# alone. A tree guest still runs every few hundred milliseconds (its tests'
# deadlines in the guest are minutes), but not enough beside a cold kernel
# build on a slow host: booting beside three own guests and make -j2 it logged
# "soft lockup - CPU#0 stuck for 13s" (now it boots unyielded; a lockup still
# logged is booted again by measure/confirm.py with the host to itself).
YIELD_NICE = 15
# How long a tree guest waits for a core free of the own guests and the other
# tree boots before it boots anyway (unyielded still): the own checks of a
# series take about a minute on two cores.
BOOT_WAIT_MOST = 120.0
AUTOGROUP_SWITCH = Path("/proc/sys/kernel/sched_autogroup_enabled")


def autogroups() -> bool:
    """The scheduler weighs sessions against each other (autogroups are on)."""
    try:
        return AUTOGROUP_SWITCH.read_text().strip() == "1"
    except OSError:
        return False


def renice(pid: int, nice: int, use_autogroup: bool | None = None) -> bool:
    """Set the niceness that decides ``pid``'s share of the cores: its session's
    autogroup where the scheduler has them, else each of its threads'. False if
    the process is gone or the kernel refused."""
    if use_autogroup is None:
        use_autogroup = autogroups()
    if use_autogroup:
        try:
            Path(f"/proc/{pid}/autogroup").write_text(str(nice))
            return True
        except OSError:
            return False
    done = False
    try:
        tids = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return False
    for tid in tids:
        try:
            os.setpriority(os.PRIO_PROCESS, tid, nice)
            done = True
        except OSError:
            pass
    return done


def niceness(pid: int) -> int | None:
    """What decides ``pid``'s share now: its autogroup's niceness where the
    scheduler has autogroups, else its main thread's. None if it is gone."""
    try:
        if autogroups():
            # "/autogroup-123 nice 10"
            return int(Path(f"/proc/{pid}/autogroup").read_text().split()[-1])
        return os.getpriority(os.PRIO_PROCESS, pid)
    except (OSError, ValueError, IndexError):
        return None


def cpu_seconds(pid: int) -> float | None:
    """The host CPU time ``pid`` has used, every thread of it, user and system
    (/proc/PID/stat's utime and stime); None if it is gone or unreadable."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
        # the fields after the command's ")" (which may itself hold spaces):
        # state is field 3, utime 14 and stime 15
        rest = text[text.rindex(")") + 2:].split()
        return (int(rest[11]) + int(rest[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def busiest_thread(pid: int) -> tuple[int, int] | None:
    """The nanoseconds ``pid``'s busiest thread (a TCG guest's vCPU thread)
    has run and waited, runnable, for a core (/proc/PID/task/*/schedstat);
    None if it is gone or the kernel does not keep the figures."""
    busiest: tuple[int, int] | None = None
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    for tid in tids:
        try:
            ran, waited = (int(x) for x in Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()[:2])
        except (OSError, ValueError):
            continue
        if busiest is None or ran > busiest[0]:
            busiest = (ran, waited)
    return busiest


def waited_seconds(pid: int) -> float | None:
    """How long ``pid``'s busiest thread waited, runnable, for a core: what the
    other guests and builds cost it. None if it is gone or the kernel does
    not keep the figures."""
    busiest = busiest_thread(pid)
    return None if busiest is None else busiest[1] / 1e9


def slowdown(pid: int) -> float | None:
    """How many times longer than alone ``pid``'s busiest thread has taken so
    far: (its time on a core + its time waiting for one) / its time on a core.
    1.0 for a guest with a core of its own; 2.5 where other guests and builds
    kept it waiting one and a half times as long as it ran. None if it is
    gone, has not run yet or the kernel does not keep the figures."""
    busiest = busiest_thread(pid)
    if busiest is None or busiest[0] <= 0:
        return None
    return (busiest[0] + busiest[1]) / busiest[0]


class Priorities:
    """The guests of a process: how many of the own checks' run, and which of
    the tree's there are to slow while they do. Thread-safe; guests register
    as they start and leave as they end."""

    def __init__(self, yield_nice: int = YIELD_NICE, cores: int | None = None) -> None:
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)
        self.cores = cores or os.cpu_count() or 1   # as the guest pools count them (locks.guests_for)
        self.own = 0
        self.tree: set[int] = set()
        self.booting: set[int] = set()   # tree guests not at their shell yet: they do not yield
        self.waiting = 0                 # tree guests waiting in wait_to_boot
        # Tree guests whose vCPUs run each on a host thread for tests whose
        # threads must run at once (the selftests' race parts): beside other
        # guests one vCPU is often descheduled while the other waits for it,
        # spinning in the guest (measured: the 16K race part 64 s alone, 104 s
        # beside one guest, 196 s beside two). While one runs, the other tree
        # guests yield to it as they yield to the own checks' guests.
        self.claims: set[int] = set()
        self.use_autogroup = autogroups()
        # A farm whose share is lowered (its session's autogroup niceness, or
        # without autogroups its own: nice -n 19 foliofarm run) keeps its guests
        # as low: each new session would otherwise start at 0.
        self.base = niceness(os.getpid()) or 0
        self.yield_nice = min(19, self.base + yield_nice)

    def _set(self, pid: int, nice: int) -> None:
        renice(pid, nice, self.use_autogroup)

    def _tree_nice(self, pid: int) -> int:
        if pid in self.booting:
            return self.base
        if self.own or (self.claims and pid not in self.claims):
            return self.yield_nice
        return self.base

    def _settle(self) -> None:
        for t in self.tree:
            self._set(t, self._tree_nice(t))

    def _core_free(self) -> bool:
        return self.own + len(self.booting) < self.cores

    def wait_to_boot(self, most: float | None = None) -> float:
        """A tree guest about to start: wait until fewer own guests and tree
        boots run than the host has cores, ``most`` seconds at most
        (BOOT_WAIT_MOST). Returns the seconds waited."""
        t0 = time.monotonic()
        with self.changed:
            self.waiting += 1
            try:
                self.changed.wait_for(self._core_free, timeout=BOOT_WAIT_MOST if most is None else most)
            finally:
                self.waiting -= 1
        return time.monotonic() - t0

    def started(self, pid: int, tree: bool, claim: bool = False) -> None:
        """``claim``: a tree guest the other tree guests yield to. A tree
        guest boots unyielded until booted()."""
        with self.lock:
            if tree:
                self.tree.add(pid)
                self.booting.add(pid)
                if claim:
                    self.claims.add(pid)
                    self._settle()
                else:
                    self._set(pid, self._tree_nice(pid))
                return
            self.own += 1
            self._set(pid, self.base)
            if self.own == 1:
                self._settle()

    def booted(self, pid: int) -> None:
        """A tree guest reached its shell: from now on it yields."""
        with self.changed:
            if pid in self.booting:
                self.booting.discard(pid)
                self._set(pid, self._tree_nice(pid))
                self.changed.notify_all()

    def ended(self, pid: int, tree: bool) -> None:
        with self.changed:
            self.changed.notify_all()
            if tree:
                self.tree.discard(pid)
                self.booting.discard(pid)
                if pid in self.claims:
                    self.claims.discard(pid)
                    self._settle()
                return
            self.own = max(0, self.own - 1)
            if self.own == 0:
                self._settle()


# The process's guests: every GuestSession registers here.
GUESTS = Priorities()

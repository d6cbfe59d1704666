"""Guest slots (foliofarm/measure/cells.py GuestSlots): the order in which
waiting guests get the cores, and the farm's own checks never waiting
behind the tree's."""

from __future__ import annotations

import threading
import time

from foliofarm.measure.cells import GuestSlots
from foliofarm.locks import HostSlots


def take(slots: GuestSlots, rank, order: list, hold: float, started: threading.Event | None = None):
    def run():
        with slots.slot(rank):
            order.append(rank)
            if started:
                started.set()
            time.sleep(hold)
    t = threading.Thread(target=run)
    t.start()
    return t


def test_lowest_rank_first():
    slots, order = GuestSlots(1), []
    busy = threading.Event()
    first = take(slots, (False, 0), order, 0.2, busy)
    busy.wait()
    waiting = [take(slots, r, order, 0.0) for r in [(False, 65536), (False, 16384), (False, 4096)]]
    time.sleep(0.1)
    for t in [first, *waiting]:
        t.join(5)
    assert order == [(False, 0), (False, 4096), (False, 16384), (False, 65536)]


def test_own_checks_never_wait_behind_the_tree_checks():
    """One slot of each: the tree's checks hold theirs for minutes; the own
    checks of the next page size boot at once, the next tree check waits."""
    slots, order = GuestSlots(1), []
    busy = threading.Event()
    tree = take(slots, (True, -65536, False), order, 0.3, busy)
    busy.wait()
    second = take(slots, (True, -4096, True), order, 0.0)
    time.sleep(0.05)
    own = take(slots, (False, 65536), order, 0.0)
    own.join(5)
    assert order == [(True, -65536, False), (False, 65536)]     # the second tree check waits
    for t in (tree, second):
        t.join(5)
    assert order[2] == (True, -4096, True)


def test_tree_pool_of_its_own_size():
    slots, order = GuestSlots(1, tree=3), []
    ts = [take(slots, (True, -n), order, 0.4) for n in (1, 2, 3)]
    time.sleep(0.1)
    ts.append(take(slots, (True, -4), order, 0.0))
    time.sleep(0.1)
    assert sorted(order) == [(True, -3), (True, -2), (True, -1)]    # three at once, the fourth waits
    for t in ts:
        t.join(5)
    assert order[3] == (True, -4)


def test_tree_checks_wait_until_every_page_size_built_at_once_queued():
    """A series' page sizes build at once: the first kernel built must not
    take every tree slot for its own (short) checks while a longer page part
    of the next is seconds from being queued."""
    slots, order = GuestSlots(1, tree=1, expect=["4k", "64k"]), []
    slots.queue([(True, True, False, -4096)], "4k")
    first = take_queued(slots, (True, True, False, -4096), order)
    time.sleep(0.1)
    assert order == []                       # 64k has not queued yet
    slots.queue([(True, False, False, -65536)], "64k")
    longest = take_queued(slots, (True, False, False, -65536), order)
    for t in (first, longest):
        t.join(5)
    assert order == [(True, False, False, -65536), (True, True, False, -4096)]


def test_a_page_size_that_queues_nothing_does_not_hold_the_tree_checks():
    slots, order = GuestSlots(1, tree=1, expect=["4k", "16k"]), []
    slots.queue([(True, False, -4096)], "4k")
    t = take_queued(slots, (True, False, -4096), order)
    time.sleep(0.1)
    assert order == []
    slots.arrived("16k")                     # its build failed, or its measurements were reused
    t.join(5)
    assert order == [(True, False, -4096)]


def test_own_checks_do_not_wait_for_the_page_sizes_to_queue():
    slots, order = GuestSlots(1, expect=["4k", "16k"]), []
    take(slots, (False, 4096), order, 0.0).join(5)
    assert order == [(False, 4096)]


def take_queued(slots: GuestSlots, rank, order: list):
    def run():
        with slots.slot(rank, queued=True):
            order.append(rank)
    t = threading.Thread(target=run)
    t.start()
    return t


def test_the_hosts_slots_are_shared_by_every_run_on_it(tmp_path):
    """Two runs (processes) on one cache: at most the host's slots' guests at
    once between them, each run getting its turn; a dead run's slot is free."""
    import subprocess
    import sys
    prog = ("import sys, time; from pathlib import Path; from foliofarm.locks import HostSlots\n"
            "h = HostSlots(Path(sys.argv[1]), 2)\n"
            "for _ in range(3):\n"
            "    with h.slot() as i:\n"
            "        print(time.monotonic(), 'in', flush=True); time.sleep(0.3)\n"
            "        print(time.monotonic(), 'out', flush=True)\n")
    runs = [subprocess.Popen([sys.executable, "-c", prog, str(tmp_path)], stdout=subprocess.PIPE, text=True)
            for _ in range(3)]
    events = sorted((float(t), what, n) for n, r in enumerate(runs)
                    for t, what in (ln.split() for ln in r.communicate(timeout=60)[0].splitlines()))
    at_once, most, got = 0, 0, set()
    for _, what, n in events:
        at_once += 1 if what == "in" else -1
        most = max(most, at_once)
        got.add(n)
    assert most <= 2 and got == {0, 1, 2}
    assert all(r.returncode == 0 for r in runs)
    # a run killed while it holds a slot frees it
    holder = subprocess.Popen([sys.executable, "-c", prog.replace("0.3", "60"), str(tmp_path)],
                              stdout=subprocess.PIPE, text=True)
    holder.stdout.readline()
    holder.kill()
    holder.wait()
    slots = GuestSlots(1, host=HostSlots(tmp_path, 1))
    started = time.monotonic()
    with slots.slot((False, 0)):
        pass
    assert time.monotonic() - started < 5


def test_every_host_slot_held_waits_for_running_guests_and_keeps_new_ones_out(tmp_path):
    """HostSlots.every (a boot again for lockups: the host to itself): it waits
    for the guest running, and no guest of this process or another starts
    until it is left."""
    h = HostSlots(tmp_path, 2)
    events: list[str] = []
    running = threading.Event()

    def guest(name: str, hold: float, started: threading.Event | None = None):
        with h.slot():
            events.append(f"{name} in")
            if started:
                started.set()
            time.sleep(hold)
            events.append(f"{name} out")

    first = threading.Thread(target=guest, args=("first", 0.4, running))
    first.start()
    running.wait()
    with h.every():
        events.append("every in")
        later = threading.Thread(target=guest, args=("later", 0))
        later.start()
        time.sleep(0.5)
        events.append("every out")
    first.join()
    later.join()
    assert events == ["first in", "first out", "every in", "every out", "later in", "later out"]

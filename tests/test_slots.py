"""Guest slots (foliofarm/guest/cells.py GuestSlots): the order in which
waiting guests get the cores, and the slot kept for the farm's own checks
while a page size's kernel is still building."""

from __future__ import annotations

import threading
import time

from foliofarm.guest.cells import GuestSlots


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
    waiting = [take(slots, r, order, 0.0) for r in [(True, -65536), (False, 16384), (False, 4096)]]
    time.sleep(0.1)
    for t in [first, *waiting]:
        t.join(5)
    assert order == [(False, 0), (False, 4096), (False, 16384), (True, -65536)]


def test_a_slot_is_kept_for_own_checks_still_to_come():
    """Two slots; 64K's own checks still to come (its kernel building): a tree
    check may take one slot, never the last, until 64K's own checks are done."""
    slots, order = GuestSlots(2), []
    slots.expect(("7.3+series", "64k"))
    tree = take(slots, (True, -4096, False), order, 0.3)
    time.sleep(0.05)
    second = take(slots, (True, -4096, True), order, 0.0)
    time.sleep(0.2)
    assert order == [(True, -4096, False)]          # the second tree check waits
    own = take(slots, (False, 65536), order, 0.0)    # 64K built: its own checks go
    own.join(5)
    assert order[1] == (False, 65536)
    slots.own_done(("7.3+series", "64k"))
    for t in (tree, second):
        t.join(5)
    assert order[2] == (True, -4096, True)


def test_nothing_kept_once_every_own_check_is_done():
    slots, order = GuestSlots(2), []
    slots.expect("k")
    slots.own_done("k")
    ts = [take(slots, (True, -n), order, 0.2) for n in (1, 2)]
    time.sleep(0.1)
    assert len(order) == 2          # both at once
    for t in ts:
        t.join(5)

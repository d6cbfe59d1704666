"""One way to boot a group of checks (foliofarm/boot/protocol.py): the three
booters share it, the farm's QEMU boots a group through it as run_boots does
(a stand-in guest replaying a recorded console, as tests/test_session.py),
and cancelling a booter ends what it has in flight and boots nothing more."""

import inspect
import subprocess
import threading
import time

from foliofarm.boot.protocol import Booter, QemuBoots, Reports, not_booted
from foliofarm.boot.vng import VngBoots
from foliofarm.lava.remote import LabBoots
from foliofarm.results.schema import BootEntry
from test_session import cells, fake, plan

METHODS = ("open", "describe", "boot", "cancel", "close")


def parameters(f) -> list[str]:
    return [p for p in inspect.signature(f).parameters if p != "self"]


def test_the_three_booters_share_the_protocol():
    for booter in (QemuBoots, VngBoots, LabBoots):
        assert isinstance(booter.name, str) and isinstance(booter.tree_checks, bool), booter
        for m in METHODS:
            assert parameters(getattr(booter, m)) == parameters(getattr(Booter, m)), (booter, m)
    assert {QemuBoots.name, VngBoots.name, LabBoots.name} == {"qemu", "vng", "lava"}
    # only the farm's QEMU boots the tree's checks (the outbox disk, a deadline per test)
    assert [b.tree_checks for b in (QemuBoots, VngBoots, LabBoots)] == [True, False, False]


def split(got):
    boots = [x for x in got if isinstance(x, BootEntry)]
    measured = [x for x in got if isinstance(x, tuple)]
    return boots, measured


def test_the_farms_qemu_boots_a_group_through_the_protocol(tmp_path):
    c = cells()
    ok = fake(tmp_path, "quiet", "ok")
    booter = QemuBoots()
    booter.open(lambda *a: None, "run-1")
    boots, measured = split(list(booter.boot(plan(tmp_path, [(c["xfs"], ok), (c["ext4"], ok)]))))
    assert [(cell.id, m.kind) for cell, _, m in measured] == [("4k-xfs-7.3", "dump"), ("4k-ext4-7.3", "dump")]
    assert len(boots) == 1 and not boots[0].error
    assert booter.live == set()                 # the guest it knew while it ran is gone
    booter.close()


def test_a_cancelled_booter_boots_nothing_and_says_why(tmp_path):
    c = cells()
    ok = fake(tmp_path, "quiet", "ok")
    for booter in (QemuBoots(), VngBoots(tmp_path)):
        booter.cancel("the run was stopped at its limit")
        boots, measured = split(list(booter.boot(plan(tmp_path, [(c["xfs"], ok), (c["ext4"], ok)]))))
        assert [b.error for b in boots] == ["not booted: the run was stopped at its limit"]
        assert [(cell.id, m.kind, m.reason) for cell, _, m in measured] == [
            (cid, "error", "not booted: the run was stopped at its limit") for cid in ("4k-xfs-7.3", "4k-ext4-7.3")]


def test_cancel_ends_the_qemu_guest_in_flight_and_no_boot_follows(tmp_path):
    """A check that would hang for a minute: cancelled once the first check is
    home, the guest ends at once, the hanging check is an error (the farm
    ended it, no verdict on the kernel) and the next is not booted again."""
    c = cells()
    ok, hang = fake(tmp_path, "quiet", "ok"), fake(tmp_path, "hangs", "hang", timeout=60)
    booter = QemuBoots()
    got, t0 = [], time.monotonic()
    for x in booter.boot(plan(tmp_path, [(c["xfs"], ok), (c["xfs"], hang), (c["ext4"], ok)])):
        got.append(x)
        if isinstance(x, tuple) and x[1].name == "quiet" and len(got) == 1:
            threading.Timer(1.0, booter.cancel, args=("the run was stopped",)).start()
    assert time.monotonic() - t0 < 30          # not the hanging check's minute
    boots, measured = split(got)
    kinds = [(cell.id, chk.name, m.kind) for cell, chk, m in measured]
    assert kinds == [("4k-xfs-7.3", "quiet", "dump"), ("4k-xfs-7.3", "hangs", "error"),
                     ("4k-ext4-7.3", "quiet", "error")]
    assert "not booted: the run was stopped" in measured[2][2].reason
    assert [b.attempt for b in boots] == [1, 2] and "not booted" in (boots[1].error or "")
    assert booter.live == set()


def test_cancel_kills_vng_in_flight(tmp_path):
    booter = VngBoots(tmp_path)
    proc = subprocess.Popen(["sleep", "60"], start_new_session=True)
    booter.live.add(proc)
    booter.cancel("the run was stopped")
    assert proc.wait(timeout=10) == -9


def test_not_booted_names_the_group(tmp_path):
    c = cells()
    p = plan(tmp_path, [(c["erofs"], fake(tmp_path, "quiet", "ok"))])
    boot, (cell, chk, m) = list(not_booted(p, "why"))
    assert boot.fs == "erofs" and boot.page_size == "4k" and boot.kernel == "7.3"
    assert (cell.id, chk.name, m.kind, m.reason) == ("4k-erofs-7.3", "quiet", "error", "not booted: why")
    assert not isinstance(boot, Reports)

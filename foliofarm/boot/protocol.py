"""One way to boot a group of checks, whoever boots it (labgrid's protocols:
one interface, several implementations). The run picks a `Booter` at its
start and opens it; measuring hands it each group's `BootPlan` and takes back,
as they arrive, each boot's record (`BootEntry`), each check's measurement
(`Measured`) and what a kernel printed that no check's slice holds
(`Reports`); the run cancels it when it is stopped and closes it at its end.

Three implement it:
- `QemuBoots` (here): the farm's own QEMU, a console per boot spoken over
  pexpect, dumps on the outbox disk, a deadline per check, a fresh boot after
  a hang or a crash (session.py);
- `VngBoots` (vng.py): the cell's guest under virtme-ng;
- `LabBoots` (lava/remote.py): a LAVA lab's jobs, through its REST API.

Only the farm's QEMU boots the tree's checks (the kernel's selftests and
thpmaps need the outbox disk and a deadline per test): `tree_checks` says
whether a booter can, and measuring gives those groups to the QEMU booter
whichever the run picked."""

from __future__ import annotations

import shlex
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterator, Protocol

from foliofarm.boot.console import GuestSession
from foliofarm.boot.qemu import OUTBOX_BYTES
from foliofarm.boot.session import BootPlan, Measured, run_boots
from foliofarm.errors import GuestError
from foliofarm.judge.measurement import error
from foliofarm.matrix import Cell
from foliofarm.results.schema import BootEntry
from foliofarm.util import tmp_dir

Say = Callable[[str, "str | None"], None]
Status = Callable[[str], Any]


@dataclass
class Reports:
    """What the kernel printed on a boot's console (a warning, a lockup, a
    BUG) where no check's slice of it holds the line: the cell's console
    result fails with them."""
    cell: Cell
    lines: list[str]
    when: str            # where in the boot they were printed, as far as the booter knows


Booted = BootEntry | Measured | Reports


class Booter(Protocol):
    """What boots a group of checks for a run."""
    name: str            # what the run's records call it: "qemu", "vng", "lava"
    tree_checks: bool    # whether it boots the tree's checks too (the outbox disk, a deadline per test)

    def open(self, say: Say, run_id: str) -> None:
        """Ready to boot (a guest root made, an artifact server up); ``say``
        tells the run's log, ``run_id`` names the run where the booter's
        records need it (a lab's jobs)."""

    def describe(self) -> str:
        """The booter in a few words, for the run's machine record."""

    def boot(self, plan: BootPlan, status: Status | None = None) -> Iterator[Booted]:
        """Boot ``plan``'s group: every pair measured (an error where it could
        not be), each boot's record, the reports no check holds."""

    def cancel(self, why: str) -> None:
        """The run is stopping: boots in flight ended, none started again;
        their checks are errors saying ``why``."""

    def close(self) -> None:
        """The run has ended: whatever the booter started is stopped."""


def not_booted(plan: BootPlan, why: str) -> Iterator[Booted]:
    """A group the booter would not boot (the run was stopped): its boot's
    record with the reason, and each of its checks an error saying it."""
    cell = plan.pairs[0][0]
    yield BootEntry(page_size=plan.page.name, kernel=plan.kernel, console_log="", attempt=1, taint=0,
                    fs=plan.fs or cell.fs.name, qemu=plan.qemu, error=f"not booted: {why}")
    for c, chk in plan.pairs:
        yield c, chk, error(f"not booted: {why}")


class QemuBoots:
    """The farm's own QEMU: each group's guest with its outbox disk, booted
    again after a check that hangs or crashes it (session.run_boots)."""
    name = "qemu"
    tree_checks = True

    def __init__(self) -> None:
        self.stopped: str | None = None
        self.live: set[GuestSession] = set()
        self.lock = threading.Lock()

    def open(self, say: Say, run_id: str) -> None:
        self.stopped = None             # nothing to start: each boot starts its own QEMU

    def describe(self) -> str:
        return "the farm's QEMU"

    def boot(self, plan: BootPlan, status: Status | None = None) -> Iterator[Booted]:
        if self.stopped is not None:
            yield from not_booted(plan, self.stopped)
            return
        plan = replace(plan, session=self.tracked(plan.session))
        if plan.machine is None:        # a command line of its own (a recorded console's stand-in)
            yield from run_boots(plan, status)
            return
        with tmp_dir("outbox") as tmp:
            outbox = Path(tmp) / "outbox.img"
            with open(outbox, "wb") as f:      # sparse: costs only what the dumps write
                f.truncate(OUTBOX_BYTES)
            argv = replace(plan.machine, outbox=outbox).argv()
            yield from run_boots(replace(plan, argv=argv, qemu=shlex.join(argv), outbox=outbox), status)

    def tracked(self, session: type[GuestSession]) -> type[GuestSession]:
        """``session`` that the booter knows while it runs, and that will not
        start once the run is stopping."""
        booter = self

        class LiveGuest(session):       # type: ignore[valid-type, misc]
            def __enter__(self) -> GuestSession:
                if booter.stopped is not None:
                    raise GuestError(f"not booted: {booter.stopped}")
                g = super().__enter__()
                with booter.lock:
                    booter.live.add(g)
                return g

            def __exit__(self, *exc: object) -> None:
                with booter.lock:
                    booter.live.discard(self)
                super().__exit__(*exc)
        return LiveGuest

    def cancel(self, why: str) -> None:
        self.stopped = why
        with self.lock:
            live = list(self.live)
        for g in live:                  # its check loses the guest: an error, and no boot again
            child = g.child
            if child is not None:
                try:
                    child.terminate(force=True)
                except Exception:       # gone already
                    pass

    def close(self) -> None:
        if self.live:
            self.cancel("the run ended")

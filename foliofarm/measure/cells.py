"""A built kernel and the cells it is measured on: what measuring needs from a
run (Context), what their guests are given (disks, the command line), how many
boot at once (GuestSlots), and the key their saved measurements are kept by."""

from __future__ import annotations

import heapq
import threading
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from foliofarm.boot.protocol import Booter, QemuBoots
from foliofarm.boot.session import check_timeout
from foliofarm.boot.qemu import REPRO, SELFTESTS, SWAP, TCG_CPU, THPMAPS, Machine
from foliofarm.judge.catalogue import Check
from foliofarm.kernel.build import Artifacts
from foliofarm.locks import HostSlots
from foliofarm.matrix import Cell
from foliofarm.results.outcome import Outcome
from foliofarm.results.schema import Role
from foliofarm.results.writer import ResultsWriter
from foliofarm.util import sha256_text

# How cells share boots: part of what a boot's figures depend on (the page
# cache and memory a cell's checks find), so part of the saved measurements' key.
BOOT_LAYOUT = ("per cell a boot for the farm's checks and one for its tree's, a swap disk; split "
               "selftests: page parts in a guest of their own, their tests needing threads at once "
               "in another with a TCG thread per vCPU")


class GuestSlots:
    """Guests at once across a run's page sizes, in two pools: ``n`` for the
    farm's own checks' boots (ranks starting False, seconds each) and
    ``tree`` (default ``n``) for the tree's checks' (ranks starting True,
    minutes each). A free slot goes to the waiting group of lowest rank in
    its pool: the next page size's cells boot as soon as this one's last cell
    leaves a slot, and never ahead of a cell of this one. The own checks never
    wait behind the tree's: their verdict is final in about a minute while the
    tree's checks run on, their guests yielding the cores to the own checks'
    guests while any runs (priority.py)."""

    def __init__(self, n: int, tree: int | None = None, expect: Iterable[str] = (),
                 host: HostSlots | None = None, own_here: bool = True) -> None:
        self.free = {False: max(1, n), True: max(1, tree if tree is not None else n)}
        # the host's slots, shared with every other run on it (locks.HostSlots);
        # not for the own checks' boots when a lab runs them (own_here False)
        self.host = host
        self.own_here = own_here
        self.waiting: dict[bool, list[tuple[Any, ...]]] = {False: [], True: []}
        self.cond = threading.Condition()
        # Page sizes built at once (a series' warm builds), whose boots have yet
        # to be queued: no tree check takes a slot before all are, or the first
        # kernel built would take every tree slot for its own checks, the
        # longest of the others then starting minutes later (the run's tail).
        self.expected = set(expect)

    @staticmethod
    def pool(rank: tuple[Any, ...]) -> bool:
        """True: the tree's checks' pool."""
        return bool(rank) and rank[0] is True

    def queue(self, ranks: Iterable[tuple[Any, ...]], page: str) -> None:
        """Queue every boot of ``page``'s pass at once (each then takes its
        slot with ``slot(rank, queued=True)``)."""
        with self.cond:
            for rank in ranks:
                heapq.heappush(self.waiting[self.pool(rank)], rank)
            self.expected.discard(page)
            self.cond.notify_all()

    def arrived(self, page: str) -> None:
        """``page`` queues no more first boots (it queued them, or has none:
        its build failed, its measurements were reused)."""
        with self.cond:
            self.expected.discard(page)
            self.cond.notify_all()

    @contextmanager
    def slot(self, rank: tuple[Any, ...], queued: bool = False) -> Iterator[None]:
        p = self.pool(rank)
        with self.cond:
            if not queued:
                heapq.heappush(self.waiting[p], rank)
            while self.free[p] == 0 or self.waiting[p][0] != rank or (p and self.expected):
                self.cond.wait()
            heapq.heappop(self.waiting[p])
            self.free[p] -= 1
            self.cond.notify_all()     # the next in line may take another free slot
        try:
            with self.host.slot() if self.host is not None and (p or self.own_here) else nullcontext():
                yield
        finally:
            with self.cond:
                self.free[p] += 1
                self.cond.notify_all()


# The page parts' guest, in place of a filesystem in the boot's name.
BARE = "nofs"
RACE_BOOT = "nofs-race"     # the bare guest of the selftests' race parts, a host thread per vCPU
TOUCHED_BOOT = "nofs-touched"   # and of the tests a series touches, run first (measure/first.py)


@dataclass
class Context:
    """What measuring needs from a run: no more, so it can be driven alone."""
    writer: ResultsWriter
    cache: Path
    checks: list[Check]
    accel: str
    boot_timeout: float
    log: Callable[[str, str | None], None]
    status: Callable[[str], Any]
    tcg_threads: str = "single"   # TCG: the vCPUs in turns on one thread, or each its own
    tcg_cpu: str = TCG_CPU        # TCG: the guests' -cpu
    guests: int = 1          # own-check boots at once, without shared slots (one TCG guest keeps about one core busy)
    cpus: int = 1            # each guest's vCPUs
    memory_mb: int = 2048    # and memory
    numa_nodes: int = 1      # and NUMA nodes
    slots: GuestSlots | None = None   # shared by the page sizes measured at once
    ktap_parser: Path | None = None   # the kernel's KTAP parser (judge/ktap.py), for selftests
    recorded: Callable[[], None] | None = None   # after each outcome is recorded
    first: Any = None        # the touched selftests' milestone (measure/first.py TouchedVerdict)
    booter: Booter = field(default_factory=QemuBoots)   # what boots the farm's own checks (boot/protocol.py)
    qemu: QemuBoots = field(default_factory=QemuBoots)  # and the tree's, where that booter cannot
    quiet: Callable[[], Any] | None = None   # a context: the host to this run's boots alone (Executor.quiet)


@dataclass
class Kernel:
    arts: Artifacts
    initrd: Path
    cells: list[Cell]
    disks: dict[str, Path]
    kernel_xy: str           # "X.Y", for expectations
    side: Role | None        # None: a plain run
    swap: Path | None = None             # the empty image behind each guest's swap disk
    selftests: Path | None = None        # the selftests disk of this tree
    mm_scratch: dict[str, Path] = field(default_factory=dict)   # fs -> the selftests' empty fs
    selftests_error: str | None = None   # why there is none, where a check wanted it
    thpmaps: Path | None = None          # the thpmaps disk of this tree (pyroot.py)
    thpmaps_error: str | None = None
    repro: Path | None = None            # a reproducer's disk (--repro: disks/reproducer.py)
    base: "Kernel | None" = None         # a series' base of the same page size (booted again to confirm)


def wants(checks: list[Check], tree: str) -> bool:
    """A check that runs the tree's ``tree`` ("selftests", "thpmaps") is among
    ``checks``: that disk of the tree is needed."""
    return any(c.tree == tree for c in checks)


def wants_selftests(checks: list[Check]) -> bool:
    return wants(checks, "selftests")


def tree_disk(k: Kernel, chk: Check) -> tuple[bool, str]:
    """Whether the disk of ``k``'s tree that ``chk`` runs from is there, and why not."""
    if chk.tree == "selftests" and k.selftests is None:
        return False, f"the mm selftests of this tree are not there: {k.selftests_error or 'not built'}"
    if chk.tree == "thpmaps" and k.thpmaps is None:
        return False, f"the thpmaps disk of this tree is not there: {k.thpmaps_error or 'not made'}"
    return True, ""


def boot_hugepages(checks: list[Check], page_bytes: int) -> int:
    """How many hugetlb pages of the default size (a PMD's: 2M, 32M, 512M on
    4K, 16K, 64K pages) the boot reserves on its command line for the
    selftests' ``hugetlb_mb``, at least one; 0 without selftests. Reserved at
    boot, as on the machines hugetlb is tested on: a 512M page is a block of
    the buddy allocator's highest order, which memory in use for minutes no
    longer has free (at run time one was reserved in one 64K cell of three;
    at boot, in 5 of 8 boots, and in 8 of 8 without the bounce buffer)."""
    mb = max((int(c.options.get("hugetlb_mb", 0)) for c in checks
              if c.tree == "selftests"), default=0)
    if mb <= 0:
        return 0
    pmd = page_bytes * (page_bytes // 8)
    return max(1, mb * 1024 * 1024 // pmd)


def boot_append(ctx: Context, k: Kernel) -> str:
    """What the boot of ``k``'s cells adds to the kernel command line: the
    selftests' hugetlb pages, where they run."""
    if k.selftests is None or not wants_selftests(ctx.checks):
        return ""
    n = boot_hugepages(ctx.checks, k.cells[0].page.bytes)
    # swiotlb=noforce: the guest's virtio devices bounce nothing, and the
    # 64M bounce buffer would sit in one of the few 512M blocks a 64K
    # guest's boot leaves whole (with it, 5 of 8 boots got the page;
    # without, 8 of 8)
    return f"hugepages={n} swiotlb=noforce" if n else ""


def boot_threads(ctx: Context, at_once: bool) -> str:
    """TCG's threads for a boot (qemu.TCG_THREADS): the run's, but a thread per
    vCPU for the selftests that need their threads at once (``at_once``, the
    race part, split.py): folio_split_race_test spins waiting for its other
    thread, and with the vCPUs in turns it ran past its 300 s deadline in
    every 16K cell, where it takes 64 s with a thread each."""
    return "multi" if at_once else ctx.tcg_threads


def machine(ctx: Context, k: Kernel, cells: list[Cell], outbox: Path | None = None,
            at_once: bool = False) -> Machine:
    """The guest for ``cells`` of ``k`` (none: the page parts' bare guest;
    ``at_once``: its vCPUs a host thread each, and at least two of them
    whatever --cpus says): their disks, and the outbox."""
    disks = {c.fs.name: k.disks[c.fs.name] for c in cells}
    scratch = {f"{c.fs.name}-rw": k.disks[c.fs.name] for c in cells if c.fs.rw_mount_options}
    if k.swap is not None:
        scratch[SWAP] = k.swap
    if k.selftests is not None and wants_selftests(ctx.checks):
        disks[SELFTESTS] = k.selftests
        scratch.update({f"{c.fs.name}-mm": k.mm_scratch[c.fs.name] for c in cells
                        if c.fs.name in k.mm_scratch})
    if k.thpmaps is not None and wants(ctx.checks, "thpmaps"):
        disks[THPMAPS] = k.thpmaps
    if k.repro is not None and any(c.name == "repro" for c in ctx.checks):
        disks[REPRO] = k.repro
    return Machine(kernel=k.arts.image, initrd=k.initrd, disks=disks,
                   scratch=scratch,
                   accel=ctx.accel, tcg_threads=boot_threads(ctx, at_once), tcg_cpu=ctx.tcg_cpu, outbox=outbox,
                   cpus=max(ctx.cpus, 2) if at_once else ctx.cpus, memory_mb=ctx.memory_mb,
                   numa_nodes=ctx.numa_nodes, extra_append=boot_append(ctx, k))


def cpu_key(ctx: Context) -> str:
    """The guests' CPU model in a key: none for the default, so the keys
    measurements were saved under before there was a choice stay theirs."""
    return "" if ctx.tcg_cpu == TCG_CPU else f" cpu {ctx.tcg_cpu}"


def baseline_path(ctx: Context, k: Kernel) -> Path:
    """Where a boot's measurements are kept, keyed by everything that makes them:
    the kernel artifacts, the initramfs (guest programs), the disk images, the
    checks' definitions and the accelerator. Judging is redone from the dumps."""
    defs = [(c.name, c.program, c.args, c.timeout, sorted(c.options.items(), key=str), c.tree)
            for c in ctx.checks]
    key = sha256_text(k.arts.dir.name, k.initrd.name,
                      repr(sorted((c.fs.name, str(k.disks[c.fs.name])) for c in k.cells)),
                      repr(defs), ctx.accel, f"tcg thread={ctx.tcg_threads}", str(ctx.boot_timeout),
                      BOOT_LAYOUT,
                      boot_append(ctx, k),
                      repr((k.selftests.name, sorted(str(p) for p in k.mm_scratch.values())))
                      if k.selftests and wants_selftests(ctx.checks) else "",
                      k.thpmaps.name if k.thpmaps and wants(ctx.checks, "thpmaps") else "",
                      f"{ctx.cpus} cpus {ctx.memory_mb} MB"
                      + (f" {ctx.numa_nodes} nodes" if ctx.numa_nodes > 1 else "")
                      # (the word "runner" is kept: the saved bases' keys stay what they were)
                      + ("" if ctx.booter.name == "qemu" else f" runner {ctx.booter.name}")
                      + cpu_key(ctx))[:20]
    return ctx.cache / "baseline" / f"{k.arts.dir.name[:60]}-{key}.json"


def base_timeouts(ctx: Context, k: Kernel) -> dict[tuple[str, str], float]:
    """Per (fs, check): a deadline from the base run's time for the same cell,
    where this is the series side and the base measured it."""
    if k.side != Role.SERIES:
        return {}
    doc = ctx.writer.results()
    base = doc.sides.base.kernel if doc.sides else None
    out = {}
    for cell in doc.cells:
        if cell.kernel != base or cell.page_size != k.cells[0].page.name:
            continue
        for c in cell.checks:
            secs = c.metrics.get("guest_seconds")
            chk = next((x for x in ctx.checks if x.name == c.name), None)
            if chk is not None and isinstance(secs, (int, float)) and c.outcome != Outcome.ERROR:
                out[(cell.fs, chk.name)] = check_timeout(chk, secs)
    return out

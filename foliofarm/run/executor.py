"""The executor: what carries out a plan's steps. It builds a kernel source for every
page size on one build thread (the next page size builds while this one boots),
makes the disks the cells need (the filesystem images, and from each tree its
selftests and thpmaps disks) and measures each built kernel on its cells
(measure/passes.py; page sizes overlap, --guests cells at once across them)."""

from __future__ import annotations

import shlex
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any, Callable, Iterator

from foliofarm.measure import cells, passes
from foliofarm.boot.protocol import Booter, QemuBoots
from foliofarm.boot.vng import VngBoots
from foliofarm.disks import reproducer
from foliofarm.measure.first import TouchedVerdict
from foliofarm.measure.milestone import Milestones, OwnVerdict
from foliofarm.disks import images, pyroot, rootfs, selftests_disk
from foliofarm import locks, matrix
from foliofarm.run import plan
from foliofarm.report import plots
from foliofarm.errors import BuildError, FarmError
from foliofarm.judge import ktap
from foliofarm.intake import source
from foliofarm.results.judged import result
from foliofarm.kernel.build import Artifacts, Builder
from foliofarm.kernel.kconfig import extra_fragment
from foliofarm.matrix import Cell
from foliofarm.run.plan import Build, RunOptions, Step
from foliofarm.results.schema import KernelEntry, ReproducerRecord, Role
from foliofarm.results.writer import ResultsWriter
from foliofarm.util import no_status, settle
from foliofarm.results.outcome import Outcome

# One page size's build: the artifacts and their initramfs, or what stopped it.
Built = tuple[Artifacts | None, Path | None, FarmError | None]
# A tree's disk (selftests, thpmaps), or why there is none.
TreeDisk = tuple[Path | None, str | None]


class Executor:
    def __init__(self, opts: RunOptions, writer: ResultsWriter, cache: Path,
                 log: Callable[..., None], status: Callable[[str], Any]) -> None:
        self.opts = opts
        self.writer = writer
        self.cache = cache
        self.log = log
        self.status = status
        self.builder = Builder(cache, log=log, jobs=opts.jobs, extra=extra_fragment(cache, opts.extra_config),
                               seconds=opts.build_timeout)
        self.disks: dict[str, Path] = {}
        self.swap: Path | None = None
        self.mm_scratch: dict[str, Path] = {}
        self.repro: Path | None = None          # --repro: the reproducer's disk
        self.kernel_xy = ""     # "X.Y" of the kernel being measured, for expectations
        self.qemu = QemuBoots()     # the farm's QEMU: the tree's checks, and the own ones but for these
        self.booter: Booter = (opts.lab if opts.lab is not None
                               else VngBoots(cache) if opts.boot_with == "vng" else self.qemu)
        self.build_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="build")
        # warm builds (incremental makes, mostly a serial link) run at once
        self.warm_pool = ThreadPoolExecutor(max_workers=len(opts.page_sizes) + 2,
                                            thread_name_prefix="warm-build")
        self.drawn: dict[tuple[str, str], bytes] = {}   # plots drawn as page sizes finish
        # per source tree (by id): its selftests and thpmaps disks, made after its first kernel
        self.selftests: dict[int, Future[TreeDisk]] = {}
        self.thpmaps: dict[int, Future[TreeDisk]] = {}
        self.at_once: set[int] = set()   # sources (by id) whose page sizes build at once (warm)
        self.queued: list[Future[Any]] = []   # every build and disk queued (quiet waits for them)
        self.ktap_parser: Path | None = None
        self.bases: dict[str, cells.Kernel] = {}   # page size -> the base's kernel (confirm.py)
        self.own_verdict = OwnVerdict(writer, opts.checks, [f"{p.name}-{fs.name}" for p in opts.page_sizes
                                                            for fs in opts.filesystems
                                                            if opts.cells is None or f"{p.name}-{fs.name}" in opts.cells],
                                      log)
        self.touched = TouchedVerdict(writer, [p.name for p in opts.page_sizes
                                               if opts.cells is None or any(c.startswith(f"{p.name}-")
                                                                            for c in opts.cells)], log)
        # after each outcome recorded: the milestones that may now be final
        self.recorded = Milestones((self.own_verdict, self.touched))

    def ground(self) -> plan.Ground:
        """What the plan works with."""
        return plan.Ground(writer=self.writer, cache=self.cache, builder=self.builder,
                           page_sizes=self.opts.page_sizes, variant=self.opts.variant,
                           log=self.log, status=self.status, reach=self.opts.selftests != "all")

    def make_disks(self) -> None:
        """The filesystem images of the run's cells, the swap image, and for the
        selftests their scratch filesystems."""
        o = self.opts
        self.disks = {fs.name: images.image(self.cache, fs.name) for fs in o.filesystems}
        self.swap = images.swap_image(self.cache)
        if o.repro is not None:     # its C compiled in the sandbox (refused before anything built)
            loaded = reproducer.load(o.repro, o.repro_seconds)
            self.repro = reproducer.disk(self.cache, loaded)
            self.writer.set_reproducer(ReproducerRecord(name=loaded.name, kind=loaded.kind, digest=loaded.digest,
                                                        args=shlex.split(o.repro_args), seconds=o.repro_seconds))
        if cells.wants_selftests(o.checks):
            self.mm_scratch = {fs.name: img for fs in o.filesystems
                               if (img := images.scratch_image(self.cache, fs.name))}

    def fetch_ktap_parser(self, src: source.KernelSource) -> None:
        """The pinned KTAP parser (judge/ktap.py), from the pinned Debian
        kernel's pristine tree: this run's own where it is that kernel."""
        if not cells.wants_selftests(self.opts.checks):
            return
        pinned = f"debian:{ktap.PARSER_KERNEL}"
        self.ktap_parser = ktap.parser_dir(self.cache, lambda: src.tree if src.spec == pinned
                                           else source.resolve(pinned, self.cache).tree)

    def do(self, step: Step) -> Any:
        """Carry out one step of the plan; the reply the plan is sent."""
        if isinstance(step, Build):
            builds = self.start_builds(step.source)
            if step.free_tree:
                for f in builds:
                    f.exception()       # cache look-ups: the tree must be as it is for them
                self.tree_disks_done(step.source)
            return builds
        return self.measure(step.source, step.role, step.builds)

    def booters(self) -> list[Booter]:
        """What boots the run's checks: its pick, and the farm's QEMU for the tree's checks."""
        return [self.booter] if self.booter is self.qemu else [self.booter, self.qemu]

    def close(self) -> None:
        """Settle every queued build (a plan's tree stays as it is until then)."""
        for pool in (self.build_pool, self.warm_pool):
            pool.shutdown(wait=True, cancel_futures=True)
        self.builder.close()        # the series' build directories go

    # -- one kernel source, every page size ---------------------------------------

    def measure(self, src: source.KernelSource, role: Role | None,
                builds: list[Future[Built]] | None = None) -> bool:
        """Build ``src`` for every page size and measure it on every cell.
        ``builds``: its builds already queued (start_builds)."""
        self.kernel_xy = src.xy
        ok = True
        builds = builds if builds is not None else self.start_builds(src)
        label = plan.label(src, self.opts.variant)
        # Each page size is measured on a thread of its own as soon as it is
        # built; the guest slots (--guests own boots, --tree-guests of the
        # tree's) are shared across them, so the next page size's first cell
        # takes the slot this one's last cell leaves free. The status line is the main thread's alone.
        lab = self.opts.lab          # a LAVA lab boots the own checks: its queue, not this host's
        slots = cells.GuestSlots(lab.queue if lab else self.opts.guests, self.opts.tree_guests or self.opts.guests,
                                 expect=[p.name for p in self.opts.page_sizes] if id(src) in self.at_once
                                 else (), host=self.host_slots(), own_here=lab is None)
        try:
            with ThreadPoolExecutor(max_workers=len(builds), thread_name_prefix="page") as pages:
                measuring, queued = [], set()
                try:
                    for page, fut in zip(self.opts.page_sizes, builds):
                        with (self.status(f"building {label} {page.name} (make Image modules)")
                              if not fut.done() else nullcontext()):
                            built = fut.result()
                        measuring.append(pages.submit(self._page_size, built, src, page, role, slots))
                        queued.add(page.name)
                finally:
                    for page in self.opts.page_sizes:    # stopped early: none of them holds
                        if page.name not in queued:      # the tree's checks back
                            slots.arrived(page.name)
                with self.status(f"measuring {label}"):
                    for f in measuring:
                        ok = f.result() and ok
        finally:
            settle(builds)   # the tree they build must not change under a running one
        return ok

    def start_builds(self, src: source.KernelSource) -> list[Future[Built]]:
        """Queue ``src``'s build for every page size. Cold, on the lab's one
        build thread: the next page size builds while this one boots and runs
        its checks (a TCG guest mostly keeps one core busy, make gets the
        rest), and a series' first build runs while its warm base is judged.
        Warm (every page size's build directory holds a finished build: a
        series' incremental makes, mostly a serial link each), all at once, so
        the last page size's kernel, and the farm's own verdict, come sooner.
        The tree must stay as it is until the builds are settled (util.settle)."""
        v = self.opts.variant
        warm = all(self.builder.is_warm(src, page, v) for page in self.opts.page_sizes)
        pool = self.warm_pool if warm else self.build_pool
        if warm:
            self.at_once.add(id(src))
        futures = []
        for i, page in enumerate(self.opts.page_sizes):
            futures.append(pool.submit(self._build, src, page))
            if i == 0 and cells.wants(self.opts.checks, "thpmaps"):
                self.thpmaps[id(src)] = pool.submit(self._thpmaps_disk, src)
            if i == 0 and cells.wants_selftests(self.opts.checks):
                # after the first kernel: its cells boot as soon as both are there
                self.selftests[id(src)] = pool.submit(self._selftests_disk, src)
        self.queued = [f for f in self.queued if not f.done()] + futures + [
            made[id(src)] for made in (self.thpmaps, self.selftests) if id(src) in made]
        return futures

    @contextmanager
    def quiet(self) -> Iterator[None]:
        """The host to this run's next boots alone, for lockups that must be
        the kernel's (measure/confirm.py): the builds and disks it queued
        finished (make's jobs would starve the guests as they did the first
        boot), then every guest slot of the host held: no guest of this run or
        another starts until it is left, those running end first."""
        if pending := [f for f in self.queued if not f.done()]:
            self.log(f"waiting for {len(pending)} build(s) to end: a boot again for lockups has the host to itself")
            wait(pending)
        with self.host_slots().every():
            yield

    def host_slots(self) -> locks.HostSlots:
        """The host's guest slots, shared by every run on this cache."""
        return locks.HostSlots(self.cache, locks.host_guests(self.opts.memory_mb))

    def tree_disks_done(self, src: source.KernelSource) -> None:
        """Wait for the disks made from ``src``'s tree (its selftests, thpmaps)."""
        for made in (self.thpmaps, self.selftests):
            if id(src) in made:
                made[id(src)].exception()

    def _thpmaps_disk(self, src: source.KernelSource) -> TreeDisk:
        """Debian's Python and ``src``'s tools/mm/thpmaps on their disk (build
        thread); or None and why not: the other checks run all the same."""
        try:
            return pyroot.image(self.cache, src), None
        except FarmError as exc:
            self.log(f"thpmaps disk of {plan.label(src, self.opts.variant)}: {exc}", "red")
            return None, str(exc)

    def _selftests_disk(self, src: source.KernelSource) -> TreeDisk:
        """The mm selftests of ``src`` built and put on their disk (build
        thread); or None and why not: the other checks run all the same."""
        try:
            st = selftests_disk.build(self.cache, src, self.builder.jobs, log=self.log)
            return selftests_disk.image(self.cache, st, rootfs.bash(self.cache)), None
        except FarmError as exc:
            self.log(f"mm selftests of {plan.label(src, self.opts.variant)}: {exc}", "red")
            return None, str(exc)

    def _build(self, src: source.KernelSource, page: matrix.PageSize) -> Built:
        """Build one kernel and its initramfs (in the build thread: no writer, no status)."""
        try:
            arts = self.builder.build(src, page, self.opts.variant)
            return arts, rootfs.initramfs(self.cache, arts), None
        except FarmError as exc:
            return None, None, exc

    def _page_size(self, built: Built, src: source.KernelSource, page: matrix.PageSize,
                   role: Role | None, slots: cells.GuestSlots | None = None) -> bool:
        try:
            return self._measure_page(built, src, page, role, slots)
        finally:
            if slots is not None:
                slots.arrived(page.name)   # whatever it queued: the tree's checks may start

    def _measure_page(self, built: Built, src: source.KernelSource, page: matrix.PageSize,
                      role: Role | None, slots: cells.GuestSlots | None) -> bool:
        w = self.writer
        label = plan.label(src, self.opts.variant)
        mine = [Cell(page, fs, label) for fs in self.opts.filesystems
                 if self.opts.cells is None or f"{page.name}-{fs.name}" in self.opts.cells]
        arts, initrd, exc = built
        if isinstance(exc, BuildError):
            w.add_kernel(KernelEntry(page_size=page.name, kernel=label, side=role, build_failed=True,
                                     error=str(exc)))
            self._error_cells(mine, f"build failed: {exc}")
            return role == Role.SERIES   # a series that breaks the build is a verdict, not an incomplete run
        if exc is not None or arts is None or initrd is None:
            self._error_cells(mine, f"build failed: {exc}")
            return False
        meta = arts.meta()
        extra = {"extra_config": list(self.opts.extra_config)} if self.opts.extra_config else {}
        w.add_kernel(KernelEntry(page_size=page.name, kernel=label, side=role, **extra,
                                 artifacts=str(arts.dir), built_now=arts.built,
                                 build_seconds=meta.get("seconds"), reproduce=meta.get("reproduce"),
                                 absent_optional=meta.get("absent_optional", [])))
        self.log(f"kernel {label} {page.name}: {'built' if arts.built else 'cached'} {arts.dir.name}")
        k = cells.Kernel(arts=arts, initrd=initrd, cells=mine, disks=self.disks,
                           kernel_xy=self.kernel_xy, side=role, swap=self.swap,
                           mm_scratch=self.mm_scratch, repro=self.repro)
        if id(src) in self.selftests:
            k.selftests, k.selftests_error = self.selftests[id(src)].result()
        if id(src) in self.thpmaps:
            k.thpmaps, k.thpmaps_error = self.thpmaps[id(src)].result()
        if role == Role.BASE:
            self.bases[page.name] = k
        elif role == Role.SERIES:
            k.base = self.bases.get(page.name)
        ok = passes.measure_kernel(self.context(slots), k,
                                    reuse_base=role != Role.SERIES and not self.opts.fresh,
                                    want_noise=(role == Role.BASE and self.opts.two_sided)
                                    or (role is None and self.opts.noise))
        if role != Role.BASE:
            self._draw(page)
        return ok

    def _draw(self, page: matrix.PageSize) -> None:
        """This page size's plots, while the next one is measured (its cells
        are final: both sides of a series run are measured)."""
        part = plots.page_part(self.writer.results(), page.name)
        try:
            self.drawn.update(plots.draw(part, {page.name}))
        except Exception as exc:   # the report at the end draws them again, or says why not
            self.log(f"plots of {page.name} not drawn now: {exc}", "yellow")

    def context(self, slots: cells.GuestSlots | None = None) -> cells.Context:
        """What measuring needs; with ``slots`` it runs on a page size's thread,
        which shares the guests and shows no status line of its own."""
        o = self.opts
        return cells.Context(writer=self.writer, cache=self.cache, checks=o.checks,
                               accel=o.accel, tcg_threads=o.tcg_threads, tcg_cpu=o.tcg_cpu,
                               boot_timeout=o.boot_timeout,
                               log=self.log, status=self.status if slots is None else no_status,
                               guests=o.guests, cpus=o.cpus, memory_mb=o.memory_mb,
                               numa_nodes=o.numa_nodes, slots=slots, ktap_parser=self.ktap_parser,
                               recorded=self.recorded, first=self.touched, booter=self.booter,
                               qemu=self.qemu, quiet=self.quiet)

    def _error_cells(self, of: list[Cell], message: str) -> None:
        for cell in of:
            for chk in self.opts.checks:
                self.writer.record(cell, result(chk.name, Outcome.ERROR, message))
        self.log(message, "red")

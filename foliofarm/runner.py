"""A run: resolve the kernel and the disk images, let the plan say which sides
to measure (plan.py), build each side for every page size (the next page size
builds while this one boots) and measure it on its cells (measure.py; page
sizes overlap, --guests cells at once across them), then print and report."""

from __future__ import annotations

import time

from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from foliofarm import (hosttools, images, matrix, measure, plan, pyroot, report, repro, rootfs, selftests, series,
                       summary)
from foliofarm.intake import source
from foliofarm.kernel.build import Artifacts, Builder, extra_fragment
from foliofarm.errors import BuildError, FarmError, UsageError
from foliofarm.guest import ktap
from foliofarm.guest.qemu import QEMU
from foliofarm.judge.checks import Check, Outcome
from foliofarm.matrix import Cell
from foliofarm.paths import cache_dir
from foliofarm.results import ResultsWriter
from foliofarm.util import clean_stale_tmp, settle


def no_status(message: str) -> nullcontext[None]:
    """The status line of a page size's thread: none (the main thread has it)."""
    return nullcontext()


# One page size's build: the artifacts and their initramfs, or what stopped it.
Built = tuple[Artifacts | None, Path | None, FarmError | None]


@dataclass
class RunOptions:
    kernel: str
    page_sizes: list[matrix.PageSize]
    filesystems: list[matrix.Filesystem]
    checks: list[Check]
    results: Path
    variant: str = "default"
    series: str | None = None        # an mbox, a patch directory or BASE..TIP
    compare: str | None = None       # a second kernel, run and judged against --kernel
    each_commit: bool = False
    strict_style: bool = False
    fresh: bool = False              # boot and measure again even if the measurements are cached
    accel: str = "auto"
    boot_timeout: float = 300
    guests: int = 1                  # cells booted at once
    cells: set[str] | None = None    # --cells: "page-fs" names; None: every page x fs
    jobs: int | None = None          # make -j (default: the host's cores)
    cpus: int = 1                    # guest vCPUs
    memory_mb: int = 2048            # guest memory
    numa_nodes: int = 1              # guest NUMA nodes
    extra_config: list[str] = field(default_factory=list)   # -K CONFIG_FOO=y
    dry_run: bool = False
    command: list[str] = field(default_factory=list)


class Run:
    def __init__(self, opts: RunOptions, console: Console | None = None) -> None:
        self.opts = opts
        self.ui = console or Console(stderr=True)
        self.status = self.ui.status
        self.cache = cache_dir()
        self.page_sizes = opts.page_sizes
        self.variant = opts.variant
        self.writer: ResultsWriter       # set by execute()
        self.builder: Builder
        self.disks: dict[str, Path] = {}
        self.swap: Path | None = None
        self.mm_scratch: dict[str, Path] = {}
        self.kernel_xy = ""     # "X.Y" of the kernel being measured, for expectations
        self.build_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="build")
        self.drawn: dict[tuple[str, str], bytes] = {}   # plots drawn as page sizes finish
        # per source tree (by id): its selftests disk, built after its first kernel
        self.selftests: dict[int, tuple[source.KernelSource, Future[tuple[Path | None, str | None]]]] = {}
        self.thpmaps: dict[int, Future[tuple[Path | None, str | None]]] = {}   # and its thpmaps disk
        self.ktap_parser: Path | None = None

    def log(self, msg: str, style: str | None = None) -> None:
        """Log plain text: kernel and compiler messages are full of [brackets]
        that must not be read as markup."""
        self.ui.log(Text(msg, style=style or ""))

    def execute(self) -> int:
        o = self.opts
        hosttools.require("aarch64-linux-gnu-gcc", QEMU, "dpkg-deb", "git")
        clean_stale_tmp()
        self.writer = w = ResultsWriter(o.results, o.command, strict_style=o.strict_style)
        w.doc["machine"] = hosttools.machine()
        w.doc["machine"]["guest"] = (f"{o.cpus} vCPU(s), {o.memory_mb} MB, {o.numa_nodes} NUMA "
                                     f"node(s), accel {o.accel}")
        self.log(f"results in {w.dir}")
        complete = True
        usage = False
        try:
            with self.ui.status(f"preparing kernel source {o.kernel}"):
                src = source.resolve(o.kernel, self.cache)
            self.log(f"kernel {src.spec}: {src.origin} ({src.tree})")
            t0 = time.monotonic()
            with self.ui.status("making disk images"):
                disks = {fs.name: images.image(self.cache, fs.name) for fs in o.filesystems}
                self.swap = images.swap_image(self.cache)
                if measure.wants_selftests(o.checks):
                    self.mm_scratch = {fs.name: img for fs in o.filesystems
                                       if (img := images.scratch_image(self.cache, fs.name))}
            w.doc.setdefault("stages", {})["images_s"] = round(time.monotonic() - t0, 2)
            self.builder = Builder(self.cache, log=self.log, jobs=o.jobs,
                                   extra=extra_fragment(self.cache, o.extra_config))
            if measure.wants_selftests(o.checks):
                with self.ui.status("the KTAP parser"):
                    self.ktap_parser = self._ktap_parser(src)
            self.disks = disks
            if o.compare is not None:
                complete = plan.compare(self, src, o.compare, o.kernel)
            elif o.series is not None:
                complete = plan.with_series(self, src, o.series, o.each_commit)
            else:
                with source.checked_out(src, self.cache, self.log) as tree:
                    complete = self.measure(tree, side=None)
        except UsageError as exc:
            w.add("errors", {"stage": "input", "message": str(exc)})
            self.ui.print(Text("error: ", style="red") + Text(str(exc)))
            complete, usage = False, True
        except FarmError as exc:
            w.add("errors", {"stage": "setup", "message": str(exc)})
            self.ui.print(Text("error: ", style="red") + Text(str(exc)))
            complete = False
        finally:
            self.build_pool.shutdown(wait=True, cancel_futures=True)
        code = w.finish(complete)
        try:
            repro.write(w.dir, w.doc, o)
        except OSError as exc:
            self.log(f"repro.sh not written: {exc}", "red")
        if w.doc["cells"]:
            summary.print_table(w.doc, [c.name for c in o.checks])
        if w.doc.get("verdicts"):
            summary.print_verdicts(w.doc)
        try:
            t0 = time.monotonic()
            paths = report.write(w.dir, w.doc, self.drawn)
            w.doc.setdefault("stages", {})["report_s"] = round(time.monotonic() - t0, 2)
            w.flush(final=True)
            self.log(f"report: {paths[0]} and {paths[1]}")
        except Exception as exc:   # a report that fails to render must not hide the results
            self.log(f"report not written: {exc}", "red")
        if usage:
            code = 2
        self.log(f"results: {w.dir / 'results.json'} (exit {code})")
        return code

    def dry_run(self) -> int:
        """What the run would do, from what is cached now; nothing is fetched,
        built, booted or written."""
        o = self.opts
        say = self.ui.print
        sides = [("base", o.kernel), ("series", f"{o.kernel} + {o.series}")] if o.series else \
            [("base", o.kernel), ("series", o.compare)] if o.compare else [("", o.kernel)]
        tree = None
        if o.kernel.startswith("debian:"):
            pkg = f"linux-source-{o.kernel.split(':', 1)[1]}"
            found = sorted((self.cache / "src").glob(f"{pkg}_*/linux")) if (self.cache / "src").is_dir() else []
            if found:
                tree = source.KernelSource(spec=o.kernel, tree=found[-1],
                                           version=source.makefile_version(found[-1]), origin=pkg)
            say(f"kernel {o.kernel}: " + (f"source cached at {found[-1]}" if found else f"would fetch {pkg}"))
        else:
            tree = source.resolve(o.kernel, self.cache)
            say(f"kernel {o.kernel}: {tree.origin}")
        builder = Builder(self.cache, jobs=o.jobs, extra=extra_fragment(self.cache, o.extra_config))
        cells = [f"{p.name}-{f.name}" for p in o.page_sizes for f in o.filesystems
                 if o.cells is None or f"{p.name}-{f.name}" in o.cells]
        if o.series:
            for line in series.describe_read(series.load(o.series, None if tree is None or
                                                         o.kernel.startswith("debian:") else tree.tree)):
                say(line, markup=False, highlight=False)
        base_built = {}
        for page in o.page_sizes:
            base_built[page.name] = bool(tree is not None and tree.versioned and not tree.ref
                                         and builder.is_cached(tree, page, o.variant))
        for side, what in sides:
            for page in o.page_sizes:
                n = sum(c.startswith(f"{page.name}-") for c in cells)
                if side == "series" and o.series:
                    build = ("would build base + series over the base's build directory (only what "
                             "the series touches recompiles)" if base_built[page.name]
                             else "would build base + series after the base")
                elif side == "series":
                    build = "would build, or cached"
                elif base_built[page.name]:
                    build = "already built (cached)"
                else:
                    build = "would build"
                say(f"{side or 'run'} {what} {page.name}: kernel {build}; {n} cell(s), one boot each"
                    + (" (saved clean measurements reused unless --fresh)" if side != "series" else ""))
        say(f"cells: {', '.join(cells)}")
        say(f"checks: {', '.join(c.name for c in o.checks)}; {o.guests} guest(s) at a time, "
            f"{o.cpus} vCPU(s), {o.memory_mb} MB and {o.numa_nodes} NUMA node(s) each, make -j{builder.jobs}"
            + (f", extra config {' '.join(o.extra_config)}" if o.extra_config else ""))
        if o.series or o.compare:
            say("the base is booted twice for the noise of each figure unless a second clean "
                "boot is saved; the series side boots again for figures that moved")
        return 0

    # -- one kernel, every page size ----------------------------------------------

    def measure(self, src: source.KernelSource, side: str | None,
                builds: list[Future[Built]] | None = None) -> bool:
        """Build ``src`` for every page size and measure it on every cell.
        ``builds``: its builds already queued (start_builds)."""
        self.kernel_xy = src.xy
        ok = True
        builds = builds if builds is not None else self.start_builds(src)
        label = plan.label(src, self.variant)
        # Each page size is measured on a thread of its own as soon as it is
        # built; the guest slots keep to --guests at once across them, so the
        # next page size's first cell takes the core this one's last cell
        # leaves free. The status line is the main thread's alone.
        slots = measure.GuestSlots(self.opts.guests)
        try:
            with ThreadPoolExecutor(max_workers=len(builds), thread_name_prefix="page") as pages:
                measuring = []
                for page, fut in zip(self.opts.page_sizes, builds):
                    with (self.ui.status(f"building {label} {page.name} (make Image modules)")
                          if not fut.done() else nullcontext()):
                        built = fut.result()
                    measuring.append(pages.submit(self._page_size, built, src, page, side, slots))
                with self.ui.status(f"measuring {label}"):
                    for f in measuring:
                        ok = f.result() and ok
        finally:
            settle(builds)   # the tree they build must not change under a running one
        return ok

    def start_builds(self, src: source.KernelSource) -> list[Future[Built]]:
        """Queue ``src``'s build for every page size on the run's one build
        thread: the next page size builds while this one boots and runs its
        checks (a TCG guest mostly keeps one core busy, make gets the rest),
        and a series' first build runs while its warm base is judged. The tree
        must stay as it is until the builds are settled (util.settle)."""
        futures = []
        for i, page in enumerate(self.opts.page_sizes):
            futures.append(self.build_pool.submit(self._build, src, page))
            if i == 0 and measure.wants(self.opts.checks, "thpmaps"):
                self.thpmaps[id(src)] = self.build_pool.submit(self._thpmaps_disk, src)
            if i == 0 and measure.wants_selftests(self.opts.checks):
                # after the first kernel: its cells boot as soon as both are there
                self.selftests[id(src)] = (src, self.build_pool.submit(self._selftests_disk, src))
        return futures

    def _thpmaps_disk(self, src: source.KernelSource) -> tuple[Path | None, str | None]:
        """Debian's Python and ``src``'s tools/mm/thpmaps on their disk (build
        thread); or None and why not: the other checks run all the same."""
        try:
            return pyroot.image(self.cache, src), None
        except FarmError as exc:
            self.log(f"thpmaps disk of {plan.label(src, self.variant)}: {exc}", "red")
            return None, str(exc)

    def _selftests_disk(self, src: source.KernelSource) -> tuple[Path | None, str | None]:
        """The mm selftests of ``src`` built and put on their disk (build
        thread); or None and why not: the other checks run all the same."""
        try:
            st = selftests.build(self.cache, src, self.builder.jobs, log=self.log)
            return selftests.image(self.cache, st, rootfs.bash(self.cache)), None
        except FarmError as exc:
            self.log(f"mm selftests of {plan.label(src, self.variant)}: {exc}", "red")
            return None, str(exc)

    def _ktap_parser(self, src: source.KernelSource) -> Path:
        """The pinned KTAP parser (guest/ktap.py), from the pinned Debian
        kernel's pristine tree: this run's own where it is that kernel."""
        pinned = f"debian:{ktap.PARSER_KERNEL}"
        return ktap.parser_dir(self.cache, lambda: src.tree if src.spec == pinned
                               else source.resolve(pinned, self.cache).tree)

    def tree_disks_done(self, src: source.KernelSource) -> None:
        """Wait for the disks made from ``src``'s tree (its selftests, thpmaps)."""
        if id(src) in self.thpmaps:
            self.thpmaps[id(src)].exception()
        if id(src) in self.selftests:
            self.selftests[id(src)][1].exception()

    def base_is_built(self, src: source.KernelSource) -> bool:
        """Every page size of ``src`` is in the artifact cache: building it runs no make."""
        return all(self.builder.is_cached(src, page, self.variant) for page in self.opts.page_sizes)

    def _build(self, src: source.KernelSource, page: matrix.PageSize) -> Built:
        """Build one kernel and its initramfs (in the build thread: no writer, no status)."""
        try:
            arts = self.builder.build(src, page, self.opts.variant)
            return arts, rootfs.initramfs(self.cache, arts), None
        except FarmError as exc:
            return None, None, exc

    def _page_size(self, built: Built, src: source.KernelSource, page: matrix.PageSize,
                   side: str | None, slots: measure.GuestSlots | None = None) -> bool:
        w = self.writer
        label = plan.label(src, self.variant)
        cells = [Cell(page, fs, label) for fs in self.opts.filesystems
                 if self.opts.cells is None or f"{page.name}-{fs.name}" in self.opts.cells]
        entry: dict[str, Any] = {"page_size": page.name, "kernel": label, "side": side}
        arts, initrd, exc = built
        if isinstance(exc, BuildError):
            entry.update(build_failed=True, error=str(exc))
            w.add("kernels", entry)
            if self.opts.each_commit and side == "series":
                plan.tip_built(w, page, str(exc))
            self._error_cells(cells, f"build failed: {exc}")
            return side == "series"   # a series that breaks the build is a verdict, not an incomplete run
        if exc is not None or arts is None or initrd is None:
            self._error_cells(cells, f"build failed: {exc}")
            return False
        meta = arts.meta()
        if self.opts.extra_config:
            entry["extra_config"] = list(self.opts.extra_config)
        entry.update(artifacts=str(arts.dir), built_now=arts.built,
                     build_seconds=meta.get("seconds"), reproduce=meta.get("reproduce"),
                     absent_optional=meta.get("absent_optional", []))
        w.add("kernels", entry)
        if self.opts.each_commit and side == "series":
            plan.tip_built(w, page, None)
        self.log(f"kernel {label} {page.name}: {'built' if arts.built else 'cached'} {arts.dir.name}")
        k = measure.Kernel(arts=arts, initrd=initrd, cells=cells, disks=self.disks,
                           kernel_xy=self.kernel_xy, side=side, swap=self.swap,
                           mm_scratch=self.mm_scratch)
        if id(src) in self.selftests:
            k.selftests, k.selftests_error = self.selftests[id(src)][1].result()
        if id(src) in self.thpmaps:
            k.thpmaps, k.thpmaps_error = self.thpmaps[id(src)].result()
        two_sided = self.opts.series is not None or self.opts.compare is not None
        ok = measure.measure_kernel(self._context(slots), k,
                                    reuse_base=side != "series" and not self.opts.fresh,
                                    want_noise=side == "base" and two_sided)
        if side != "base":
            self._draw(page)
        return ok

    def _draw(self, page: matrix.PageSize) -> None:
        """This page size's plots, while the next one is measured (its cells
        are final: both sides of a series run are measured)."""
        with self.writer.lock:
            part = report.page_part(self.writer.doc, page.name)
        try:
            self.drawn.update(report.plots(part, {page.name}))
        except Exception as exc:   # the report at the end draws them again, or says why not
            self.log(f"plots of {page.name} not drawn now: {exc}", "yellow")

    def _context(self, slots: measure.GuestSlots | None = None) -> measure.Context:
        """What measuring needs; with ``slots`` it runs on a page size's thread,
        which shares the guests and shows no status line of its own."""
        return measure.Context(writer=self.writer, cache=self.cache, checks=self.opts.checks,
                               accel=self.opts.accel, boot_timeout=self.opts.boot_timeout,
                               log=self.log, status=self.ui.status if slots is None else no_status,
                               guests=self.opts.guests, cpus=self.opts.cpus,
                               memory_mb=self.opts.memory_mb, numa_nodes=self.opts.numa_nodes,
                               slots=slots,
                               ktap_parser=self.ktap_parser)

    def _error_cells(self, cells: list[Cell], message: str) -> None:
        for cell in cells:
            for chk in self.opts.checks:
                self.writer.record(cell, Outcome(chk.name, "error", message))
        self.log(message, "red")

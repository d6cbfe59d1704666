"""`foliofarm shell CELL`: one cell's guest for a person. The cell's kernel (the
base, or base+series with --series) is built or taken from the cache, and
booted with its filesystem's disk image and the guest programs and probe
module the checks use; the console is the terminal's, until the shell exits."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from foliofarm import hosttools, locks, matrix
from foliofarm.disks import images, rootfs
from foliofarm.boot import vng
from foliofarm.intake import apply, series, source
from foliofarm.kernel.build import Artifacts, Builder
from foliofarm.kernel.kconfig import extra_fragment
from foliofarm.errors import UsageError
from foliofarm.boot.qemu import QEMU, Machine
from foliofarm.paths import cache_dir


@dataclass
class ShellOptions:
    cell: str                    # "4k-xfs", or a cell id "4k-xfs-7.3+series"
    kernel: str = "debian:7.3"
    series: str | None = None
    variant: str = "default"
    extra_config: list[str] = field(default_factory=list)
    accel: str = "auto"
    tcg_threads: str = "single"
    cpus: int = 1
    memory_mb: int = 2048
    numa_nodes: int = 1
    vng: bool = False             # under virtme-ng (boot/vng.py), not the farm's own QEMU
    exec_cmd: str | None = None   # vng: one command, its output and exit status
    rwdirs: list[str] = field(default_factory=list)   # vng --rwdir
    verbose: bool = False         # vng: the kernel's console too


def parse_cell(name: str) -> tuple[matrix.PageSize, matrix.Filesystem, bool]:
    """(page size, filesystem, whether the cell is a series side) of a cell
    name: `4k-xfs` or a results cell id such as `4k-xfs-7.3+series`."""
    parts = name.split("-")
    pages, fss = matrix.page_sizes(), matrix.filesystems()
    if len(parts) < 2 or parts[0] not in pages or parts[1] not in fss:
        cells = ", ".join(f"{p}-{f}" for p in pages for f in fss)
        raise UsageError(f"no cell {name!r}; cells: {cells} (or a cell id from results, "
                         "such as 4k-xfs-7.3+series)")
    return pages[parts[0]], fss[parts[1]], name.endswith("+series")


def _build(opts: ShellOptions, cache: Path, src: source.KernelSource, builder: Builder,
           page: matrix.PageSize, log) -> Artifacts:
    """The cell's kernel: the base's, or base+series (applied as a series run applies it)."""
    if opts.series and src.spec.startswith("debian:"):
        ser = series.load(opts.series)
        with apply.applied(src, ser, cache=cache) as ap:
            return builder.build(ap.source, page, opts.variant)
    if opts.series:
        # as a series run does: applied in a worktree in the cache, never the checkout
        ser = series.load(opts.series, src.tree)
        with locks.tree(cache, source.worktree_dir(src, cache), exclusive=True, log=log):
            wt = source.worktree(src, cache, ser.base_rev or src.ref or "HEAD")
            with apply.applied(wt, ser) as ap:
                return builder.build(ap.source, page, opts.variant)
    with source.checked_out(src, cache, log) as tree:
        return builder.build(tree, page, opts.variant)


def machine(opts: ShellOptions, log=print) -> Machine:
    """Build (or find) the cell's kernel and initramfs, and its disk image."""
    page, fs, series_side = parse_cell(opts.cell)
    if series_side and not opts.series:
        raise UsageError(f"{opts.cell} is a series cell: give the series with --series")
    hosttools.require("aarch64-linux-gnu-gcc", QEMU, "dpkg-deb", "git")
    cache = cache_dir()
    src = source.resolve(opts.kernel, cache)
    builder = Builder(cache, log=log, extra=extra_fragment(cache, opts.extra_config))
    try:
        arts = _build(opts, cache, src, builder, page, log)
    finally:
        builder.close()          # a series' copy of the base's build directory goes
    initrd = rootfs.initramfs(cache, arts)
    disk = images.image(cache, fs.name)
    return Machine(kernel=arts.image, initrd=initrd, disks={fs.name: disk},
                   scratch={f"{fs.name}-rw": disk} if fs.rw_mount_options else {},
                   accel=opts.accel, tcg_threads=opts.tcg_threads, cpus=opts.cpus,
                   memory_mb=opts.memory_mb, numa_nodes=opts.numa_nodes,
                   extra_append="foliofarm.shell=1", interactive=True)


def main(opts: ShellOptions) -> int:
    if not opts.vng and (opts.exec_cmd is not None or opts.rwdirs or opts.verbose):
        raise UsageError("-e, --rwdir and --verbose are virtme-ng's: add --vng (the farm's own "
                         "shell is interactive, its console the terminal's)")
    if opts.vng:
        vng.vng_command()       # installed, or say how, before anything builds
    mach = machine(opts, log=lambda m: print(m, file=sys.stderr))
    if opts.vng:
        root = vng.guest_root(cache_dir())
        argv = vng.argv(mach, root, mach.kernel.parent, opts.exec_cmd, opts.rwdirs, opts.verbose)
        if opts.exec_cmd is not None:
            return vng.run_command(argv)
        print(f"foliofarm shell {opts.cell} --vng: {mach.kernel.parent.name}; exit or Ctrl-D "
              "leaves", file=sys.stderr)
        return subprocess.run(argv, check=False, env=vng.environment()).returncode
    print(f"foliofarm shell {opts.cell}: {mach.kernel.parent.name}; Ctrl-A X quits QEMU",
          file=sys.stderr)
    return subprocess.run(mach.argv(), check=False).returncode

"""`foliofarm shell CELL`: one cell's guest for a person. The cell's kernel (the
base, or base+series with --series) is built or taken from the cache, and
booted with its filesystem's disk image and the guest programs and probe
module the checks use; the console is the terminal's, until the shell exits.

With ``-e CMD`` the guest boots as the checks' guests do and its shell runs
CMD once (``FF_MNT``, ``FF_DEV`` and ``FF_FS`` name the cell's filesystem as
for a reproducer): CMD's output, what the kernel reported while it ran (on
stderr), and CMD's exit status as the command's. With ``--repro FILE`` the
reproducer's disk is attached (mounted at /mnt/ffrepro; C compiled in the
sandbox as for `run --repro`) and run once before the shell is handed over,
or with ``-e``, before CMD."""

from __future__ import annotations

import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from foliofarm import hosttools, locks, matrix
from foliofarm.disks import images, reproducer, rootfs
from foliofarm.boot import vng
from foliofarm.intake import apply, series, source
from foliofarm.kernel.build import Artifacts, Builder
from foliofarm.kernel.kconfig import extra_fragment
from foliofarm.errors import GuestError, UsageError
from foliofarm.boot.console import GuestSession
from foliofarm.boot.qemu import QEMU, REPRO, Machine
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
    exec_cmd: str | None = None   # one command, its output and exit status
    repro: Path | None = None     # a reproducer, attached and run once (disks/reproducer.py)
    repro_args: str = ""
    timeout: float = 600          # -e: CMD's deadline (and the reproducer's)
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
    disks = {fs.name: disk}
    if opts.repro is not None:
        disks[REPRO] = reproducer.disk(cache, reproducer.load(opts.repro))
    return Machine(kernel=arts.image, initrd=initrd, disks=disks,
                   scratch={f"{fs.name}-rw": disk} if fs.rw_mount_options else {},
                   accel=opts.accel, tcg_threads=opts.tcg_threads, cpus=opts.cpus,
                   memory_mb=opts.memory_mb, numa_nodes=opts.numa_nodes,
                   extra_append="foliofarm.shell=1", interactive=True)


def main(opts: ShellOptions) -> int:
    if not opts.vng and (opts.rwdirs or opts.verbose):
        raise UsageError("--rwdir and --verbose are virtme-ng's: add --vng")
    if opts.repro_args and opts.repro is None:
        raise UsageError("--repro-args are a reproducer's: give --repro FILE")
    if opts.vng and opts.repro is not None:
        raise UsageError("--repro boots the farm's own QEMU guest: leave out --vng")
    if opts.vng:
        vng.vng_command()       # installed, or say how, before anything builds
    if opts.repro is not None:  # C that does not compile: its lines, before anything builds
        reproducer.disk(cache_dir(), reproducer.load(opts.repro))
    mach = machine(opts, log=lambda m: print(m, file=sys.stderr))
    if opts.vng:
        root = vng.guest_root(cache_dir())
        argv = vng.argv(mach, root, mach.kernel.parent, opts.exec_cmd, opts.rwdirs, opts.verbose)
        if opts.exec_cmd is not None:
            return vng.run_command(argv)
        print(f"foliofarm shell {opts.cell} --vng: {mach.kernel.parent.name}; exit or Ctrl-D "
              "leaves", file=sys.stderr)
        return subprocess.run(argv, check=False, env=vng.environment()).returncode
    if opts.exec_cmd is not None or opts.repro is not None:
        return run_command(opts, mach)
    print(f"foliofarm shell {opts.cell}: {mach.kernel.parent.name}; Ctrl-A X quits QEMU",
          file=sys.stderr)
    return subprocess.run(mach.argv(), check=False).returncode


def run_command(opts: ShellOptions, mach: Machine) -> int:
    """-e CMD, or --repro, on the farm's own QEMU: booted as the checks'
    guests are (the console driven by the farm), the reproducer run first if
    given, then CMD: each one's output on stdout as it printed it, what the
    kernel reported while it ran on stderr, CMD's exit status (the
    reproducer's without one). Without -e the console is then handed to the
    person (an interactive shell; leaving it powers the guest off)."""
    _, fs, _ = parse_cell(opts.cell)
    log = cache_dir() / "shell" / f"{opts.cell}-{time.strftime('%Y%m%d-%H%M%S')}.console.log"
    mach = replace(mach, interactive=False, extra_append="")
    status = 0
    with GuestSession(mach.argv(), log) as g:
        dev = g.banner.get(f"mount:{fs.name}", "FAILED")
        if dev == "FAILED":
            raise GuestError(f"{fs.name} is not mounted in the guest; console: {log}")
        g.run(f"export FF_MNT=/mnt/{fs.name} FF_DEV={shlex.quote(dev)} FF_FS={fs.name} PATH=/bin:/ff",
              timeout=60)
        for what, line in _commands(opts):
            # (in a subshell: CMD's `exit` ends CMD, not the guest's shell)
            res = g.run(f"(\n{line}\n)", timeout=opts.timeout)
            sys.stdout.write(res.output)
            sys.stdout.flush()
            if trouble := res.trouble():
                print(f"foliofarm shell: the kernel reported while {what} ran: {trouble}", file=sys.stderr)
            print(f"foliofarm shell: {what} exited {res.status}", file=sys.stderr)
            status = res.status
        if opts.exec_cmd is None and g.child is not None:
            print(f"foliofarm shell {opts.cell}: the guest's shell is yours; exit leaves, "
                  "Ctrl-] drops the guest", file=sys.stderr)
            _hand_over(g)
    print(f"foliofarm shell: console {log}", file=sys.stderr)
    return status


def _hand_over(g: GuestSession) -> None:
    """The guest's console to the person at the terminal: an interactive
    shell, whose exit powers the guest off; what it prints is kept in the
    console log too."""
    assert g.child is not None
    log = g.child.logfile_read
    g.child.logfile_read = None     # (pexpect's interact hands it bytes)

    def kept(data: bytes) -> bytes:
        if log is not None:
            log.write(data.decode("utf-8", "replace"))
        return data

    g.child.sendline("stty echo; PS1='foliofarm# ' setsid cttyhack sh -i; poweroff -f")
    try:
        g.child.interact(output_filter=kept)
    except OSError:     # QEMU gone (the guest powered off): its pty closed
        pass


def _commands(opts: ShellOptions) -> list[tuple[str, str]]:
    """What runs, in order: the reproducer (from a cold page cache, as its
    driver runs it: C as the program it is, a script by the guest's shell),
    then CMD."""
    out = []
    if opts.repro is not None:
        args = shlex.join(shlex.split(opts.repro_args))
        out.append(("the reproducer", "sync; echo 3 > /proc/sys/vm/drop_caches; "
                    f"if [ \"$(cat /mnt/{REPRO}/kind)\" = sh ]; then sh /mnt/{REPRO}/repro {args}; "
                    f"else /mnt/{REPRO}/repro {args}; fi"))
    if opts.exec_cmd is not None:
        out.append(("the command", opts.exec_cmd))
    return out

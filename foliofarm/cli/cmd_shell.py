"""`foliofarm shell CELL`: boot one cell's guest with an interactive shell, or
run one command in it (-e), a reproducer first (--repro); or under virtme-ng."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from foliofarm import matrix
from foliofarm.boot.qemu import TCG_THREADS, numa_layout
from foliofarm.cli.options import positive_int
from foliofarm.intake import source


def add_parser(sub: Any, d: dict[str, Any]) -> None:
    p = sub.add_parser("shell", help="boot one cell's guest with an interactive shell")
    shell_parser(p, d)
    p.set_defaults(func=command)


def shell_parser(sh: argparse.ArgumentParser, d: dict[str, Any]) -> None:
    sh.add_argument("cell", help="page-fs (4k-xfs), or a cell id from results (4k-xfs-7.3+series)")
    sh.add_argument("--kernel", default=d["kernel"], help="as for run")
    sh.add_argument("--series", default=None, help="boot the kernel with this series applied")
    sh.add_argument("--variant", default="default", help="kernel config variant")
    sh.add_argument("-K", dest="extra_config", action="append", default=[], metavar="CONFIG_FOO=y")
    sh.add_argument("--accel", choices=("auto", "tcg", "kvm"), default="auto")
    sh.add_argument("--tcg-threads", choices=TCG_THREADS, default="single")
    sh.add_argument("--cpus", type=positive_int, default=d.get("guest_cpus", 2))
    sh.add_argument("--memory", type=positive_int, default=d.get("guest_memory_mb", 2048),
                    metavar="MB")
    sh.add_argument("--numa-nodes", type=positive_int, default=d.get("guest_numa_nodes", 1),
                    metavar="N")
    sh.add_argument("--vng", action="store_true", help="boot under virtme-ng (vng): a Debian arm64 "
                    "root over 9p, the guest programs in /ff, the cell's disks under /mnt")
    sh.add_argument("-e", "--exec", dest="exec_cmd", default=None, metavar="CMD",
                    help="run CMD in the guest's shell ($FF_MNT, $FF_DEV, $FF_FS name the cell's "
                    "filesystem), print its output, exit with its status")
    sh.add_argument("--repro", type=Path, default=None, metavar="FILE",
                    help="attach a reproducer (as for run --repro) and run it once from a cold page "
                    "cache, then the shell (or -e CMD)")
    sh.add_argument("--repro-args", default="", metavar="ARGS", help="the reproducer's arguments")
    sh.add_argument("--timeout", type=positive_int, default=600, metavar="S",
                    help="-e CMD's deadline, and the reproducer's (default 600)")
    sh.add_argument("--rwdir", action="append", default=[], metavar="[GUEST=]HOST",
                    help="with --vng: share a host directory read-write (vng --rwdir)")
    sh.add_argument("-v", "--verbose", action="store_true",
                    help="with --vng: the kernel's console too (vng --verbose)")


def command(args: argparse.Namespace, argv: list[str]) -> int:
    from foliofarm.run import shell
    numa_layout(args.memory, args.cpus, args.numa_nodes)    # a guest shape QEMU cannot make
    source.validate_spec(args.kernel)
    return shell.main(shell.ShellOptions(
        cell=args.cell, kernel=args.kernel, series=args.series,
        variant=matrix.select_variant(args.variant), extra_config=args.extra_config,
        accel=args.accel, tcg_threads=args.tcg_threads, cpus=args.cpus,
        memory_mb=args.memory, numa_nodes=args.numa_nodes, vng=args.vng,
        exec_cmd=args.exec_cmd, rwdirs=args.rwdir, verbose=args.verbose,
        repro=args.repro.resolve() if args.repro else None, repro_args=args.repro_args,
        timeout=args.timeout))

"""`foliofarm run`: build, boot and check the matrix; bad input refused
before anything is built or written."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

from foliofarm import matrix
from foliofarm.boot.qemu import TCG_CPU, TCG_THREADS, cpu_model, numa_layout
from foliofarm.cli.options import (core_counts, default_guests, default_tree_guests, positive_int, positive_seconds,
                                   writable_dir)
from foliofarm.disks import reproducer
from foliofarm.errors import UsageError
from foliofarm.intake import series, source
from foliofarm.judge import catalogue
from foliofarm.judge.catalogue import Check
from foliofarm.boot.vng import vng_command
from foliofarm.paths import ROOT, cache_dir

if TYPE_CHECKING:
    from foliofarm.run.plan import RunOptions


def add_parser(sub: Any, d: dict[str, Any]) -> None:
    p = sub.add_parser("run", help="build, boot and check the matrix")
    run_parser(p, d)
    p.set_defaults(func=command)


def dry_run_options(run: argparse.ArgumentParser) -> None:
    run.add_argument("--dry-run", action="store_true",
                     help="say which cells, builds and boots the run would do, and stop")
    run.add_argument("--plan-cores", type=core_counts, default=[], metavar="N[,N...]",
                     help="with --dry-run (implied): the planner's expected wall time of the run's boots on "
                          "hosts of N cores, from the times earlier runs recorded (e.g. 2,4,8,16,32)")


def run_parser(run: argparse.ArgumentParser, d: dict[str, Any]) -> None:
    """`foliofarm run`'s options: what to build, which cells and checks, the guests."""
    run.add_argument("--kernel", default=d["kernel"],
                     help=f"debian:X.Y ({', '.join(matrix.debian_kernels())}), a path to a "
                          "kernel tree, PATH@REF (a commit of a kernel git tree) or "
                          f"git:WHERE#BRANCH,... (a tree to follow) (default {d['kernel']})")
    run.add_argument("--base", default=None, metavar="COMMIT", help="the commit of the --kernel "
                     "tree to build (a followed tree's series: else the series' own base)")
    run.add_argument("--page-sizes", default=",".join(d["page_sizes"]),
                     help=f"comma-separated, of {', '.join(matrix.page_sizes())}")
    run.add_argument("--fs", default=",".join(d["filesystems"]),
                     help=f"comma-separated, of {', '.join(matrix.filesystems())}")
    run.add_argument("--checks", default=None,
                     help=f"comma-separated, of {', '.join(catalogue.by_name())} (default all but "
                          "those run on request: repro)")
    run.add_argument("--mm-selftests", default=None, metavar="CATEGORIES|all",
                     help="run_vmtests.sh categories of the mm-selftests check, space-separated, "
                          "or all (default: those in tests/vmtests/checks.toml, minutes per cell "
                          "under TCG)")
    run.add_argument("--repro", default=None, type=Path, metavar="FILE",
                     help="a reproducer, run once in every cell's guest from a cold page cache: a C "
                          "source (compiled for arm64 in the sandbox) or a shell script; its exit status, "
                          "the kernel's reports while it ran and the key: number lines it prints are "
                          "judged (alone, unless --checks names others too)")
    run.add_argument("--repro-args", default="", metavar="ARGS",
                     help="the reproducer's arguments, split as a shell would")
    run.add_argument("--repro-timeout", default=None, type=positive_int, metavar="S",
                     help="kill the reproducer after S seconds in each guest (it then fails, "
                          "timed out; default: the check's deadline)")
    run.add_argument("--variant", default="default",
                     help=f"kernel config variant, of {', '.join(matrix.variants())}")
    run.add_argument("--series", default=None, metavar="MBOX|DIR|BASE..TIP",
                     help="a patch series judged against its base: an mbox (git format-patch, b4 "
                          "am), a directory of patches or a git range in the --kernel PATH tree")
    run.add_argument("--compare", default=None, metavar="KERNEL",
                     help="a second kernel (debian:X.Y or PATH) run on the same matrix and judged "
                          "against --kernel, as the before/after tables of a patch posting")
    series_options(run)
    run.add_argument("--noise", action="store_true", help="boot twice for the noise a later "
                     "--series run needs (make run does: its first series costs what the second does)")
    run.add_argument("--fresh", "--fresh-base", dest="fresh", action="store_true",
                     help="boot and measure again where the same kernel, guest programs, images "
                          "and checks were measured before (else their measurements are reused)")
    run.add_argument("--results", type=Path, default=ROOT / "results",
                     help="results folder; each run writes RESULTS/<run-id>/ and RESULTS/latest")
    run.add_argument("--cells", default=None, metavar="GLOB,...",
                     help="only these cells, as page-fs names or globs: 64k-*, *-xfs, 4k-ext4 "
                          "(within --page-sizes and --fs)")
    dry_run_options(run)
    run.add_argument("-K", dest="extra_config", action="append", default=[], metavar="CONFIG_FOO=y",
                     help="an extra kernel config item, merged after the fragments and verified "
                          "like them (repeatable)")
    guest_options(run, d)
    from foliofarm.lava import remote
    remote.add_arguments(run)


def coverage_variant(args: argparse.Namespace) -> str:
    """--coverage is the coverage variant; beside another --variant, an error."""
    if not args.coverage:
        return args.variant
    if args.variant not in ("default", "coverage"):
        raise UsageError(f"--coverage builds the coverage variant: drop --variant {args.variant}")
    if not args.series:
        raise UsageError("--coverage measures which of a series' lines ran: give --series")
    return "coverage"


def series_options(run: argparse.ArgumentParser) -> None:
    """`foliofarm run`'s options for a series."""
    run.add_argument("--each-commit", action="store_true", help="with --series: build every "
                     "commit for every page size and report the first that does not build")
    run.add_argument("--strict-style", action="store_true",
                     help="with --series: a checkpatch.pl error or warning fails the run (exit 1)")
    run.add_argument("--allow-binary", action="store_true", help="with --series: take binary patches")
    run.add_argument("--selftests", default="reached", choices=("reached", "all"),
                     help="with --series: on its side, the mm selftests that can reach what it changes "
                          "by the base's coverage map (`foliofarm coverage`; every one where there is no "
                          "map or it cannot tell), or all of them (default reached)")
    run.add_argument("--coverage", action="store_true",
                     help="with --series: both sides on the coverage variant (gcov), and for every "
                          "line the series changes, on each cell, the checks and selftests that ran it "
                          "(patch coverage; the same as --variant coverage)")


def guest_options(run: argparse.ArgumentParser, d: dict[str, Any]) -> None:
    """`foliofarm run`'s options for the guests and builds."""
    run.add_argument("--accel", choices=("auto", "tcg", "kvm"), default="auto",
                     help="QEMU accelerator: kvm on arm64 hosts with /dev/kvm, else TCG")
    run.add_argument("--tcg-threads", choices=TCG_THREADS, default="single",
                     help="TCG: a guest's vCPUs in turns on one host thread (single: faster on a "
                          "busy host) or each on its own (multi: truly at once, for races)")
    run.add_argument("--tcg-cpu", type=cpu_model, default=TCG_CPU, metavar="MODEL[,PROP=V...]",
                     help=f"TCG: the guests' CPU, as QEMU's -cpu takes it (default {TCG_CPU}: "
                          "every granule; measured against others in docs/performance.md)")
    run.add_argument("--boot-timeout", type=positive_seconds, default=300, help="seconds to reach the guest shell")
    run.add_argument("--build-timeout", type=positive_seconds, metavar="SECONDS", help="a kernel "
                     "build's wall clock (default FOLIOFARM_BUILD_TIMEOUT, else 3 h)")
    run.add_argument("--timeout", type=positive_seconds, metavar="SECONDS", help="the whole run's "
                     "wall clock: then all it started is killed, exit 3")
    run.add_argument("--jobs", type=positive_int, default=None,
                     help="make -j for the kernel builds (default: the host's cores)")
    run.add_argument("--cpus", type=positive_int, default=d.get("guest_cpus", 2),
                     help=f"vCPUs of each guest (default {d.get('guest_cpus', 2)})")
    run.add_argument("--memory", type=positive_int, default=d.get("guest_memory_mb", 2048),
                     metavar="MB", help=f"memory of each guest in MB (default "
                                        f"{d.get('guest_memory_mb', 2048)})")
    run.add_argument("--numa-nodes", type=positive_int, default=d.get("guest_numa_nodes", 1),
                     metavar="N", help=f"NUMA nodes of each guest, memory split evenly and vCPUs "
                                       f"dealt round them (default {d.get('guest_numa_nodes', 1)})")
    run.add_argument("--guests", type=positive_int, default=default_guests(),
                     help="boots of the farm's own checks at once, each its own TCG guest "
                          "(default: one more than the host's cores)")
    run.add_argument("--tree-guests", type=positive_int,
                     default=default_tree_guests(d.get("guest_memory_mb", 2048)), metavar="N",
                     help="boots of the tree's checks (selftests, thpmaps) at once, yielding the "
                          "cores to the own checks' guests (default: cores + 1, as many as the memory holds)")
    run.add_argument("--boot-with", choices=("qemu", "vng"), default="qemu",
                     help="what boots the farm's own checks here: its QEMU, or virtme-ng (the tree's "
                          "checks stay on the farm's QEMU: docs/user-guide.md, the same cell under "
                          "virtme-ng); --lab URL boots them in a LAVA lab")
    run.add_argument("--runner", dest="boot_with", choices=("qemu", "vng"), help=argparse.SUPPRESS)  # its old name


def command(args: argparse.Namespace, argv: list[str]) -> int:
    """`foliofarm run`: refuse bad input before anything is built or written, then run."""
    from foliofarm.run.runner import Runner
    numa_layout(args.memory, args.cpus, args.numa_nodes)    # a guest shape QEMU cannot make
    opts = run_options(args, argv)
    validate_run(args)
    from foliofarm.lava.remote import LabBoots
    if (lab := LabBoots.from_args(args)) is not None:      # the lab answers and takes the token
        opts.lab = lab
    if opts.dry_run:
        return Runner(opts).dry_run()
    writable_dir(opts.results)     # last: a refused run leaves no folder behind
    return Runner(opts).execute()


def run_options(args: argparse.Namespace, argv: list[str]) -> RunOptions:
    from foliofarm.run.plan import RunOptions
    if args.base:           # --base COMMIT: the tree's spec names the commit
        if args.kernel.startswith("debian:"):
            raise UsageError("--base names a commit of a git tree: give --kernel PATH or git:...")
        args.kernel = f"{args.kernel}@{args.base}"
    pages = matrix.select_page_sizes(args.page_sizes)
    filesystems = matrix.select_filesystems(args.fs)
    cells = None
    if args.cells is not None:
        pages, filesystems, cells = matrix.select_cells(args.cells, pages, filesystems)
    return RunOptions(
        kernel=args.kernel,
        page_sizes=pages,
        filesystems=filesystems,
        cells=cells,
        jobs=args.jobs,
        cpus=args.cpus, memory_mb=args.memory, numa_nodes=args.numa_nodes,
        extra_config=args.extra_config,
        dry_run=args.dry_run or bool(args.plan_cores), plan_cores=args.plan_cores,
        checks=run_checks(args),
        results=args.results.resolve(),
        variant=matrix.select_variant(coverage_variant(args)),
        series=args.series,
        compare=args.compare,
        each_commit=args.each_commit,
        selftests=args.selftests,
        strict_style=args.strict_style,
        fresh=args.fresh, noise=args.noise, accel=args.accel, tcg_threads=args.tcg_threads,
        tcg_cpu=args.tcg_cpu,
        boot_timeout=args.boot_timeout, build_timeout=args.build_timeout, timeout=args.timeout,
        allow_binary=args.allow_binary,
        guests=args.guests,
        tree_guests=args.tree_guests,
        boot_with=args.boot_with,
        repro=args.repro.resolve() if args.repro else None, repro_args=args.repro_args,
        repro_seconds=args.repro_timeout,
        command=["foliofarm", *argv],
    )


def run_checks(args: argparse.Namespace) -> list[Check]:
    """The checks of the run: --checks (by default all but those on request),
    and with --repro the reproducer's (alone where --checks names none)."""
    if args.repro is None:
        return catalogue.with_categories(catalogue.select(args.checks), args.mm_selftests)
    loaded = reproducer.load(args.repro, args.repro_timeout)
    named = catalogue.select(args.checks) if args.checks else []
    return catalogue.with_reproducer(catalogue.with_categories(named, args.mm_selftests), loaded.digest,
                                     shlex.split(args.repro_args))


def validate_run(args: argparse.Namespace) -> None:
    """Bad input is refused now, before anything is built or written."""
    source.validate_spec(args.kernel)
    if args.series is not None and args.compare is not None:
        raise UsageError("--series and --compare are two different comparisons: give one")
    if (args.each_commit or args.strict_style) and args.series is None:
        raise UsageError("--each-commit and --strict-style need --series")
    if args.compare is not None:
        source.validate_spec(args.compare)
    if args.series is not None:
        local = None if args.kernel.startswith("debian:") else Path(args.kernel).expanduser()
        series.load(args.series, local, args.allow_binary)
    if args.repro is not None:      # C that does not compile: its lines, before anything builds
        reproducer.disk(cache_dir(), reproducer.load(args.repro, args.repro_timeout))
    elif args.repro_args or args.repro_timeout:
        raise UsageError("--repro-args and --repro-timeout are a reproducer's: give --repro FILE")
    if args.boot_with == "vng":
        vng_command()       # installed, or say how
    from foliofarm.kernel.kconfig import check_extra
    check_extra(args.extra_config)

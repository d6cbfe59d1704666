"""foliofarm command line: `foliofarm run` and `foliofarm list`."""

from __future__ import annotations

import argparse
import importlib
import errno
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from foliofarm import matrix
from foliofarm.intake import series, source
from foliofarm.judge import catalogue
from foliofarm.errors import FarmError, UsageError
from foliofarm.boot.qemu import TCG_THREADS, numa_layout
from foliofarm.measure.vng import vng_command
from foliofarm.paths import ROOT

if TYPE_CHECKING:
    from foliofarm.run.plan import RunOptions


def positive_int(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return n


def positive_seconds(text: str) -> float:
    try:
        x = float(text)
    except ValueError:
        x = 0.0
    if not x > 0 or x == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds above 0")
    return x


def writable_dir(path: Path) -> Path:
    """``path`` as a results folder: made if missing, refused (UsageError) if it
    is not a folder or cannot be written, before anything is built."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f".foliofarm-write-test-{os.getpid()}"
        probe.write_text("")
        probe.unlink()
    except FileExistsError:
        raise UsageError(f"--results {path}: a file is in the way; name a folder") from None
    except NotADirectoryError:
        raise UsageError(f"--results {path}: part of the path is a file; name a folder") from None
    except OSError as exc:
        raise UsageError(f"--results {path}: cannot write there ({exc.strerror}); name a "
                         "folder you can write") from None
    return path


def version() -> str:
    """The package version, and the commit of the checkout it runs from."""
    from importlib.metadata import PackageNotFoundError, version as pkg_version
    try:
        v = pkg_version("foliofarm")
    except PackageNotFoundError:
        v = "unknown"
    if (ROOT / ".git").exists():
        import subprocess
        p = subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty"],
                           capture_output=True, text=True, check=False)
        if p.returncode == 0:
            v += f" ({p.stdout.strip()})"
    return v


def default_guests() -> int:
    """Own-check boots at once: one more than the cores (a guest's boot leaves
    its core idle while QEMU starts and the host reads its dumps; measured on
    2 cores, the nine own-check boots of a series: 34 s two at once, 32 s three),
    at most 3."""
    return max(1, min(3, (os.cpu_count() or 1) + 1))


def default_tree_guests(memory_mb: int) -> int:
    """Tree-check boots at once: one more than the cores, at most 3, and as
    many as the host's memory holds at ``memory_mb`` each beside two more (the
    own checks' guests, that touch little of theirs). The selftests leave a
    core idle a tenth of the time (I/O, their own sleeps: khugepaged's waits
    for a scan): measured on 2 cores, 24 GiB, a default series run, cores
    busy 92.7% with two, 97.1% with three; the verdict 612.9 s against 599.2 s."""
    try:
        total_mb = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // (1 << 20)
    except (ValueError, OSError):
        total_mb = 0
    by_memory = total_mb // memory_mb - 2 if total_mb else 3
    return max(1, min(3, (os.cpu_count() or 1) + 1, by_memory))


def parser() -> argparse.ArgumentParser:
    d = matrix.defaults()
    ap = argparse.ArgumentParser(
        prog="foliofarm",
        description="Build arm64 kernels for 4K/16K/64K pages, boot them under QEMU with "
                    "ext4/XFS/EROFS images and check what the kernel did with folios, "
                    "contpte and readahead.")
    ap.add_argument("--version", action="version", version=f"foliofarm {version()}")
    sub = ap.add_subparsers(dest="cmd", required=True)
    run_parser(sub.add_parser("run", help="build, boot and check the matrix"), d)
    sub.add_parser("list", help="list page sizes, filesystems, kernels, variants and checks")
    sub.add_parser("figures", help="the figures judged base against series, as a Markdown table")
    sub.add_parser("bisect", help="the first commit where a check regresses on a cell "
                                  "(foliofarm bisect --help)", add_help=False)
    sub.add_parser("watch", help="follow a public-inbox archive, test each new mm series and "
                                 "reply in its thread (foliofarm watch --help)", add_help=False)
    sub.add_parser("kcidb", help="a run's results as a KCIDB submission, validated; --submit to "
                                 "post it (foliofarm kcidb --help)", add_help=False)
    sub.add_parser("lava", help="a run's cells as LAVA jobs, validated with LAVA's schema "
                                "(foliofarm lava --help)", add_help=False)
    shell_parser(sub.add_parser("shell", help="boot one cell's guest with an interactive shell"), d)
    rep = sub.add_parser("report", help="render report.md and report.html again from a results folder")
    rep.add_argument("run_dir", type=Path, nargs="+",
                     help="RESULTS/<run-id> or RESULTS/latest; several CI shards with --out")
    rep.add_argument("--out", type=Path, default=None,
                     help="merge several shards' results into this folder and report on them")
    rep.add_argument("--lava", action="store_true",
                     help="the folders are LAVA jobs (foliofarm lava) with their lava.log: judge them "
                          "into a results folder under --out")
    return ap


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
                     help=f"comma-separated, of {', '.join(catalogue.by_name())} (default all)")
    run.add_argument("--mm-selftests", default=None, metavar="CATEGORIES|all",
                     help="run_vmtests.sh categories of the mm-selftests check, space-separated, "
                          "or all (default: those in tests/vmtests/checks.toml, minutes per cell "
                          "under TCG)")
    run.add_argument("--variant", default="default",
                     help=f"kernel config variant, of {', '.join(matrix.variants())}")
    run.add_argument("--series", default=None, metavar="MBOX|DIR|BASE..TIP",
                     help="a patch series judged against its base: an mbox (git format-patch, b4 "
                          "am), a directory of patches or a git range in the --kernel PATH tree")
    run.add_argument("--compare", default=None, metavar="KERNEL",
                     help="a second kernel (debian:X.Y or PATH) run on the same matrix and judged "
                          "against --kernel, as the before/after tables of a patch posting")
    run.add_argument("--each-commit", action="store_true", help="with --series: build every "
                     "commit for every page size and report the first that does not build")
    run.add_argument("--strict-style", action="store_true",
                     help="with --series: a checkpatch.pl error or warning fails the run (exit 1)")
    run.add_argument("--allow-binary", action="store_true", help="with --series: take binary patches")
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
    run.add_argument("--dry-run", action="store_true",
                     help="say which cells, builds and boots the run would do, and stop")
    run.add_argument("-K", dest="extra_config", action="append", default=[], metavar="CONFIG_FOO=y",
                     help="an extra kernel config item, merged after the fragments and verified "
                          "like them (repeatable)")
    guest_options(run, d)
    from foliofarm.lava import remote
    remote.add_arguments(run)


def guest_options(run: argparse.ArgumentParser, d: dict[str, Any]) -> None:
    """`foliofarm run`'s options for the guests and builds."""
    run.add_argument("--accel", choices=("auto", "tcg", "kvm"), default="auto",
                     help="QEMU accelerator: kvm on arm64 hosts with /dev/kvm, else TCG")
    run.add_argument("--tcg-threads", choices=TCG_THREADS, default="single",
                     help="TCG: a guest's vCPUs in turns on one host thread (single: faster on a "
                          "busy host) or each on its own (multi: truly at once, for races)")
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
                          "(default: one more than the host's cores, at most 3)")
    run.add_argument("--tree-guests", type=positive_int,
                     default=default_tree_guests(d.get("guest_memory_mb", 2048)), metavar="N",
                     help="boots of the tree's checks (selftests, thpmaps) at once, yielding the "
                          "cores to the own checks' guests (default: cores + 1, at most 3)")
    run.add_argument("--runner", choices=("qemu", "vng"), default="qemu",
                     help="what boots the farm's own checks: its QEMU runner, or virtme-ng (the "
                          "tree's checks stay on the farm's runner: README, the vng route)")


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
                    help="with --vng: run CMD in the guest, exit with its status")
    sh.add_argument("--rwdir", action="append", default=[], metavar="[GUEST=]HOST",
                    help="with --vng: share a host directory read-write (vng --rwdir)")
    sh.add_argument("-v", "--verbose", action="store_true",
                    help="with --vng: the kernel's console too (vng --verbose)")


def cmd_list() -> int:
    print("page sizes: ", ", ".join(matrix.page_sizes()))
    print("filesystems:", ", ".join(matrix.filesystems()))
    print("kernels:    ", ", ".join(source.valid_specs()))
    print("variants:   ", ", ".join(matrix.variants()))
    print("checks:")
    for c in catalogue.by_name().values():
        print(f"  {c.name:<14} {c.description}")
    return 0


def figures_table() -> str:
    """Every declared figure of every check: how a move is judged, and the code it guards."""
    from foliofarm.judge import figures
    rows = ["| check | figure | a move is wrong when | guards |", "|---|---|---|---|"]
    for c in catalogue.by_name():
        for s in figures.specs(c):
            how = {"higher": f"it falls by more than {s.tolerance:g}",
                   "lower": f"it rises by more than {s.tolerance:g}",
                   "exact": "it moves at all" if not s.tolerance else f"it moves by more than {s.tolerance:g}"
                   }[s.better]
            rows.append(f"| `{c}` | `{s.pattern}` | {how} | {s.guards} |")
    rows += ["", "Shown beside the verdicts, never judged (timing, what the guest program was "
             "asked to do, counts over parts judged one by one):", "",
             "| check | figure | kind | why |", "|---|---|---|---|"]
    for name, kind in figures.COMMON_KINDS.items():
        rows.append(f"| every check | `{name}` | {kind} | "
                    + ("how long the guest took, under TCG: the host's load, not the kernel"
                       if kind == "timing" else "what the guest program was asked to do, or what the farm derives from the page size") + " |")
    rows.append("| every check | `*_seconds` | timing | a time, whoever reports it |")
    for c in catalogue.by_name():
        for pattern, kind, why in figures.declared(c):
            rows.append(f"| `{c}` | `{pattern}` | {kind} | {why} |")
    return "\n".join(rows) + "\n"


DELEGATED = {"bisect": "foliofarm.run.bisect", "watch": "foliofarm.watch.command",
             "kcidb": "foliofarm.report.kcidb", "lava": "foliofarm.lava.command"}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] and argv[0] in DELEGATED:     # commands with a parser of their own
        return importlib.import_module(DELEGATED[argv[0]]).main(argv[1:])
    ap = parser()
    try:
        args = ap.parse_args(argv)
    except SystemExit as exc:      # argparse's own usage errors
        return 2 if exc.code else 0
    try:
        if args.cmd == "list":
            return cmd_list()
        if args.cmd == "figures":
            print(figures_table(), end="")
            return 0
        if args.cmd in ("shell", "run"):
            # a guest shape QEMU cannot make is refused before anything builds
            numa_layout(args.memory, args.cpus, args.numa_nodes)
        if args.cmd == "shell":
            from foliofarm.run import shell
            source.validate_spec(args.kernel)
            return shell.main(shell.ShellOptions(
                cell=args.cell, kernel=args.kernel, series=args.series,
                variant=matrix.select_variant(args.variant), extra_config=args.extra_config,
                accel=args.accel, tcg_threads=args.tcg_threads, cpus=args.cpus,
                memory_mb=args.memory, numa_nodes=args.numa_nodes, vng=args.vng,
                exec_cmd=args.exec_cmd, rwdirs=args.rwdir, verbose=args.verbose))
        if args.cmd == "report" and args.lava:
            from foliofarm.lava import command as lava
            return lava.report_main(args.run_dir, args.out)
        if args.cmd == "report":
            from foliofarm import report
            return report.main([*map(str, args.run_dir)] + (["--out", str(args.out)] if args.out else []))
        return cmd_run(args, argv)
    except FarmError as exc:
        print(f"foliofarm: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("foliofarm: interrupted; results so far are in the results folder", file=sys.stderr)
        return 3
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        where = exc.filename or "the results folder or the cache"
        print(f"foliofarm: disk full writing {where}: free space there (or choose another "
              "--results / FOLIOFARM_CACHE) and run again; what was written before is kept, "
              "and the next run redoes what this one could not finish", file=sys.stderr)
        return 3


def cmd_run(args: argparse.Namespace, argv: list[str]) -> int:
    """`foliofarm run`: refuse bad input before anything is built or written, then run."""
    from foliofarm.run.runner import Run
    opts = run_options(args, argv)
    validate_run(args)
    from foliofarm.lava.remote import LabBoots
    if (lab := LabBoots.from_args(args)) is not None:      # the lab answers and takes the token
        opts.lab, opts.runner = lab, "lava"
    if args.dry_run:
        return Run(opts).dry_run()
    writable_dir(opts.results)     # last: a refused run leaves no folder behind
    return Run(opts).execute()


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
        dry_run=args.dry_run,
        checks=catalogue.with_categories(catalogue.select(args.checks), args.mm_selftests),
        results=args.results.resolve(),
        variant=matrix.select_variant(args.variant),
        series=args.series,
        compare=args.compare,
        each_commit=args.each_commit,
        strict_style=args.strict_style,
        fresh=args.fresh, noise=args.noise, accel=args.accel, tcg_threads=args.tcg_threads,
        boot_timeout=args.boot_timeout, build_timeout=args.build_timeout, timeout=args.timeout,
        allow_binary=args.allow_binary,
        guests=args.guests,
        tree_guests=args.tree_guests,
        runner=args.runner,
        command=["foliofarm", *argv],
    )


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
    if args.runner == "vng":
        vng_command()       # installed, or say how
    from foliofarm.kernel.kconfig import check_extra
    check_extra(args.extra_config)

"""The command line: one argparse tree, a module per command (each adds its
parser and names the function that carries it out), and one place where a
command's errors become its exit status: 2 for bad input, 3 for the farm's
own trouble (a disk full, an interrupt), with the command's name before the
message."""

from __future__ import annotations

import argparse
import errno
import sys

from foliofarm import matrix, shown
from foliofarm.cli import (cmd_bisect, cmd_coverage, cmd_kcidb, cmd_lava, cmd_list, cmd_report, cmd_run, cmd_selfcheck,
                           cmd_shell, cmd_watch)
from foliofarm.cli.cmd_list import figures_table
from foliofarm.cli.options import default_tree_guests
from foliofarm.errors import FarmError
from foliofarm.paths import ROOT

__all__ = ["main", "parser", "figures_table", "default_tree_guests"]

COMMANDS = (cmd_run, cmd_list, cmd_shell, cmd_report, cmd_bisect, cmd_coverage, cmd_watch, cmd_kcidb, cmd_lava,
            cmd_selfcheck)
INTERRUPTED = ("interrupted; results so far are in the results folder", 3)


def version() -> str:
    """The package version, and the commit of the checkout it runs from."""
    from importlib.metadata import PackageNotFoundError, version as pkg_version
    try:
        v = pkg_version("foliofarm")
    except PackageNotFoundError:
        v = "unknown"
    if (ROOT / ".git").exists():
        from foliofarm.intake import git
        p = git.git(ROOT, "describe", "--always", "--dirty", check=False, environment="user")
        if p.returncode == 0:
            v += f" ({p.stdout.strip()})"
    return v


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="foliofarm",
        description="Build arm64 kernels for 4K/16K/64K pages, boot them under QEMU with "
                    "ext4/XFS/EROFS images and check what the kernel did with folios, "
                    "contpte and readahead.")
    ap.add_argument("--version", action="version", version=f"foliofarm {version()}")
    ap.set_defaults(prefix="foliofarm", interrupted=INTERRUPTED)
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = matrix.defaults()
    for command in COMMANDS:
        command.add_parser(sub, d)
    return ap


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        args = parser().parse_args(argv)
    except SystemExit as exc:      # argparse's own usage errors
        return 2 if exc.code else 0
    try:
        return args.func(args, argv)
    except FarmError as exc:
        print(f"{args.prefix}: {shown.terminal(exc)}", file=sys.stderr)
        return exc.exit_status
    except KeyboardInterrupt:
        said, code = args.interrupted
        print(f"{args.prefix}: {shown.terminal(said)}", file=sys.stderr)
        return code
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        where = exc.filename or "the results folder or the cache"
        print(f"{args.prefix}: disk full writing {shown.terminal(where)}: free space there (or choose another "
              "--results / FOLIOFARM_CACHE) and run again; what was written before is kept, "
              "and the next run redoes what this one could not finish", file=sys.stderr)
        return 3

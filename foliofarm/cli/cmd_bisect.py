"""`foliofarm bisect`: the first commit where one check regresses on one
cell, or where a reproducer starts to fail there (run/bisect.py); `--step
STATE` is one step under `git bisect run`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from foliofarm.paths import ROOT
from foliofarm.run import bisect, child


def add_parser(sub: Any, d: dict[str, Any]) -> None:
    ap = sub.add_parser("bisect", help="the first commit where a check regresses on a cell",
                        description=bisect.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--step", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--kernel", default="debian:7.3")
    ap.add_argument("--good")
    ap.add_argument("--bad")
    ap.add_argument("--series")
    ap.add_argument("--cell")
    ap.add_argument("--check")
    ap.add_argument("--repro", type=Path, metavar="FILE",
                    help="bisect with a reproducer (as `run --repro`): a commit is bad where it fails")
    ap.add_argument("--repro-args", default="", metavar="ARGS", help="the reproducer's arguments")
    ap.add_argument("--variant", default="default")
    ap.add_argument("--results", type=Path, default=ROOT / "results")
    ap.set_defaults(func=command, prefix="foliofarm bisect")


def command(args: argparse.Namespace, argv: list[str]) -> int:
    if args.step:
        return bisect.step(args.step)
    if args.repro is not None and args.check not in (None, "repro"):
        print("foliofarm bisect: --repro bisects with the reproducer: give it or --check, not both",
              file=sys.stderr)
        return 2
    if args.repro is None and args.repro_args:
        print("foliofarm bisect: --repro-args are a reproducer's: give --repro FILE", file=sys.stderr)
        return 2
    if not args.cell or not (args.check or args.repro):
        print("foliofarm bisect: --cell and --check (or --repro FILE) are needed", file=sys.stderr)
        return 2
    child.stoppable()
    return bisect.bisect(args)

"""`foliofarm bisect`: the first commit where one check regresses on one
cell (run/bisect.py); `--step STATE` is one step under `git bisect run`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from foliofarm.paths import ROOT
from foliofarm.run import bisect


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
    ap.add_argument("--variant", default="default")
    ap.add_argument("--results", type=Path, default=ROOT / "results")
    ap.set_defaults(func=command, prefix="foliofarm bisect")


def command(args: argparse.Namespace, argv: list[str]) -> int:
    if args.step:
        return bisect.step(args.step)
    if not args.cell or not args.check:
        print("foliofarm bisect: --cell and --check are needed", file=sys.stderr)
        return 2
    return bisect.bisect(args)

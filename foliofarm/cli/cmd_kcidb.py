"""`foliofarm kcidb RESULTS...`: a run's results as a KCIDB submission,
validated by kcidb-io; --submit posts it to a receiver (report/kcidb.py)."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from foliofarm.shown import terminal
from foliofarm.errors import UsageError
from foliofarm.report.kcidb import ORIGIN, TOKEN_ENV, convert, read, submit
from foliofarm.util import write_atomic


def add_parser(sub: Any, d: dict[str, Any]) -> None:
    ap = sub.add_parser("kcidb", help="a run's results as a KCIDB submission, validated; --submit to post it",
                        description="A run's results as a KCIDB submission (kcidb-io's latest schema)")
    ap.add_argument("results", type=Path, nargs="+", help="RESULTS/<run-id>, RESULTS/latest or a results.json")
    ap.add_argument("-o", "--output", type=Path, default=None, help="write it here (default: standard output)")
    ap.add_argument("--origin", default=ORIGIN, help=f"the submitting CI system's name (default {ORIGIN})")
    ap.add_argument("--submit", metavar="URL", default=None,
                    help=f"POST it to a KCIDB receiver, with the token in {TOKEN_ENV}")
    ap.set_defaults(func=command, prefix="foliofarm kcidb")


def command(args: argparse.Namespace, argv: list[str]) -> int:
    if not re.fullmatch(r"[a-z0-9_]+", args.origin):
        raise UsageError(f"--origin {args.origin!r}: KCIDB origins are lower-case letters, digits and _")
    data = convert([read(p) for p in args.results], args.origin)
    text = json.dumps(data, indent=1) + "\n"
    if args.output:
        write_atomic(args.output, text)
    else:
        sys.stdout.write(text)
    if args.submit:
        print(f"foliofarm kcidb: submitted; the receiver said: {terminal(submit(args.submit, data)[:300])}",
              file=sys.stderr)
    return 0

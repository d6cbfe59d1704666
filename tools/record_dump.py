#!/usr/bin/env python3
"""record_dump: turn a dump from a real guest into a unit-test fixture.

Copies DUMP to tests/data/dumps/<page>-<fs>-<kernel>.<check>.dump and writes,
beside it, the outcome and metrics that the host-side judge gives it now; the
unit tests replay every recorded dump and require the same answer.

    tools/record_dump.py results/latest/cells/64k-xfs-7.3/mmap-miss.dump 7.3
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from foliofarm import matrix  # noqa: E402
from foliofarm.judge import catalogue, checks, smaps  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dump", type=Path)
    ap.add_argument("kernel", help='kernel "X.Y" the dump came from')
    ap.add_argument("--check", help="the check, if not the one the dump names")
    args = ap.parse_args()
    d = smaps.parse_dump(args.dump.read_text())
    page = d.page.name
    check, fs = args.check or d.meta["check"], d.meta["fs"]
    fs = fs if fs in matrix.filesystems() else "xfs"   # anon checks run in every cell
    out = ROOT / "tests" / "data" / "dumps" / f"{page}-{fs}-{args.kernel}.{check}.dump"
    if args.dump.resolve() != out.resolve():
        shutil.copyfile(args.dump, out)
    o = checks.evaluate(catalogue.by_name()[check], out.read_text(), matrix.cell_of(page, fs, args.kernel),
                        args.kernel)
    out.with_suffix(".json").write_text(json.dumps(
        {"check": check, "kernel": args.kernel, "page_size": page, "fs": fs,
         "outcome": o.outcome, "reason": o.reason, "metrics": o.metrics,
         **({"rows": [r.model_dump() for r in o.rows]} if o.rows else {})}, indent=1) + "\n")
    print(f"{out}: {o.outcome} {o.reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

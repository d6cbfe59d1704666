"""`foliofarm lava`: a run's cells as LAVA jobs (jobs.py), run them here with
Debian's lava-run (--run), or read LAVA job logs back into a results folder
the farm judges like its own boots (--read, log.py)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from foliofarm.errors import FarmError
from foliofarm.lava import jobs


def add_parser(sub: Any, d: dict[str, Any]) -> None:
    ap = sub.add_parser("lava", help="a run's cells as LAVA jobs, validated with LAVA's schema",
                        description=__doc__)
    ap.add_argument("results", type=Path, help="RESULTS/<run-id> of a run that booted the cells")
    ap.add_argument("-o", "--out", type=Path, required=True, help="one folder per cell is written here")
    ap.add_argument("--cells", default=None, metavar="GLOB,...", help="page-fs names or globs (default all)")
    ap.add_argument("--board", default=None, metavar="DEVICE_TYPE",
                    help="also board.yaml: the same artifacts for a U-Boot board of this LAVA device type")
    ap.add_argument("--run", action="store_true",
                    help="run each job here with Debian's lava-run (root) and its qemu device, keeping "
                         "its log as lava.log; `foliofarm report --lava DIR...` judges them")
    ap.set_defaults(func=command, prefix="foliofarm lava")


def command(args: argparse.Namespace, argv: list[str]) -> int:
    run_dir = args.results.resolve()
    if not (run_dir / "results.json").is_file():
        raise FarmError(f"{run_dir} has no results.json: give RESULTS/<run-id> of a foliofarm run")
    patterns = args.cells.split(",") if args.cells else None
    for where in jobs.write_jobs(run_dir, args.out.resolve(), patterns, args.board):
        print(f"{where}/job.yaml: valid; lava-run --job-id 1 --output-dir OUT "
              f"--device {where}/device.yaml {where}/job.yaml")
        if args.run:
            seconds, ok = jobs.run_local(where)
            print(f"{where}: lava-run {'finished' if ok else 'FAILED'} in {seconds:.0f} s, "
                  f"log {where / 'lava.log'}")
    return 0

"""`foliofarm report`: render report.md, report.html and report.txt again
from a run's results.json; merge the shards of a CI matrix into one (--out);
or judge LAVA jobs' logs into a results folder first (--lava)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from foliofarm import report
from foliofarm.errors import FarmError
from foliofarm.judge import compare
from foliofarm.results.junit import junit_xml
from foliofarm.results.merge import MergeError, merge
from foliofarm.results.schema import ResultsError, plain, typed
from foliofarm.util import write_atomic, write_json


def add_parser(sub: Any, d: dict[str, Any]) -> None:
    rep = sub.add_parser("report", help="render report.md and report.html again from a results folder")
    rep.add_argument("run_dir", type=Path, nargs="+",
                     help="RESULTS/<run-id> or RESULTS/latest; several CI shards with --out")
    rep.add_argument("--out", type=Path, default=None,
                     help="merge several shards' results into this folder and report on them")
    rep.add_argument("--lava", action="store_true",
                     help="the folders are LAVA jobs (foliofarm lava) with their lava.log: judge them "
                          "into a results folder under --out")
    rep.set_defaults(func=command)


def command(args: argparse.Namespace, argv: list[str]) -> int:
    if args.lava:
        return from_lava(args.run_dir, args.out)
    return render(args.run_dir, args.out)


def render(run_dirs: list[Path], out: Path | None) -> int:
    """One run's report again, or (``out``) the shards of a CI matrix merged
    into one results folder, judged again, and reported."""
    docs = []
    for d in run_dirs:
        try:
            docs.append(report.readback(d / "results.json"))
        except ResultsError as exc:
            print(f"foliofarm report: {exc}", file=sys.stderr)
            return 2
    if len(docs) > 1 and out is None:
        print("foliofarm report: several results folders need --out DIR for the merged report",
              file=sys.stderr)
        return 2
    out_dir = out or run_dirs[0]
    doc = docs[0]
    if out is not None:
        try:        # the shards' cells together, judged again
            merged = typed(merge([plain(d) for d in docs]))
        except MergeError as exc:
            print(f"foliofarm report: {exc}", file=sys.stderr)
            return 2
        data = {**plain(merged), "verdicts": compare.verdicts(merged) if merged.sides else []}
        doc = typed(data)
        out_dir.mkdir(parents=True, exist_ok=True)
        write_json(out_dir / "results.json", data)
        write_atomic(out_dir / "junit.xml", junit_xml(data))   # one file for the CI server
    md, page = report.write(out_dir, doc)
    print(md)
    print(page)
    return 0


def from_lava(job_dirs: list[Path], out: Path | None) -> int:
    """`foliofarm report --lava JOB... --out RESULTS`: LAVA jobs' logs judged
    like the farm's own boots (lava/log.py), then reported as any run is."""
    from foliofarm.lava import log
    if out is None:
        print("foliofarm report --lava: give --out RESULTS for the judged results", file=sys.stderr)
        return 2
    try:
        run_dir = log.read_jobs([d.resolve() for d in job_dirs], out,
                                ["foliofarm", "report", "--lava", *map(str, job_dirs)])
    except (FarmError, OSError, KeyError) as exc:
        print(f"foliofarm report --lava: {exc}", file=sys.stderr)
        return 2
    return render([run_dir], None)

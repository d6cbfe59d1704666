"""`foliofarm report`: render report.md, report.html and report.txt again
from a run's results.json; merge the shards of a CI matrix into one (--out);
or judge LAVA jobs' logs into a results folder first (--lava)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from foliofarm import report
from foliofarm.errors import FarmError, UsageError
from foliofarm.judge import compare
from foliofarm.results.merge import merge
from foliofarm.results.arriving import ARRIVING, Moment


def add_parser(sub: Any, d: dict[str, Any]) -> None:
    rep = sub.add_parser("report", help="render report.md and report.html again from a results folder")
    rep.add_argument("run_dir", type=Path, nargs="+",
                     help="RESULTS/<run-id> or RESULTS/latest; several CI shards with --out")
    rep.add_argument("--out", type=Path, default=None,
                     help="merge several shards' results into this folder and report on them")
    rep.add_argument("--lava", action="store_true",
                     help="the folders are LAVA jobs (foliofarm lava) with their lava.log: judge them "
                          "into a results folder under --out")
    rep.set_defaults(func=command, prefix="foliofarm report")


def command(args: argparse.Namespace, argv: list[str]) -> int:
    if args.lava:
        return from_lava(args.run_dir, args.out)
    return render(args.run_dir, args.out)


def render(run_dirs: list[Path], out: Path | None) -> int:
    """One run's report again, or (``out``) the shards of a CI matrix merged
    into one results folder, judged again, and reported. A document that is
    not one (ResultsError) or shards that do not go together (MergeError)
    are usage errors: the CLI says so, exit 2."""
    docs = [report.readback(d / "results.json") for d in run_dirs]
    if len(docs) > 1 and out is None:
        raise UsageError("several results folders need --out DIR for the merged report")
    out_dir = out or run_dirs[0]
    doc = docs[0]
    if out is not None:
        merged = merge(docs)     # the shards' cells together, judged again
        doc = merged.model_copy(update={"verdicts": compare.verdicts(merged) if merged.sides else []})
        out_dir.mkdir(parents=True, exist_ok=True)
        for o in ARRIVING:       # results.json, and one junit.xml for the CI server
            o.write(out_dir, doc, Moment(final=True))
    md, page = report.write(out_dir, doc)
    print(md)
    print(page)
    return 0


def from_lava(job_dirs: list[Path], out: Path | None) -> int:
    """`foliofarm report --lava JOB... --out RESULTS`: LAVA jobs' logs judged
    like the farm's own boots (run/lab_jobs.py), then reported as any run is."""
    from foliofarm.run.lab_jobs import read_jobs
    if out is None:
        raise UsageError("--lava: give --out RESULTS for the judged results")
    try:
        run_dir = read_jobs([d.resolve() for d in job_dirs], out,
                            ["foliofarm", "report", "--lava", *map(str, job_dirs)])
    except (FarmError, OSError, KeyError) as exc:
        raise UsageError(f"--lava: {exc}") from None
    return render([run_dir], None)

"""report.md and report.html from a results document.

One table per check in the style of the mailing-list tables (rows: folio-size
categories such as thp-aligned-64kB and cont-aligned-64kB, then the check's key
figures; columns: base and series per page size and filesystem), the verdict
table, checkpatch's findings, the builds and the command that reproduces the run.
report.html holds the same content plus one plot per check and page size of the
folio-size distributions, base against series, embedded so it opens offline.

    python -m foliofarm.report RESULTS/<run-id>     # render again from results.json
    python -m foliofarm.report --out DIR SHARD...    # one report from CI shards (one per cell)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from foliofarm.results import schema
from foliofarm.judge import compare
from foliofarm.report import plots, render, sections, text
from foliofarm.results.merge import MergeError, merge
from foliofarm.results.junit import junit_xml
from foliofarm.report.tables import columns
from foliofarm.util import write_atomic, write_json


def write(run_dir: Path, doc: schema.Results | dict[str, Any],
          drawn: dict[tuple[str, str], bytes] | None = None) -> tuple[Path, Path]:
    """report.md, report.html, report.txt and plots/. ``drawn``: plots made
    earlier (from page_part) of page sizes whose cells have not changed since."""
    doc = schema.typed(doc)
    drawn = drawn or {}
    pages = {p for p, _, _, _ in columns(doc)} - {p for _, p in drawn}
    pngs = {**drawn, **plots.draw(doc, pages)}
    (run_dir / "plots").mkdir(exist_ok=True)
    for (check, page), png in pngs.items():
        write_atomic(run_dir / "plots" / f"{check}-{page}.png", png)
    title, secs = sections.build(doc, pngs)
    md, page = run_dir / "report.md", run_dir / "report.html"
    write_atomic(md, render.to_markdown(title, secs) + "\n")
    write_atomic(page, render.to_html(title, secs) + "\n")
    write_atomic(run_dir / "report.txt", text.render(doc))    # for a reply to the list
    return md, page


def readback(path: Path) -> dict[str, Any]:
    """A results.json handed over, checked against the schema, its verdicts
    judged again from its cells (a killed run's has none; a copy's may be
    stale or damaged: they are derived data, never trusted as read)."""
    doc = schema.load(path)
    doc.pop("verdicts", None)
    if doc.get("sides"):
        doc["verdicts"] = compare.verdicts(doc)
    return doc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m foliofarm.report",
                                 description="Render report.md and report.html from a run's results.json, "
                                             "or from the shards of a CI matrix merged into one")
    ap.add_argument("run_dir", type=Path, nargs="+", help="RESULTS/<run-id> (or RESULTS/latest); "
                                                          "several shards with --out")
    ap.add_argument("--out", type=Path, default=None,
                    help="with several shards: the folder for the merged results.json and report")
    args = ap.parse_args(argv)
    docs = []
    for d in args.run_dir:
        try:
            docs.append(readback(d / "results.json"))
        except schema.ResultsError as exc:
            print(f"foliofarm report: {exc}", file=sys.stderr)
            return 2
    if len(docs) > 1 and args.out is None:
        print("foliofarm report: several results folders need --out DIR for the merged report",
              file=sys.stderr)
        return 2
    out_dir = args.out or args.run_dir[0]
    try:
        doc = merge(docs) if args.out is not None else docs[0]
    except MergeError as exc:
        print(f"foliofarm report: {exc}", file=sys.stderr)
        return 2
    if args.out is not None:
        if doc.get("sides"):            # the shards' cells together, judged again
            doc["verdicts"] = compare.verdicts(doc)
        out_dir.mkdir(parents=True, exist_ok=True)
        write_json(out_dir / "results.json", doc)
        write_atomic(out_dir / "junit.xml", junit_xml(doc))   # one file for the CI server
    md, page = write(out_dir, doc)
    print(md)
    print(page)
    return 0


if __name__ == "__main__":
    sys.exit(main())

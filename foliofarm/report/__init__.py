"""report.md and report.html from a results document.

One table per check in the style of the mailing-list tables (rows: folio-size
categories such as thp-aligned-64kB and cont-aligned-64kB, then the check's key
figures; columns: base and series per page size and filesystem), the verdict
table, checkpatch's findings, the builds and the command that reproduces the run.
report.html holds the same content plus one plot per check and page size of the
folio-size distributions, base against series, embedded so it opens offline.

    foliofarm report RESULTS/<run-id>     # render again from results.json (cli/report.py)
    foliofarm report --out DIR SHARD...    # one report from CI shards (one per cell)
"""

from __future__ import annotations

from pathlib import Path

from foliofarm.results import schema
from foliofarm.judge import compare
from foliofarm.results.read import read
from foliofarm.report import plots, render, sections, text
from foliofarm.report.tables import columns
from foliofarm.util import write_atomic


def write(run_dir: Path, doc: schema.Results,
          drawn: dict[tuple[str, str], bytes] | None = None) -> tuple[Path, Path]:
    """report.md, report.html, report.txt and plots/. ``drawn``: plots made
    earlier (from page_part) of page sizes whose cells have not changed since."""
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


def readback(path: Path) -> schema.Results:
    """A results.json handed over (or the run folder holding it), read
    (results/read.py), its verdicts judged again from its cells (a killed run's
    has none; a copy's may be stale or damaged: they are derived data, never
    trusted as read)."""
    return compare.judged(read(path))

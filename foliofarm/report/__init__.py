"""report.md and report.html from a results document.

One table per check in the style of the mailing-list tables (rows: folio-size
categories such as thp-aligned-64kB and cont-aligned-64kB, then the check's key
figures; columns: base and series per page size and filesystem), the verdict
table, checkpatch's findings, the builds and the command that reproduces the run.
report.html holds the same content plus one plot per check and page size of the
folio-size distributions, base against series, embedded so it opens offline.

    foliofarm report RESULTS/<run-id>     # render again from results.json (cli/cmd_report.py)
    foliofarm report --out DIR SHARD...    # one report from CI shards (one per cell)
"""

from __future__ import annotations

from pathlib import Path

from foliofarm.results import schema
from foliofarm.judge import compare
from foliofarm.results.read import read
from foliofarm.report.outputs import write_end
from foliofarm.results.arriving import Moment, Output


def write(run_dir: Path, doc: schema.Results) -> tuple[Path, Path]:
    """The outputs written at the end (report/outputs.py) again from ``doc``
    (`foliofarm report`): report.md, report.html, report.txt and plots/. One
    that fails is an error here: there is no run to go on with."""
    def failed(o: Output, exc: Exception) -> None:
        raise exc
    write_end(run_dir, doc, Moment(), failed)
    return run_dir / "report.md", run_dir / "report.html"


def readback(path: Path) -> schema.Results:
    """A results.json handed over (or the run folder holding it), read
    (results/read.py), its verdicts judged again from its cells (a killed run's
    has none; a copy's may be stale or damaged: they are derived data, never
    trusted as read)."""
    return compare.judged(read(path))

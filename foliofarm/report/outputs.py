"""Every output of a run, in one list: those written with every result
(results/arriving.py: results.json, junit.xml) and those written once at the
end, from what was recorded (the plots, report.md, report.html, report.txt,
each cell's repro.sh). `foliofarm report` writes the end ones again from a
results.json. Adding a format is a function here and one line in OUTPUTS."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from foliofarm.report import plots, render, repro, sections, text
from foliofarm.report.tables import Section, columns
from foliofarm.results.arriving import ARRIVING, Moment, Output
from foliofarm.results.schema import Results
from foliofarm.util import write_atomic


def plot_files(run_dir: Path, doc: Results, at: Moment) -> list[Path]:
    """One PNG per check and page size; those drawn while the run went on
    (page sizes whose cells have not changed since) are not drawn again."""
    pages = {p for p, _, _, _ in columns(doc)} - {p for _, p in at.drawn}
    pngs = {**at.drawn, **plots.draw(doc, pages)}
    at.made["plots"] = pngs
    (run_dir / "plots").mkdir(exist_ok=True)
    out = []
    for (check, page), png in pngs.items():
        write_atomic(f := run_dir / "plots" / f"{check}-{page}.png", png)
        out.append(f)
    return out


def _sections(doc: Results, at: Moment) -> tuple[str, list[Section]]:
    if "sections" not in at.made:
        at.made["sections"] = sections.build(doc, at.made.get("plots", at.drawn))
    return at.made["sections"]


def markdown(run_dir: Path, doc: Results, at: Moment) -> list[Path]:
    write_atomic(f := run_dir / "report.md", render.to_markdown(*_sections(doc, at)) + "\n")
    return [f]


def html(run_dir: Path, doc: Results, at: Moment) -> list[Path]:
    write_atomic(f := run_dir / "report.html", render.to_html(*_sections(doc, at)) + "\n")
    return [f]


def plain_text(run_dir: Path, doc: Results, at: Moment) -> list[Path]:
    write_atomic(f := run_dir / "report.txt", text.render(doc))
    return [f]


def repro_scripts(run_dir: Path, doc: Results, at: Moment) -> list[Path]:
    """Each cell's repro.sh: a run's own (it needs the run's options), not
    written again by `foliofarm report`."""
    return repro.write(run_dir, doc, at.opts) if at.opts is not None else []


OUTPUTS: tuple[Output, ...] = (
    *ARRIVING,
    Output("plots/", "the folio-size distributions, base against series, per check and page size", plot_files),
    Output("report.md", "the report: tables as the list's, verdicts, checkpatch, builds", markdown),
    Output("report.html", "the same with the plots embedded, to open offline", html),
    Output("report.txt", "the report as a reply to the list (plain text, wrapped)", plain_text),
    Output("cells/<cell>/repro.sh", "a cell's run again with the same inputs", repro_scripts),
)


def write_end(run_dir: Path, doc: Results, at: Moment,
              failed: Callable[[Output, Exception], None]) -> dict[str, list[Path]]:
    """The outputs written once at the end, in order; one that fails is told
    to ``failed`` and the others are written all the same (a report that
    fails to render never hides the results)."""
    out: dict[str, list[Path]] = {}
    for o in OUTPUTS:
        if o.arriving:
            continue
        try:
            out[o.name] = o.write(run_dir, doc, at)
        except Exception as exc:     # noqa: BLE001 - said, and the next output is written
            failed(o, exc)
    return out

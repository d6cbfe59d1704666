"""The status page: every series the watcher has seen, newest first, with its
state and why, its verdict per page size and links to its report, as one
static HTML file (STATE/index.html) that reads offline."""

from __future__ import annotations


import os
import time
from pathlib import Path

from foliofarm import matrix, shown
from foliofarm.util import write_atomic
from foliofarm.watch.archive import is_url
from foliofarm.watch.state import Tracked, State

STYLE = """body{font:14px/1.4 sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse}th,td{border:1px solid #ccc;padding:.25em .5em;vertical-align:top}
th{background:#f3f3f3;text-align:left}td.v-pass{background:#e6f4e6}td.v-regression,td.v-build-broken{background:#f8d7d7}
td.v-error,td.v-incomplete{background:#fbe8c8}td.v-changed{background:#fff6cc}.why{color:#666;font-size:90%}"""


def _when(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(t))


def _link(href: str, text: str) -> str:
    return f'<a href="{shown.html(href)}">{shown.html(text)}</a>'


def _subject(r: Tracked, archive: str) -> str:
    if is_url(archive):
        return _link(f"{archive.rstrip('/')}/{r.anchor}/", r.subject)
    return shown.html(r.subject)


def _links(r: Tracked, folder: Path) -> str:
    if not r.run_dir:
        return ""
    run = Path(r.run_dir)
    out = []
    for name in ("report.html", "results.json", "report.txt"):
        if (run / name).is_file():
            out.append(_link(os.path.relpath(run / name, folder), name))
    return " ".join(out)


def row_html(r: Tracked, pages: list[str], folder: Path, archive: str) -> str:
    verdicts = r.page_verdicts()
    cells = []
    for p in pages:
        v = verdicts.get(p)
        cells.append(f'<td class="v-{shown.html(v[0])}">{shown.html(v[0])} &times;{v[1]}</td>'
                     if v else "<td></td>")
    state = shown.html(r.state) + "".join(f'<div class="why">{shown.html(t)}</div>'
                                           for t in (r.reason, r.base) if t)
    return (f"<tr><td>{_subject(r, archive)}</td><td>v{r.version}</td><td>{r.total}</td>"
            f"<td>{shown.html(r.author)}</td><td>{_when(r.date)}</td><td>{state}</td>"
            + "".join(cells) + f"<td>{_links(r, folder)}</td></tr>")


def month(t: float) -> str:
    return time.strftime("%Y-%m", time.gmtime(t))


def render(state: State, folder: Path, archive: str, days: float = 14,
           only: str | None = None) -> str:
    """The status page: the series of the last ``days`` (the month ``only``'s
    for an archive page), newest first, and links to the months before."""
    pages = matrix.page_sizes()
    everything = sorted(state.rows(), key=lambda r: (r.date, r.key), reverse=True)
    since = time.time() - days * 86400
    rows = [r for r in everything if (month(r.date) == only if only else r.date >= since)]
    months = sorted({month(r.date) for r in everything if r.date < since}, reverse=True)
    counts: dict[str, int] = {}
    for r in rows:
        counts[r.state] = counts.get(r.state, 0) + 1
    head = "".join(f"<th>{shown.html(p)}</th>" for p in pages)
    summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "nothing yet"
    span = f"in {only}" if only else f"in the last {days:g} days"
    older = " ".join(_link(f"archive-{m}.html", m) for m in months)
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        "<title>foliofarm watch</title>", f"<style>{STYLE}</style></head><body>",
        f"<h1>foliofarm watch: {shown.html(archive)}</h1>",
        f"<p>{len(rows)} series seen {span} ({shown.html(summary)}); {state.message_count()} "
        f"messages read; updated {_when(time.time())} UTC.</p>",
        (f"<p>Earlier months: {older}</p>" if older and not only else
         '<p><a href="index.html">the last days</a></p>' if only else ""),
        "<table><thead><tr><th>series</th><th>version</th><th>patches</th><th>author</th>"
        f"<th>date (UTC)</th><th>state</th>{head}<th>results</th></tr></thead><tbody>",
        *(row_html(r, pages, folder, archive) for r in rows),
        "</tbody></table>", *([] if only else asks_html(state, since)), "</body></html>", ""])


def asks_html(state: State, since: float) -> list[str]:
    """The reproducers asked for in replies (watch/findings.py) of the last
    days: who asked, on which series, where it stands and why."""
    asks = [a for a in state.asks() if a.asked >= since]
    if not asks:
        return []
    out = ["<h2>Reproducers asked for</h2>",
           "<table><thead><tr><th>asked (UTC)</th><th>by</th><th>series</th><th>reproducer</th>"
           "<th>state</th><th>why</th></tr></thead><tbody>"]
    for a in sorted(asks, key=lambda a: a.asked, reverse=True):
        row = state.get(a.series)
        out.append(f"<tr><td>{_when(a.asked)}</td><td>{shown.html(a.sender)}</td>"
                   f"<td>{shown.html(row.subject if row else a.series)}</td>"
                   f"<td>{shown.html((a.name + ' ' + a.args).strip())}</td>"
                   f"<td>{shown.html(a.state)}</td><td>{shown.html(a.reason[:300])}</td></tr>")
    return out + ["</tbody></table>"]


def write(state: State, folder: Path, archive: str, days: float = 14) -> Path:
    """index.html (the last ``days``) and an archive page per earlier month."""
    path = folder / "index.html"
    write_atomic(path, render(state, folder, archive, days))
    since = time.time() - days * 86400
    for m in {month(r.date) for r in state.rows() if r.date < since}:
        write_atomic(folder / f"archive-{m}.html", render(state, folder, archive, days, only=m))
    return path

"""A report's sections rendered: Markdown (report.md) and HTML (report.html,
its plots embedded so it opens offline)."""

from __future__ import annotations

import base64
import html
import re

from foliofarm import shown
from foliofarm.report.tables import Section
from foliofarm.results.outcome import VERDICTS

def _md_cell(text: str) -> str:
    return shown.markdown_cell(text)


def _numeric(rows: list[list[str]], col: int) -> bool:
    """Right-align a column of figures, like the mailing-list tables."""
    vals = [str(r[col]).rstrip("%") for r in rows if col < len(r) and r[col] not in ("-", "")]
    def num(v: str) -> bool:
        try:
            float(v)
            return True
        except ValueError:
            return False
    return bool(vals) and sum(map(num, vals)) >= len(vals) / 2


def to_markdown(title: str, secs: list[Section]) -> str:
    # every text of a section is quoted for Markdown (shown.py): a Subject or
    # a console line is shown as it was, never taken for markup
    out = [f"# {shown.markdown(title)}", ""]
    for s in secs:
        out += [f"## {shown.markdown(s.title)}", ""]
        for b in s.blocks:
            if b[0] == "p":
                out += [shown.markdown(b[1]), ""]
            elif b[0] == "pre":
                out += [*shown.markdown_pre(b[1]), ""]
            elif b[0] == "table":
                header, rows = b[1], b[2]
                out.append("| " + " | ".join(_md_cell(h) for h in header) + " |")
                out.append("|" + "|".join("---:" if i and _numeric(rows, i) else "---"
                                          for i in range(len(header))) + "|")
                out += ["| " + " | ".join(_md_cell(c) for c in r) + " |" for r in rows]
                out.append("")
            elif b[0] == "img":
                out += [f"![{shown.markdown(b[3])}]({shown.markdown(b[1])})", ""]
    return "\n".join(out)


CSS = """body{font-family:sans-serif;max-width:80em;margin:1em auto;padding:0 1em}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #bbb;padding:2px 6px;
text-align:left;font-family:monospace}td.num,th.num{text-align:right}
pre{background:#f4f4f4;padding:.5em;overflow-x:auto}.v-regression,.v-build-broken{background:#f99}
.v-fixed{background:#9cf}.v-fail,.v-error,.v-incomplete{background:#fcc}.v-xfail,.v-changed,.v-flaky{background:#ffc}
.v-pass{background:#dfd}.v-skip,.v-xpass{background:#eee}"""

# The words a table cell may be coloured by: the cell is exactly one of them.
VERDICT_WORDS = set(VERDICTS)     # the outcomes are among them


def _cell_class(value: str, numeric: bool, row_verdict: str | None, col: int) -> str:
    classes = ["num"] if numeric else []
    word = str(value).strip()
    if word in VERDICT_WORDS:
        classes.append(f"v-{word}")
    elif row_verdict and col == 0:
        classes.append(f"v-{row_verdict}")
    return " ".join(classes)


def _linked(text: str) -> str:
    """A table cell's text, escaped; an address (a LAVA job's page) a link."""
    if re.fullmatch(r"https?://[^\s<>'\"]+", text) and shown.is_clean(text):
        return f"<a href='{shown.html(text)}'>{shown.html(text)}</a>"
    return shown.html(text)


def to_html(title: str, secs: list[Section]) -> str:
    e = shown.html
    out = [f"<!doctype html><html><head><meta charset='utf-8'><title>{e(title)}</title>"
           f"<style>{CSS}</style></head><body><h1>{e(title)}</h1>"]
    for s in secs:
        out.append(f"<h2>{e(s.title)}</h2>")
        for b in s.blocks:
            if b[0] == "p":
                out.append(f"<p>{e(b[1])}</p>")
            elif b[0] == "pre":
                out.append(f"<pre>{e(b[1])}</pre>")
            elif b[0] == "table":
                header, rows = b[1], b[2]
                numeric = [bool(i) and _numeric(rows, i) for i in range(len(header))]
                verdict_col = header.index("verdict") if "verdict" in header else None
                out.append("<table><tr>" + "".join(f"<th class='{'num' if numeric[i] else ''}'>{e(h)}</th>"
                                                   for i, h in enumerate(header)) + "</tr>")
                for r in rows:
                    rv = str(r[verdict_col]) if verdict_col is not None and verdict_col < len(r) else None
                    out.append("<tr>" + "".join(
                        f"<td class='{_cell_class(c, i < len(numeric) and numeric[i], rv, i)}'>{_linked(str(c))}</td>"
                        for i, c in enumerate(r)) + "</tr>")
                out.append("</table>")
            elif b[0] == "img":
                data = base64.b64encode(b[2]).decode()
                out.append(f"<p><img alt='{e(b[3])}' src='data:image/png;base64,{data}'></p>")
    out.append("</body></html>")
    return "\n".join(out)

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
import base64
import copy
import html
import io
import json
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from foliofarm import matrix, schema
from foliofarm.report.results import junit_xml
from foliofarm.judge import compare
from foliofarm.judge.compare import FIGURES, quiet_subtest
from foliofarm.util import write_atomic, write_json

Block = tuple  # ("p", text) | ("table", header, rows) | ("pre", text) | ("img", name, png, alt)


@dataclass
class Section:
    title: str
    blocks: list[Block] = field(default_factory=list)


# The matrix's filesystem order, for columns (cells arrive in any order when
# several guests run at once).
FS_ORDER = tuple(matrix.filesystems())


def page_rank(page: str) -> tuple[int, str]:
    """4k, 16k, 64k in that order (not as text sorts them)."""
    digits = "".join(ch for ch in page if ch.isdigit())
    return (int(digits) if digits else 1 << 30, page)


def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, dict):
        total = sum(v.values()) or 1
        return " ".join(f"{k}K:{100 * n // total}%" for k, n in v.items())
    return str(v)


def _delta(d: Any) -> str:
    if d is None:
        return ""
    return f" ({'+' if d > 0 else ''}{d})" if d else ""


def columns(doc: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """(page, fs, side, kernel label) per column, in matrix order: base then series
    side by side for each page size and filesystem."""
    sides = doc.get("sides")
    cells = [(c["page_size"], c["fs"]) for c in doc["cells"]]
    seen: list[tuple[str, str]] = []
    for pf in cells:
        if pf not in seen:
            seen.append(pf)
    fs_order = {f: i for i, f in enumerate(FS_ORDER)}
    seen.sort(key=lambda pf: (page_rank(pf[0]), fs_order.get(pf[1], len(fs_order)), pf[1]))
    if not sides:
        kernels = {c["kernel"] for c in doc["cells"]}
        return [(p, f, "", k) for p, f in seen for k in sorted(kernels)
                if any(c["page_size"] == p and c["fs"] == f and c["kernel"] == k for c in doc["cells"])]
    return [(p, f, side, sides[side]["kernel"]) for p, f in seen for side in ("base", "series")]


def _by_cell(doc: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, dict[str, Any]]]:
    return {(c["kernel"], c["page_size"], c["fs"]): {k["name"]: k for k in c["checks"]} for c in doc["cells"]}


def check_names(doc: dict[str, Any]) -> list[str]:
    names: list[str] = []
    for cell in doc["cells"]:
        for c in cell["checks"]:
            if c["name"] not in names:
                names.append(c["name"])
    return names


def check_table(doc: dict[str, Any], name: str) -> tuple[list[str], list[list[str]]]:
    cols = columns(doc)
    by = _by_cell(doc)
    results = [by.get((k, p, f), {}).get(name) for p, f, _, k in cols]
    # base/series on a series run; the kernel versions on a compare run
    named = "series" in doc
    header = [name] + [f"{p} {f} {side if named and side else k}" for p, f, side, k in cols]
    cats: list[str] = []
    for r in results:
        for cat in (r or {}).get("metrics", {}).get("categories_pct", {}):
            if cat not in cats:
                cats.append(cat)
    rows = []
    for cat in cats:
        rows.append([cat] + [f"{(r or {}).get('metrics', {}).get('categories_pct', {}).get(cat, 0)}%"
                             if r and "categories_pct" in r.get("metrics", {}) else "-" for r in results])
    for key in FIGURES.get(name, ()):
        if any(r and key in r.get("metrics", {}) for r in results):
            rows.append([key] + [_fmt((r or {}).get("metrics", {}).get(key)) for r in results])
    rows.append(["outcome"] + [(r or {}).get("outcome", "-") for r in results])
    return header, rows


def verdict_matrix(doc: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Checks down, cells across; a selftest gets a row only where some cell
    has news of it (summary.quiet_subtest)."""
    loud = {r["check"] for r in doc.get("verdicts", []) if not quiet_subtest(r)}
    rows = [r for r in doc.get("verdicts", []) if r["check"] in loud]
    cells: list[str] = []
    for r in rows:
        cid = f"{r['page_size']}-{r['fs']}"
        if cid not in cells:
            cells.append(cid)
    table = {(f"{r['page_size']}-{r['fs']}", r["check"]): r["verdict"] for r in rows}
    names = list(dict.fromkeys(r["check"] for r in rows))
    return ["check"] + cells, [[n] + [table.get((c, n), "-") for c in cells] for n in names]


def changes_table(doc: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Rows whose verdict is not a plain pass, with every figure that moved."""
    out = []
    for r in doc.get("verdicts", []):
        moved = r.get("changed") or []
        if (r["verdict"] == "pass" and not moved) or quiet_subtest(r):
            continue
        figs = "; ".join(f"{'!' if f.get('regression') else ''}{f['metric']} {_fmt(f['base'])} → "
                         f"{_fmt(f['series'])}{_delta(f['delta'])}" for f in moved[:12])
        if len(moved) > 12:
            figs += f"; ... {len(moved) - 12} more under Changed figures"
        why = r["series_reason"] if r["verdict"] in ("regression", "fail", "build-broken", "error") \
            else r["base_reason"] if r["verdict"] == "fixed" else ""
        out.append([f"{r['page_size']}-{r['fs']}", r["check"], r["verdict"],
                    f"{_fmt(r['base'])} → {_fmt(r['series'])}", figs, why or ""])
    return ["cell", "check", "verdict", "outcome",
            "figures: base → series (delta); ! moved the wrong way", "reason"], out


def changed_figures(doc: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Every figure that moved beyond the base's noise, one row each."""
    rows = []
    for r in doc.get("verdicts", []):
        for f in r.get("changed") or []:
            rows.append([f"{r['page_size']}-{r['fs']}", r["check"], f["metric"], _fmt(f["base"]),
                         _fmt(f["series"]), _fmt(f["delta"]), _fmt(f.get("noise")),
                         "regression" if f.get("regression") else "changed"])
    return ["cell", "check", "figure", "base", "series", "delta", "noise", "judged"], rows


def crosscheck_tables(doc: dict[str, Any], name: str) -> list[Block]:
    """Per cell, a cross-check's rows (judge/thpmaps.py): each counter the farm
    and the other tool gave, whether they agree and, where they differ by design,
    why. Rows where both say 0 are left out."""
    blocks: list[Block] = []
    by = _by_cell(doc)
    for p, f, side, k in columns(doc):
        r = by.get((k, p, f), {}).get(name)
        rows = (r or {}).get("rows")
        if not rows:
            continue
        shown = [x for x in rows if x.get("farm_kb") or x.get("thpmaps_kb") or not x.get("agrees")]
        blocks.append(("p", f"{p} {f} {side or k}: {r['metrics'].get('disagreements', '?')} "
                            f"disagreement(s), {r['metrics'].get('explained_differences', '?')} "
                            "difference(s) explained."))
        blocks.append(("table", ["counter", "farm kB", "thpmaps kB", "agrees", "why they differ"],
                       [[x["counter"], _fmt(x.get("farm_kb")), _fmt(x.get("thpmaps_kb")),
                         "yes" if x.get("agrees") else ("explained" if x.get("note") else "NO"),
                         x.get("note", "")] for x in shown]))
    return blocks


def build(doc: dict[str, Any], plots: dict[tuple[str, str], bytes] | None = None) -> tuple[str, list[Section]]:
    sides = doc.get("sides")
    title = (f"foliofarm: {sides['base']['kernel']} vs {sides['series']['kernel']}" if sides
             else f"foliofarm run {doc['run_id']}")
    secs: list[Section] = []

    s = Section("Summary")
    if sides:
        verdicts = [r["verdict"] for r in doc.get("verdicts", []) if not r.get("subtest_of")]
        counts = ", ".join(f"{verdicts.count(v)} {v}" for v in dict.fromkeys(verdicts))
        s.blocks.append(("p", f"Base: {sides['base']['origin']} ({sides['base']['kernel']}). "
                              f"Against: {sides['series']['origin']} ({sides['series']['kernel']})."))
        s.blocks.append(("p", f"Verdicts: {counts or 'none'}."))
    s.blocks.append(("p", f"Run {doc['run_id']}, started {doc['started']}, "
                          f"{'complete' if doc.get('complete') else 'INCOMPLETE'}."))
    for e in doc.get("errors", []):
        s.blocks.append(("pre", f"error ({e['stage']}): {e['message']}"))
    secs.append(s)

    if ser := doc.get("series"):
        s = Section("Series")
        if ser.get("cover"):
            s.blocks.append(("p", f"Cover letter: {ser['cover']}"))
        s.blocks.append(("table", ["#", "subject", "files"],
                         [[str(p["number"]), p["subject"], ", ".join(p["files"])] for p in ser["patches"]]))
        for note in ser.get("intake_notes") or []:
            s.blocks.append(("p", f"Intake: {note}."))
        if ser.get("base_commit_note"):
            s.blocks.append(("p", "Note: " + ser["base_commit_note"]))
        secs.append(s)

    if doc.get("verdicts"):
        s = Section("Verdicts")
        s.blocks.append(("table", *verdict_matrix(doc)))
        header, rows = changes_table(doc)
        if rows:
            s.blocks.append(("p", "What changed, or did not pass:"))
            s.blocks.append(("table", header, rows))
        else:
            s.blocks.append(("p", "Every check passed on both sides with the same figures."))
        secs.append(s)
        header, rows = changed_figures(doc)
        if rows:
            s = Section("Changed figures")
            s.blocks.append(("p", "Every figure that moved beyond the noise measured by booting the "
                                  "base twice; a regression moved the wrong way beyond the tolerance "
                                  "declared in tests/vmtests/expectations/."))
            s.blocks.append(("table", header, rows))
            secs.append(s)
        if doc.get("unconfirmed"):
            s = Section("Unconfirmed moves")
            s.blocks.append(("p", "Figures that moved on the series' first boot but measured the "
                                  "base's value on a second: timing, not the series. Each is counted "
                                  "as that cell's noise for the figure."))
            s.blocks.append(("table", ["cell", "check", "figure", "base", "series", "second boot"],
                             [[u["cell"], u["check"], u["metric"], _fmt(u["base"]), _fmt(u["series"]),
                               _fmt(u["confirm"])] for u in doc["unconfirmed"]]))
            secs.append(s)

    for name in check_names(doc):
        s = Section(f"Check: {name}")
        s.blocks.append(("table", *check_table(doc, name)))
        s.blocks += crosscheck_tables(doc, name)
        for (check, page), png in sorted((plots or {}).items(), key=lambda kv: (kv[0][0], page_rank(kv[0][1]))):
            if check == name:
                s.blocks.append(("img", f"plots/{check}-{page}.png", png,
                                 f"{check} on {page}: folio-size distribution"))
        secs.append(s)

    if doc.get("checkpatch") is not None:
        s = Section("checkpatch.pl")
        cp = doc["checkpatch"]
        s.blocks.append(("table", ["#", "subject", "errors", "warnings", "checks"],
                         [[str(p["number"]), p["subject"], str(p["errors"]), str(p["warnings"]),
                           str(p["checks"])] for p in cp]))
        lines = [f"{p['number']}: {f['level']}:{f['type']}: {f['message']} (line {f['line']})"
                 for p in cp for f in p["findings"]]
        if lines:
            s.blocks.append(("pre", "\n".join(lines)))
        secs.append(s)

    s = Section("Builds")
    s.blocks.append(("table", ["side", "kernel", "page size", "build", "seconds"],
                     [[k.get("side") or "", k["kernel"], k["page_size"],
                       "BROKEN" if k.get("build_failed") else ("built" if k.get("built_now") else "cached"),
                       _fmt(k.get("build_seconds")) if k.get("built_now") else ""]
                      for k in doc.get("kernels", [])]))
    for k in doc.get("kernels", []):
        if k.get("build_failed"):
            s.blocks.append(("pre", f"{k['kernel']} {k['page_size']}:\n{k['error']}"))
    if doc.get("each_commit"):
        s.blocks.append(("p", "Every commit (--each-commit):"))
        s.blocks.append(("table", ["#", "commit", "subject", "page size", "builds"],
                         [[str(e["number"]), e["commit"][:12], e["subject"], e["page_size"],
                           "yes" if e["ok"] else "NO"] for e in doc["each_commit"]]))
        for e in doc["each_commit"]:
            if not e["ok"]:
                s.blocks.append(("p", f"First commit that does not build: {e['number']} "
                                      f"{e['subject']!r} ({e['page_size']})"))
                s.blocks.append(("pre", e["errors"]))
    for b in doc.get("boots", []):
        if b.get("reused"):
            s.blocks.append(("p", f"{b['kernel']} {b['page_size']}: base measurements reused from run "
                                  f"{b.get('measured_by')} (same kernel, guest programs, images and checks)"))
    secs.append(s)

    if m := doc.get("machine"):
        s = Section("Machine")
        s.blocks.append(("table", ["", ""], [[k, str(v)] for k, v in m.items()]))
        secs.append(s)

    s = Section("Reproduce")
    shards = doc.get("shard_commands") or []
    if shards:
        s.blocks.append(("p", f"Merged from {len(shards)} shards; each ran:"))
        s.blocks += [("pre", shlex.join(c)) for c in shards]
    else:
        s.blocks.append(("pre", shlex.join(doc["command"])))
    for k in doc.get("kernels", []):
        if k.get("reproduce"):
            s.blocks.append(("pre", f"# {k['kernel']} {k['page_size']}\n{k['reproduce']}"))
    secs.append(s)
    return title, secs


def _md_cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


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
    out = [f"# {title}", ""]
    for s in secs:
        out += [f"## {s.title}", ""]
        for b in s.blocks:
            if b[0] == "p":
                out += [b[1], ""]
            elif b[0] == "pre":
                out += ["```", b[1], "```", ""]
            elif b[0] == "table":
                header, rows = b[1], b[2]
                out.append("| " + " | ".join(_md_cell(h) for h in header) + " |")
                out.append("|" + "|".join("---:" if i and _numeric(rows, i) else "---"
                                          for i in range(len(header))) + "|")
                out += ["| " + " | ".join(_md_cell(c) for c in r) + " |" for r in rows]
                out.append("")
            elif b[0] == "img":
                out += [f"![{b[3]}]({b[1]})", ""]
    return "\n".join(out)


CSS = """body{font-family:sans-serif;max-width:80em;margin:1em auto;padding:0 1em}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #bbb;padding:2px 6px;
text-align:left;font-family:monospace}td.num,th.num{text-align:right}
pre{background:#f4f4f4;padding:.5em;overflow-x:auto}.v-regression,.v-build-broken{background:#f99}
.v-fixed{background:#9cf}.v-fail,.v-error,.v-incomplete{background:#fcc}.v-xfail,.v-changed{background:#ffc}
.v-pass{background:#dfd}.v-skip,.v-xpass{background:#eee}"""

# The words a table cell may be coloured by: the cell is exactly one of them.
VERDICT_WORDS = {"pass", "regression", "build-broken", "fixed", "fail", "error", "incomplete",
                 "xfail", "changed", "skip", "xpass"}


def _cell_class(value: str, numeric: bool, row_verdict: str | None, col: int) -> str:
    classes = ["num"] if numeric else []
    word = str(value).strip()
    if word in VERDICT_WORDS:
        classes.append(f"v-{word}")
    elif row_verdict and col == 0:
        classes.append(f"v-{row_verdict}")
    return " ".join(classes)


def to_html(title: str, secs: list[Section]) -> str:
    e = html.escape
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
                        f"<td class='{_cell_class(c, i < len(numeric) and numeric[i], rv, i)}'>{e(str(c))}</td>"
                        for i, c in enumerate(r)) + "</tr>")
                out.append("</table>")
            elif b[0] == "img":
                data = base64.b64encode(b[2]).decode()
                out.append(f"<p><img alt='{e(b[3])}' src='data:image/png;base64,{data}'></p>")
    out.append("</body></html>")
    return "\n".join(out)


def distribution(result: dict[str, Any] | None) -> dict[str, float]:
    """What a plot shows for one result: the folio-size categories if the check
    has them, else its folio size histogram as shares."""
    m = (result or {}).get("metrics", {})
    if m.get("categories_pct"):
        return {k: float(v) for k, v in m["categories_pct"].items()}
    hist = m.get("folio_kb_hist") or {}
    total = sum(hist.values()) or 1
    return {f"{k}kB": 100.0 * v / total for k, v in hist.items()}


def plots(doc: dict[str, Any], pages: set[str] | None = None) -> dict[tuple[str, str], bytes]:
    """One PNG per check and page size (of ``pages``, default all): the folio-size
    distribution per filesystem, base against series (or one bar per kernel on
    a one-sided run)."""
    from matplotlib.figure import Figure   # no pyplot: no global figure state, no GUI backend

    cols = columns(doc)
    by = _by_cell(doc)
    out = {}
    for name in check_names(doc):
        for page in dict.fromkeys(p for p, _, _, _ in cols if pages is None or p in pages):
            pcols = [c for c in cols if c[0] == page]
            dists = {(f, side or k): distribution(by.get((k, p, f), {}).get(name)) for p, f, side, k in pcols}
            cats = list(dict.fromkeys(c for d in dists.values() for c in d))
            if not cats:
                continue
            fss = list(dict.fromkeys(f for f, _ in dists))
            fig = Figure(figsize=(4.5 * len(fss), 3.2))
            axes = fig.subplots(1, len(fss), squeeze=False, sharey=True)
            for ax, fs in zip(axes[0], fss):
                sides = [s for f, s in dists if f == fs]
                width = 0.8 / max(1, len(sides))
                for i, side in enumerate(sides):
                    d = dists[(fs, side)]
                    ax.bar([x + i * width for x in range(len(cats))], [d.get(c, 0) for c in cats],
                           width, label=side)
                ax.set_xticks([x + 0.4 - width / 2 for x in range(len(cats))], cats, rotation=45,
                              ha="right", fontsize=7)
                ax.set_title(f"{name} {page} {fs}", fontsize=9)
                ax.set_ylim(0, 105)
                ax.legend(fontsize=7)
            axes[0][0].set_ylabel("% of mapped memory")
            # fixed margins for the rotated category labels: tight_layout measured
            # every label of every plot again, half the report's time
            fig.subplots_adjust(left=0.8 / (4.5 * len(fss)), right=0.99, top=0.9, bottom=0.42,
                                wspace=0.08)
            buf = io.BytesIO()
            fig.savefig(buf, format="png", dpi=80)
            out[(name, page)] = buf.getvalue()
    return out


def page_part(doc: dict[str, Any], page: str) -> dict[str, Any]:
    """A copy of one page size's cells (and the sides): its plots can be drawn
    from it while the next page size is measured, so that the report at the
    end has less to do."""
    return {"sides": copy.deepcopy(doc.get("sides")),
            "cells": copy.deepcopy([c for c in doc["cells"] if c["page_size"] == page])}


def write(run_dir: Path, doc: dict[str, Any],
          drawn: dict[tuple[str, str], bytes] | None = None) -> tuple[Path, Path]:
    """report.md, report.html, report.txt and plots/. ``drawn``: plots made
    earlier (from page_part) of page sizes whose cells have not changed since."""
    drawn = drawn or {}
    pages = {p for p, _, _, _ in columns(doc)} - {p for _, p in drawn}
    pngs = {**drawn, **plots(doc, pages)}
    (run_dir / "plots").mkdir(exist_ok=True)
    for (check, page), png in pngs.items():
        write_atomic(run_dir / "plots" / f"{check}-{page}.png", png)
    title, secs = build(doc, pngs)
    md, page = run_dir / "report.md", run_dir / "report.html"
    write_atomic(md, to_markdown(title, secs) + "\n")
    write_atomic(page, to_html(title, secs) + "\n")
    from foliofarm.report import text
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


class MergeError(ValueError):
    pass


def merge(docs: list[dict[str, Any]]) -> dict[str, Any]:
    """One results document from the shards of a CI matrix (one cell each): their
    cells, kernels, boots and per-commit builds together, verdicts judged again."""
    if not docs:
        raise MergeError("nothing to merge")
    first = docs[0]
    for d in docs[1:]:
        if d.get("sides") != first.get("sides"):
            raise MergeError(f"run {d['run_id']} compared {d.get('sides')}, run {first['run_id']} "
                             f"{first.get('sides')}: shards of one run must compare the same kernels")
    out = {k: v for k, v in first.items() if k not in ("verdicts",)}
    out["run_id"] = "merged"
    out["merged_from"] = [d["run_id"] for d in docs]
    out["shard_commands"] = [d["command"] for d in docs]
    out["complete"] = all(d.get("complete") for d in docs)
    keys = {"cells": ("kernel", "page_size", "fs"), "kernels": ("side", "kernel", "page_size"),
            "boots": ("kernel", "page_size", "console_log"), "each_commit": ("number", "page_size"),
            "errors": ("stage", "message"), "unconfirmed": ("cell", "check", "metric")}
    out["noise"] = {}
    for d in docs:      # each shard measured its own cells' noise
        for cell, by_check in (d.get("noise") or {}).items():
            out["noise"].setdefault(cell, {}).update(by_check)
    for key, ident in keys.items():
        seen: dict[tuple, Any] = {}
        for d in docs:
            for item in d.get(key, []):
                seen.setdefault(tuple(item.get(i) for i in ident), item)
        out[key] = list(seen.values())
    if out.get("sides"):
        out["verdicts"] = compare.verdicts(out)
    return out


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
        out_dir.mkdir(parents=True, exist_ok=True)
        write_json(out_dir / "results.json", doc)
        write_atomic(out_dir / "junit.xml", junit_xml(doc))   # one file for the CI server
    md, page = write(out_dir, doc)
    print(md)
    print(page)
    return 0


if __name__ == "__main__":
    sys.exit(main())

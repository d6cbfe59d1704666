"""The report's plots: one PNG per check and page size of the folio-size
distributions, base against series (matplotlib, without pyplot)."""

from __future__ import annotations

import io

from foliofarm.report.tables import by_cell, check_names, columns
from foliofarm.results.schema import CheckResult, Results


def distribution(result: CheckResult | None) -> dict[str, float]:
    """What a plot shows for one result: the folio-size categories if the check
    has them, else its folio size histogram as shares."""
    m = result.metrics if result else {}
    if m.get("categories_pct"):
        return {k: float(v) for k, v in m["categories_pct"].items()}
    hist = m.get("folio_kb_hist") or {}
    total = sum(hist.values()) or 1
    return {f"{k}kB": 100.0 * v / total for k, v in hist.items()}


def draw(doc: Results, pages: set[str] | None = None) -> dict[tuple[str, str], bytes]:
    """One PNG per check and page size (of ``pages``, default all): the folio-size
    distribution per filesystem, base against series (or one bar per kernel on
    a one-sided run)."""
    from matplotlib.figure import Figure   # no pyplot: no global figure state, no GUI backend

    cols = columns(doc)
    by = by_cell(doc)
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


def page_part(doc: Results, page: str) -> Results:
    """One page size's cells (and what a document must have): its plots can be
    drawn from them while the next page size is measured, so that the report
    at the end has less to do."""
    return Results(run_id=doc.run_id, command=doc.command, complete=doc.complete, started=doc.started,
                   sides=doc.sides, cells=[c for c in doc.cells if c.page_size == page])

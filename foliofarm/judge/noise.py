"""The noise of each figure: the range it took across the clean boots of the
same base, and the moves a second boot of the series did not repeat."""

from __future__ import annotations

from typing import Any

from foliofarm.judge import compare, figures
from foliofarm.judge.catalogue import Check
from foliofarm.judge.checks import judge_measurement
from foliofarm.judge.measurement import Measurement
from foliofarm.matrix import Cell
from foliofarm.results.schema import Results, Unconfirmed
from foliofarm.results.outcome import Outcome

def sample_figures(cells: list[Cell], checks: list[Check], kernel_xy: str, measured: dict[str, Measurement]
                   ) -> dict[str, dict[str, dict[str, float | int | None]]]:
    """One boot's figures (behaviour only), per cell and check, and for a
    selftests run each test's count of results."""
    out: dict[str, dict[str, dict[str, float | int | None]]] = {}
    for cell in cells:
        for chk in checks:
            m = measured.get(f"{cell.fs.name}/{chk.name}")
            if not m:
                continue
            o = judge_measurement(chk, m, cell, kernel_xy)
            figs: dict[str, float | int | None] = dict(figures.flatten(o.metrics, chk.name))
            figs.update(compare.test_counts(o.subtests))
            out.setdefault(f"{cell.page.name}-{cell.fs.name}", {})[chk.name] = figs
    return out


def fold(ranges: dict[str, Any], sample: dict[str, dict[str, dict[str, Any]]]) -> dict[str, Any]:
    """Every clean boot of a base folded into the range of each figure (lowest,
    highest, how many boots had it and how many gave None), kept with the
    saved measurements: the noise is learnt from every clean boot of the same
    base the farm made (the first, each repeat, each --fresh), not one pair."""
    for key, by_check in sample.items():
        for check, figs in by_check.items():
            r = ranges.setdefault(key, {}).setdefault(check, {"samples": 0, "figures": {}})
            r["samples"] += 1
            for name, v in figs.items():
                lo, hi, nones, seen = r["figures"].get(name, [None, None, 0, 0])
                if v is None:
                    nones += 1
                else:
                    lo, hi = (v, v) if lo is None else (min(lo, v), max(hi, v))
                r["figures"][name] = [lo, hi, nones, seen + 1]
    return ranges


def noise_of(ranges: dict[str, Any]) -> dict[str, dict[str, dict[str, float]]]:
    """Per cell, check and figure: how far it moved across the base's clean
    boots; infinity where it was None in some and a number in others, or
    missing from some."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for key, by_check in ranges.items():
        for check, r in by_check.items():
            n = out.setdefault(key, {}).setdefault(check, {})
            for name, (lo, hi, nones, seen) in r["figures"].items():
                if seen < r["samples"] or 0 < nones < seen:
                    n[name] = float("inf")
                else:
                    n[name] = 0.0 if lo is None else round(abs(float(hi) - float(lo)), 4)
    return out


def moved_pairs(doc: Results, cells: list[Cell], checks: list[Check]
                ) -> list[tuple[Cell, Check, list[dict[str, Any]]]]:
    """(cell, check, moved figures) of the series side ``cells`` that passed on
    both sides with figures that moved beyond the base's noise."""
    if doc.sides is None or not cells:
        return []
    base_label = doc.sides.base.kernel
    by = {(c.kernel, c.fs, ch.name): ch for c in doc.cells
          if c.page_size == cells[0].page.name for ch in c.checks}
    out = []
    for cell in cells:
        for chk in checks:
            b, s = by.get((base_label, cell.fs.name, chk.name)), by.get((cell.kernel, cell.fs.name, chk.name))
            if not b or not s or b.outcome != Outcome.PASS or s.outcome != Outcome.PASS:
                continue
            moved = figures.compare(chk.name, b.metrics, s.metrics,
                                    doc.noise.get(f"{cell.page.name}-{cell.fs.name}", {}).get(chk.name))
            if moved:
                out.append((cell, chk, moved))
    return out


def settle_moves(cell: Cell, check: str, moved: list[dict[str, Any]], again: dict[str, Any]
                 ) -> tuple[list[Unconfirmed], dict[str, dict[str, dict[str, float]]]]:
    """A move that a second boot of the series does not repeat (it measures the
    base's value again) came from timing, not from the series: the figure's
    noise on that cell takes the move, and the move is listed under
    "unconfirmed". A move that repeats, or lands elsewhere, stands. Returns
    the unconfirmed moves and the noise they add (cell -> check -> figure),
    for the run to record."""
    now = figures.flatten(again, check)
    out, noise = [], {}
    for f in moved:
        x, y, z = f["base"], f["series"], now.get(f["metric"])
        if z != x:
            continue
        n = noise.setdefault(f"{cell.page.name}-{cell.fs.name}", {}).setdefault(check, {})
        n[f["metric"]] = float("inf") if x is None or y is None else abs(float(y) - float(x))
        out.append(Unconfirmed(cell=cell.id, check=check, metric=f["metric"], base=x, series=y, confirm=z))
    return out, noise

"""Figures: every number a check reports, flattened to one name each, their
noise between two boots of the same kernel, and how a move from base to series
is judged: `changed` beyond the noise, `regression` when it moves the wrong way
beyond the tolerance the expectations data declares for it.

The declarations live beside the bounds, in tests/vmtests/expectations/<check>.toml:

    [figures.aligned_pct]
    better = "higher"          # "higher", "lower" or "exact" (any move is wrong)
    tolerance = 0.5            # in the figure's own unit
    guards = "mm/filemap.c do_sync_mmap_readahead(): exec text read in exec_folio_order() folios"
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from functools import cache
from typing import Any

from foliofarm import datafiles
from foliofarm.paths import VMTESTS

# Not figures of the kernel's behaviour: how long the guest took, what was asked.
NOT_FIGURES = {"guest_seconds", "transfer_seconds", "folio_kb", "touches", "read_ahead_kb", "seed", "ra_pages",
               "exec_folio_pages"}
BETTER = ("higher", "lower", "exact")


@dataclass(frozen=True)
class Spec:
    pattern: str
    better: str
    tolerance: float
    guards: str
    none: str = "worse"      # a value of None (e.g. "never stopped") against a number


@cache
def specs(check: str) -> tuple[Spec, ...]:
    path = VMTESTS / "expectations" / f"{check}.toml"
    if not path.is_file():
        return ()
    table = datafiles.load(path, datafiles.ExpectationsFile).get("figures", {})
    out = []
    for name, row in table.items():
        if row.get("better") not in BETTER:
            raise ValueError(f"{path}: figures.{name}.better must be one of {', '.join(BETTER)}")
        if not row.get("guards"):
            raise ValueError(f"{path}: figures.{name} must say what code it guards (guards = ...)")
        out.append(Spec(name, row["better"], float(row.get("tolerance", 0)), row["guards"],
                        row.get("none", "worse")))
    return tuple(out)


def spec_for(check: str, figure: str) -> Spec | None:
    for s in specs(check):
        if fnmatch.fnmatchcase(figure, s.pattern):
            return s
    return None


def flatten(metrics: dict[str, Any]) -> dict[str, float | int | None]:
    """One name per number: nested histograms as "folio_kb_hist.64", lists as
    "brought_kb_per_touch[3]". Strings and timing are not figures."""
    out: dict[str, float | int | None] = {}

    def put(name: str, v: Any) -> None:
        if isinstance(v, bool):
            out[name] = int(v)
        elif isinstance(v, (int, float)) or v is None:
            out[name] = v
        elif isinstance(v, dict):
            for k, x in v.items():
                put(f"{name}.{k}", x)
        elif isinstance(v, (list, tuple)):
            for i, x in enumerate(v):
                put(f"{name}[{i}]", x)

    for k, v in metrics.items():
        if k not in NOT_FIGURES:
            put(k, v)
    return out


def noise(a: dict[str, Any], b: dict[str, Any]) -> dict[str, float]:
    """How far each figure moved between two measurements of the same kernel
    (a figure present in only one, or None in one, moved by infinity)."""
    fa, fb = flatten(a), flatten(b)
    out: dict[str, float] = {}
    for k in sorted(set(fa) | set(fb)):
        x, y = fa.get(k), fb.get(k)
        if x is None and y is None:
            out[k] = 0.0
        elif x is None or y is None:
            out[k] = float("inf")
        else:
            out[k] = round(abs(float(y) - float(x)), 4)
    return out


def compare(check: str, base: dict[str, Any], series: dict[str, Any],
            noise_of: dict[str, float] | None) -> list[dict[str, Any]]:
    """Every figure that moved from base to series beyond its noise, each with
    base, series, delta, noise, and "regression" when it moved the wrong way
    beyond its declared tolerance. Without measured noise, any move counts."""
    fa, fb = flatten(base), flatten(series)
    out = []
    for k in sorted(set(fa) | set(fb), key=_natural):
        x, y = fa.get(k), fb.get(k)
        if x == y:
            continue
        n = (noise_of or {}).get(k, 0.0)
        if n == float("inf") or (x is not None and y is not None and abs(float(y) - float(x)) <= n):
            continue      # the figure is not steady on this cell
        spec = spec_for(check, k)
        row: dict[str, Any] = {"metric": k, "base": x, "series": y,
                               "delta": None if x is None or y is None else _round(y - x),
                               "noise": None if n == float("inf") else n, "regression": False}
        if spec is not None:
            row["guards"] = spec.guards
            row["regression"] = _wrong_way(spec, x, y, n)
        out.append(row)
    return out


def _wrong_way(spec: Spec, x: Any, y: Any, noise: float) -> bool:
    if x is None or y is None:
        if spec.better == "exact":
            return True
        # None is "never happened" (e.g. readahead never stopped): better or worse
        # than any number, as declared
        return (y is None) == (spec.none == "worse")
    margin = max(spec.tolerance, noise)
    if spec.better == "higher":
        return y < x - margin
    if spec.better == "lower":
        return y > x + margin
    return abs(y - x) > margin


def _round(v: float) -> float | int:
    return round(v, 2) if isinstance(v, float) else v


def _natural(name: str) -> tuple:
    import re
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name))

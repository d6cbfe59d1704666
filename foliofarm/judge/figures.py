"""Figures: every number a check reports, flattened to one name each (their
noise across clean boots of the base is noise.py's, over the boots
measure/passes.py makes), and how a move from base to series is judged:
`changed` beyond the noise, `regression` when it moves the wrong way beyond
the tolerance the expectations data declares for it.

Every figure has a kind, and only behaviour is judged:
- behaviour: what the kernel did (folio sizes, readahead windows, counts of
  its own tests' results). Judged base against series.
- timing: how long something took under TCG (guest_seconds, any "*_seconds").
  It moves with the host's load, not with the kernel: shown, never judged.
- input: what the guest program was asked to do (touches, the seed).
- summary: a count over parts that are judged one by one (a selftests run's
  pass/fail counts: each test has a verdict of its own).

The declarations live beside the bounds, in tests/vmtests/expectations/<check>.toml:

    [figures.aligned_pct]
    better = "higher"          # "higher", "lower" or "exact" (any move is wrong)
    tolerance = 0.5            # in the figure's own unit
    guards = "mm/filemap.c do_sync_mmap_readahead(): exec text read in exec_folio_order() folios"

    [figures.thpmaps_seconds]
    kind = "timing"
    guards = "how long tools/mm/thpmaps ran in the guest"
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from functools import cache
from typing import Any

from foliofarm import datafiles
from foliofarm.paths import VMTESTS

KINDS = ("behaviour", "timing", "input", "summary")
# Figures of every check, or of several, that are not the kernel's behaviour:
# the farm adds the guest's times to every result; the rest are what the guest
# programs are asked to do. A check declares its own in its expectations.
COMMON_KINDS = {"guest_seconds": "timing", "transfer_seconds": "timing",
                "folio_kb": "input", "touches": "input", "read_ahead_kb": "input", "seed": "input",
                "ra_pages": "input", "exec_folio_pages": "input"}
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
        if row.get("kind", "behaviour") != "behaviour":
            continue          # shown, never judged (kind_of)
        if row.get("better") not in BETTER:
            raise ValueError(f"{path}: figures.{name}.better must be one of {', '.join(BETTER)}")
        if not row.get("guards"):
            raise ValueError(f"{path}: figures.{name} must say what code it guards (guards = ...)")
        out.append(Spec(name, row["better"], float(row.get("tolerance", 0)), row["guards"],
                        row.get("none", "worse")))
    return tuple(out)


@cache
def declared(check: str) -> tuple[tuple[str, str, str], ...]:
    """(pattern, kind, why) of the figures ``check`` declares other than behaviour."""
    path = VMTESTS / "expectations" / f"{check}.toml"
    if not path.is_file():
        return ()
    table = datafiles.load(path, datafiles.ExpectationsFile).get("figures", {})
    return tuple((name, row["kind"], row["guards"]) for name, row in table.items()
                 if row.get("kind", "behaviour") != "behaviour")


def kind_of(check: str | None, figure: str) -> str:
    """A figure's kind (see above) by its top-level name: declared by the
    check, common to checks, or timing by its name (anything in seconds,
    whoever adds it); else behaviour."""
    top = figure.split(".")[0].split("[")[0]
    for pattern, kind, _ in declared(check) if check else ():
        if fnmatch.fnmatchcase(top, pattern):
            return kind
    if top in COMMON_KINDS:
        return COMMON_KINDS[top]
    if top == "seconds" or top.endswith("_seconds"):
        return "timing"
    return "behaviour"


def is_pattern(name: str) -> bool:
    """Whether a figure's name in a row is a pattern (fnmatch) for several."""
    return any(c in name for c in "*?[")


def spec_for(check: str, figure: str) -> Spec | None:
    for s in specs(check):
        if fnmatch.fnmatchcase(figure, s.pattern):
            return s
    return None


def flatten(metrics: dict[str, Any], check: str | None = None) -> dict[str, float | int | None]:
    """One name per number of the kernel's behaviour: nested histograms as
    "folio_kb_hist.64", lists as "brought_kb_per_touch[3]". Strings are not
    figures, nor is what kind_of says is timing, input or a summary."""
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
        if kind_of(check, k) == "behaviour":
            put(k, v)
    return out


def compare(check: str, base: dict[str, Any], series: dict[str, Any],
            noise_of: dict[str, float] | None) -> list[dict[str, Any]]:
    """Every figure that moved from base to series beyond its noise, each with
    base, series, delta, noise, and "regression" when it moved the wrong way
    beyond its declared tolerance. Without measured noise, any move counts.
    Only behaviour is compared: timing, inputs and summaries never move a verdict."""
    fa, fb = flatten(base, check), flatten(series, check)
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

"""Base against series (or one kernel against another): a verdict per cell and
check, with the figures of both sides and their deltas. Pure functions over the
results document, so a recorded results.json can be judged again on any host."""

from __future__ import annotations

from typing import Any

from foliofarm.judge import figures as figs

GOOD = {"pass", "xpass"}
BAD = {"fail", "xfail"}
# What a verdict means for the exit status: these fail a pre-submit run.
FAILING_VERDICTS = {"regression", "build-broken"}

# Figures compared side by side, per check (metric keys of the results).
FIGURES: dict[str, tuple[str, ...]] = {
    "exec-text": ("aligned_pct", "pte_cont_pct", "max_folio_kb", "faults"),
    "elf-text": ("aligned_pct", "pte_cont_pct", "first_folio_kb", "max_folio_kb"),
    "elf-text-2m": ("aligned_pct", "pte_cont_pct", "first_folio_kb", "max_folio_kb"),
    "mmap-miss": ("exec_ra_touches", "control_ra_touches"),
    "force-thp-ra": ("max_folio_kb", "pte_cont_pct", "pmd_mapped_pct"),
    "anon-mthp": ("max_folio_kb", "pte_cont_pct"),
    "file-collapse": ("file_pmd_mapped_kb", "file_pmd_mapped_kb_after_write_open", "collapse_errno"),
    "sparse-read": ("plain_first_without_ra", "huge_first_without_ra", "huge_max_order"),
    "console": ("splats",),
}


def verdict(base: str | None, new: str | None) -> str:
    """pass / fail / regression / fixed from the two outcomes, plus xfail (a known
    failure on both), skip, error (either side could not measure) and incomplete
    (a side is missing). Figures refine it further: see verdicts()."""
    if base is None or new is None:
        return "incomplete"
    if "error" in (base, new):
        return "error"
    if "skip" in (base, new):
        return "skip"
    if base in GOOD and new in GOOD:
        return "pass"
    if base in GOOD and new in BAD:
        return "regression"
    if base in BAD and new in GOOD:
        return "fixed"
    return "xfail" if base == new == "xfail" else "fail"


def _delta(a: Any, b: Any) -> Any:
    if isinstance(a, bool) or isinstance(b, bool):
        return None
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        d = b - a
        return round(d, 2) if isinstance(d, float) else d
    return None


def figures(check: str, base: dict[str, Any] | None, new: dict[str, Any] | None) -> list[dict[str, Any]]:
    bm = (base or {}).get("metrics", {})
    nm = (new or {}).get("metrics", {})
    out = []
    for key in FIGURES.get(check, ()):
        if key in bm or key in nm:
            a, b = bm.get(key), nm.get(key)
            out.append({"metric": key, "base": a, "series": b, "delta": _delta(a, b)})
    return out


def broken_pages(doc: dict[str, Any], side: str) -> set[str]:
    """Page sizes whose kernel on ``side`` did not build."""
    return {k["page_size"] for k in doc.get("kernels", [])
            if k.get("side") == side and k.get("build_failed")}


def verdicts(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per (page size, filesystem, check) of a two-sided results document."""
    sides = doc.get("sides") or {}
    if "base" not in sides or "series" not in sides:
        return []
    base_k, new_k = sides["base"]["kernel"], sides["series"]["kernel"]
    cells: dict[tuple[str, str, str], dict[str, Any]] = {}
    order: list[tuple[str, str]] = []
    for cell in doc["cells"]:
        key = (cell["page_size"], cell["fs"])
        if key not in order:
            order.append(key)
        for c in cell["checks"]:
            cells[(cell["kernel"], *key, c["name"])] = c
    broken = broken_pages(doc, "series")
    names: list[str] = []
    for cell in doc["cells"]:
        for c in cell["checks"]:
            if c["name"] not in names:
                names.append(c["name"])
    noise = doc.get("noise") or {}
    # Between two kernel versions (--compare) a figure that moved is news, not a
    # regression: the newer kernel is meant to behave differently. Against its
    # own base, a series that moves a figure the wrong way regressed.
    judge_direction = "series" in doc
    rows = []
    for page, fs in order:
        for name in names:
            b = cells.get((base_k, page, fs, name))
            n = cells.get((new_k, page, fs, name))
            v = "build-broken" if page in broken else verdict(b and b["outcome"], n and n["outcome"])
            moved: list[dict[str, Any]] = []
            if b and n and v in ("pass", "fail", "xfail", "fixed", "regression"):
                moved = figs.compare(name, b["metrics"], n["metrics"],
                                     noise.get(f"{page}-{fs}", {}).get(name))
            if not judge_direction:
                for f in moved:
                    f["regression"] = False
            if v in ("pass", "fail", "xfail") and any(f["regression"] for f in moved):
                v = "regression"      # a figure moved the wrong way beyond its tolerance
            elif v == "pass" and moved:
                v = "changed"         # a figure moved beyond the base's noise
            rows.append({"page_size": page, "fs": fs, "check": name, "verdict": v,
                         "base": b and b["outcome"], "series": n and n["outcome"],
                         "base_reason": (b or {}).get("reason", ""),
                         "series_reason": (n or {}).get("reason", ""),
                         "figures": figures(name, b, n), "changed": moved})
    return rows


def exit_code(doc: dict[str, Any], strict_style: bool = False) -> int:
    """1 for a regression, a build break (tip or any commit) or a new splat (a
    console regression), or under --strict-style a checkpatch error or warning;
    3 if anything else could not be measured; else 0."""
    rows = doc.get("verdicts", [])
    failing = any(r["verdict"] in FAILING_VERDICTS for r in rows)
    failing |= any(not b.get("ok", True) for b in doc.get("each_commit", []))
    if strict_style:
        failing |= any(p["errors"] or p["warnings"] for p in doc.get("checkpatch", []))
    if failing:
        return 1
    if (not doc.get("complete") or doc.get("errors")
            or any(r["verdict"] in ("error", "incomplete") for r in rows)):
        return 3
    return 0

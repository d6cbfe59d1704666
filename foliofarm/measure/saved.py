"""A clean boot's raw measurements, kept in the cache as a base that later
series runs reuse (judging is redone from them), with the ranges of every
figure across the base's clean boots (judge/noise.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from foliofarm.measure.cells import Context, Kernel
from foliofarm.judge.measurement import Measurement, from_kept
from foliofarm.judge.noise import fold, sample_figures
from foliofarm.util import sha256_text

def new_saved(run_id: str, console_log: str, measured: dict[str, Measurement],
              earlier: dict[str, Any] | None) -> dict[str, Any]:
    """What a boot's measurements are kept as. An earlier clean boot of the same
    kernel, guest programs and disks (what --fresh replaces) is as good a second
    sample of each figure as a boot made for it: it becomes the repeat, and a
    series run later needs no second base boot for the noise."""
    saved = {"run_id": run_id, "console_log": console_log, "measurements": measured}
    if earlier is not None:
        saved["repeat"] = earlier["measurements"]
        saved["repeat_run_id"] = earlier.get("run_id")
    return saved


SAMPLES = ("measurements", "repeat")     # a boot's measurements by "fs/check"


def kept(saved: dict[str, Any]) -> dict[str, Any]:
    """Saved measurements as the file holds them (JSON)."""
    return {k: ({key: m.kept() if isinstance(m, Measurement) else m for key, m in v.items()}
                if k in SAMPLES and isinstance(v, dict) else v) for k, v in saved.items()}


def digest(saved: dict[str, Any]) -> str:
    doc = kept(saved)
    parts = [doc.get("measurements"), doc.get("repeat")]
    if "ranges" in doc:      # files of a farm that kept no ranges keep their digest
        parts.append(doc["ranges"])
    return sha256_text(json.dumps(parts, sort_keys=True))


def typed(saved: dict[str, Any]) -> bool:
    """The file's samples as measurements, in place; False where one is not
    a measurement this farm makes (then the file is measured again)."""
    for key in SAMPLES:
        sample = saved.get(key)
        if sample is None:
            continue
        got = {k: from_kept(v) for k, v in sample.items()}
        if any(m is None for m in got.values()):
            return False
        saved[key] = got
    return True


def load_saved(ctx: Context, path: Path, k: Kernel, quiet: bool = False) -> dict[str, Any] | None:
    """A clean boot's saved measurements, if they are there, whole and cover
    every (cell, check) asked for; else None, and they are measured again (a
    damaged file is removed: it never gives a verdict). ``quiet``: an
    incomplete file is no news (a --fresh run replaces it anyway)."""
    if not path.is_file():
        return None
    try:
        saved = json.loads(path.read_text())
        ok = (isinstance(saved, dict) and saved.get("sha256") == digest(saved)
              and all(f"{c.fs.name}/{chk.name}" in saved["measurements"]
                      for c in k.cells for chk in ctx.checks) and typed(saved))
    except (OSError, ValueError, KeyError, TypeError):
        ok = False
    if not ok:
        if not quiet:
            ctx.log(f"saved measurements {path} are damaged or incomplete: measuring again", "yellow")
        path.unlink(missing_ok=True)
        return None
    return saved


def ranges_of(ctx: Context, k: Kernel, saved: dict[str, Any]) -> dict[str, Any]:
    """The ranges kept with saved measurements; for a file of a farm that
    kept none, its own samples (the measurements and the repeat) folded."""
    ranges = saved.get("ranges") or {}
    for sample in ([] if ranges else [saved["measurements"], saved.get("repeat")]):
        if sample:
            ranges = fold(ranges, sample_figures(k.cells, ctx.checks, k.kernel_xy, sample))
    return ranges

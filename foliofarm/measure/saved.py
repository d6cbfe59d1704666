"""A clean boot's raw measurements, kept in the cache as a base that later
series runs reuse (judging is redone from them), with the ranges of every
figure across the base's clean boots (judge/noise.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, ValidationError

from foliofarm.measure.cells import Context, Kernel
from foliofarm.judge.measurement import Measurement
from foliofarm.judge.noise import fold, sample_figures
from foliofarm.util import sha256_text, write_json

# one boot's measurements by "fs/check"
Sample = dict[str, Measurement]


class Saved(BaseModel):
    """What the cache keeps of a clean base: its boot's measurements, the
    boot before it as the repeat (or the repeat made for the noise), the
    ranges of every figure, sealed by a digest."""
    model_config = ConfigDict(extra="forbid")
    run_id: Optional[str] = None
    console_log: Optional[str] = None
    measurements: Sample
    repeat: Optional[Sample] = None
    repeat_run_id: Optional[str] = None
    ranges: Optional[dict[str, Any]] = None     # cell -> check -> figure -> its range (noise.fold)
    sha256: Optional[str] = None

    def kept(self) -> dict[str, Any]:
        """As the file holds it (JSON)."""
        out = self.model_dump(exclude_none=True, exclude={"measurements", "repeat"})
        out["measurements"] = {k: m.kept() for k, m in self.measurements.items()}
        if self.repeat is not None:
            out["repeat"] = {k: m.kept() for k, m in self.repeat.items()}
        return out

    def digest(self) -> str:
        return digest_of(self.kept())


def new_saved(run_id: str, console_log: str, measured: Sample, earlier: Saved | None) -> Saved:
    """What a boot's measurements are kept as. An earlier clean boot of the same
    kernel, guest programs and disks (what --fresh replaces) is as good a second
    sample of each figure as a boot made for it: it becomes the repeat, and a
    series run later needs no second base boot for the noise."""
    saved = Saved(run_id=run_id, console_log=console_log, measurements=measured)
    if earlier is not None:
        saved.repeat, saved.repeat_run_id = earlier.measurements, earlier.run_id
    return saved


def digest_of(kept: dict[str, Any]) -> str:
    """The seal of a saved file as JSON: its samples, and its ranges where
    it has them (files of a farm that kept no ranges keep their digest)."""
    parts = [kept.get("measurements"), kept.get("repeat")]
    if "ranges" in kept:
        parts.append(kept["ranges"])
    return sha256_text(json.dumps(parts, sort_keys=True))


def save(path: Path, saved: Saved) -> None:
    """Seal ``saved`` and write it to ``path``."""
    saved.sha256 = saved.digest()
    write_json(path, saved.kept())


def load_saved(ctx: Context, path: Path, k: Kernel, quiet: bool = False) -> Saved | None:
    """A clean boot's saved measurements, if they are there, whole and cover
    every (cell, check) asked for; else None, and they are measured again (a
    damaged file, or one whose measurements are not of the shape this farm
    makes, is removed: it never gives a verdict). ``quiet``: an incomplete
    file is no news (a --fresh run replaces it anyway)."""
    if not path.is_file():
        return None
    saved = None
    try:
        raw = json.loads(path.read_text())
        if isinstance(raw, dict) and raw.get("sha256") == digest_of(raw):
            saved = Saved.model_validate(raw)
    except (OSError, ValueError, ValidationError):
        saved = None
    if saved is None or not all(f"{c.fs.name}/{chk.name}" in saved.measurements
                                for c in k.cells for chk in ctx.checks):
        if not quiet:
            ctx.log(f"saved measurements {path} are damaged or incomplete: measuring again", "yellow")
        path.unlink(missing_ok=True)
        return None
    return saved


def ranges_of(ctx: Context, k: Kernel, saved: Saved) -> dict[str, Any]:
    """The ranges kept with saved measurements; for a file of a farm that
    kept none, its own samples (the measurements and the repeat) folded."""
    ranges = saved.ranges or {}
    for sample in ([] if ranges else [saved.measurements, saved.repeat]):
        if sample:
            ranges = fold(ranges, sample_figures(k.cells, ctx.checks, k.kernel_xy, sample))
    return ranges

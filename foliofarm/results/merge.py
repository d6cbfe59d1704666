"""One results document from the shards of a CI matrix (one cell each)."""

from __future__ import annotations

from typing import Any

from foliofarm.errors import UsageError
from foliofarm.results.schema import Results


class MergeError(UsageError):
    """Shards that do not make one run (another comparison, nothing to merge)."""


# the parts of a shard merged item by item, each item known by these fields
KEYS = {"cells": ("kernel", "page_size", "fs"), "kernels": ("side", "kernel", "page_size"),
        "boots": ("kernel", "page_size", "console_log"), "each_commit": ("number", "page_size"),
        "errors": ("stage", "message"), "unconfirmed": ("cell", "check", "metric")}


def merge(docs: list[Results]) -> Results:
    """One results document from the shards of a CI matrix (one cell each): their
    cells, kernels, boots and per-commit builds together, without verdicts:
    the reader judges them again from the cells (judge/compare.py judged)."""
    if not docs:
        raise MergeError("nothing to merge")
    first = docs[0]
    for d in docs[1:]:
        if d.sides != first.sides:
            raise MergeError(f"run {d.run_id} compared {_sides(d)}, run {first.run_id} "
                             f"{_sides(first)}: shards of one run must compare the same kernels")
    noise: dict[str, Any] = {}
    for d in docs:      # each shard measured its own cells' noise
        for cell, by_check in d.noise.items():
            noise.setdefault(cell, {}).update(by_check)
    parts: dict[str, list[Any]] = {}
    for key, ident in KEYS.items():
        seen: dict[tuple[Any, ...], Any] = {}
        for d in docs:
            for item in getattr(d, key) or []:
                seen.setdefault(tuple(getattr(item, i) for i in ident), item)
        parts[key] = list(seen.values())
    return first.model_copy(deep=True, update={
        "verdicts": [], "run_id": "merged", "merged_from": [d.run_id for d in docs],
        "shard_commands": [d.command for d in docs], "complete": all(d.complete for d in docs),
        "noise": noise, **parts})


def _sides(doc: Results) -> str:
    s = doc.sides
    return f"{s.base.kernel} against {s.series.kernel}" if s else "no sides"

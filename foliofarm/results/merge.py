"""One results document from the shards of a CI matrix (one cell each)."""

from __future__ import annotations

from typing import Any

from foliofarm.errors import UsageError


class MergeError(UsageError):
    """Shards that do not make one run (another comparison, nothing to merge)."""


def merge(docs: list[dict[str, Any]]) -> dict[str, Any]:
    """One results document from the shards of a CI matrix (one cell each): their
    cells, kernels, boots and per-commit builds together, without verdicts:
    the reader judges them again from the cells (judge/compare.py judged)."""
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
    return out

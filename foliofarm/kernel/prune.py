"""Old kernels leave the cache. A followed tree gives every new base commit
kernels of its own, and every series one more: without this the cache grows
by about 60 MB a kernel for ever. The policy (the watcher runs it every pass,
with its [cache] settings):

- A built kernel is its artifacts folder (artifacts/<name>: Image, modules,
  config, build log), the initramfs made from it (initramfs/<name>-*.cpio) and
  the base measurements kept for it (baseline/<name>-*.json) and the history
  of its results (history/<name>-*.json, its lock). Each run that
  takes a kernel marks it used (the folder's mtime: Builder).
- A kernel not used for ``days`` days goes, base or series alike.
- Then, while the kernels take more than ``max_gb``, the least recently used
  go first, never one used in the last ``busy_hours`` (a run may be booting
  it: longer than a run's limit).
- Build directories, ccache, Debian's sources, followed trees' clones and
  their worktrees are kept: they are per tree, not per base, and what makes a
  new base cost one incremental make.
A kernel removed is built again if a run needs it (its base measured again)."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from foliofarm.bounded import remove_tree
from foliofarm.beneath import tree_size

GB = 1 << 30


@dataclass
class CachedKernel:
    name: str
    used: float                              # the artifacts folder's mtime
    paths: list[Path] = field(default_factory=list)
    size: int = 0


def kernels(cache: Path) -> list[CachedKernel]:
    """Every built kernel of the cache, with the files that belong to it, least recently used first."""
    arts = cache / "artifacts"
    out = []
    for d in sorted(arts.iterdir()) if arts.is_dir() else []:
        if not d.is_dir() or d.name.startswith("."):
            continue
        k = CachedKernel(d.name, d.stat().st_mtime, [d])
        k.paths += sorted((cache / "initramfs").glob(f"{d.name}-*"))
        k.paths += sorted((cache / "baseline").glob(f"{d.name[:60]}-*.json"))
        k.paths += sorted((cache / "history").glob(f"{d.name[:60]}-*.*"))      # its results' history
        k.size = sum(tree_size(p) if p.is_dir() else p.stat().st_size for p in k.paths)
        out.append(k)
    return sorted(out, key=lambda k: k.used)


def mark_used(art_dir: Path) -> None:
    """A run takes this kernel now (prune keeps what was used lately)."""
    try:
        os.utime(art_dir)
    except OSError:
        pass


def prune(cache: Path, days: float, max_gb: float, busy_hours: float = 6.0,
          now: float | None = None) -> list[str]:
    """Remove the kernels the policy drops; returns what went, and why."""
    now = time.time() if now is None else now
    said = []
    found = kernels(cache)
    left = []
    for k in found:
        if now - k.used > days * 86400:
            remove(k)
            said.append(f"{k.name}: not used for {(now - k.used) / 86400:.0f} days "
                        f"({k.size / GB:.2f} GB)")
        else:
            left.append(k)
    total = sum(k.size for k in left)
    for k in left:                               # least recently used first
        if total <= max_gb * GB:
            break
        if now - k.used < busy_hours * 3600:
            continue
        remove(k)
        total -= k.size
        said.append(f"{k.name}: the kernels took more than {max_gb:g} GB, it was the least "
                    f"recently used ({(now - k.used) / 3600:.0f} h ago)")
    return said


def remove(k: CachedKernel) -> None:
    """The artifacts folder first, so a half-removed kernel reads as not built."""
    for p in k.paths:
        if p.is_dir():
            # renamed away first: a run that looks now sees it gone, not half there
            gone = p.with_name(f".pruned-{p.name}-{os.getpid()}")
            try:
                p.rename(gone)
            except OSError:
                continue
            remove_tree(gone)
        else:
            p.unlink(missing_ok=True)

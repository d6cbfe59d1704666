"""Where things live: the project's own data files and the cache."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = ROOT / "configs"
KERNEL_CONFIGS = CONFIGS / "kernels"
VMTESTS = ROOT / "tests" / "vmtests"
ROOTFS = ROOT / "rootfs"


def cache_dir() -> Path:
    """$FOLIOFARM_CACHE, default ~/.cache/foliofarm."""
    env = os.environ.get("FOLIOFARM_CACHE")
    path = Path(env) if env else Path.home() / ".cache" / "foliofarm"
    path.mkdir(parents=True, exist_ok=True)
    return path

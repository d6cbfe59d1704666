"""Argument types and defaults the commands share (run, shell)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from foliofarm import locks
from foliofarm.errors import UsageError


def positive_int(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return n


def positive_seconds(text: str) -> float:
    try:
        x = float(text)
    except ValueError:
        x = 0.0
    if not x > 0 or x == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds above 0")
    return x


def writable_dir(path: Path) -> Path:
    """``path`` as a results folder: made if missing, refused (UsageError) if it
    is not a folder or cannot be written, before anything is built."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f".foliofarm-write-test-{os.getpid()}"
        probe.write_text("")
        probe.unlink()
    except FileExistsError:
        raise UsageError(f"--results {path}: a file is in the way; name a folder") from None
    except NotADirectoryError:
        raise UsageError(f"--results {path}: part of the path is a file; name a folder") from None
    except OSError as exc:
        raise UsageError(f"--results {path}: cannot write there ({exc.strerror}); name a "
                         "folder you can write") from None
    return path


def core_counts(text: str) -> list[int]:
    """--plan-cores: host sizes, "2,4,8"."""
    try:
        out = [int(w) for w in text.split(",") if w.strip()]
    except ValueError:
        out = []
    if not out or min(out) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give core counts of at least 1, separated by commas "
                                         "(2,4,8,16,32)")
    return out


def default_guests() -> int:
    """Own-check boots at once: one more than the cores (locks.guests_for)."""
    return locks.guests_for(os.cpu_count() or 1, locks.host_memory_mb(), 0)[0]


def default_tree_guests(memory_mb: int) -> int:
    """Tree-check boots at once: one more than the cores, as many as the
    host's memory holds at ``memory_mb`` each (locks.guests_for)."""
    return locks.guests_for(os.cpu_count() or 1, locks.host_memory_mb(), memory_mb)[1]

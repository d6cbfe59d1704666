"""Argument types and defaults the commands share (run, shell)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

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


def default_guests() -> int:
    """Own-check boots at once: one more than the cores (a guest's boot leaves
    its core idle while QEMU starts and the host reads its dumps; measured on
    2 cores, the nine own-check boots of a series: 34 s two at once, 32 s three),
    at most 3."""
    return max(1, min(3, (os.cpu_count() or 1) + 1))


def default_tree_guests(memory_mb: int) -> int:
    """Tree-check boots at once: one more than the cores, at most 3, and as
    many as the host's memory holds at ``memory_mb`` each beside two more (the
    own checks' guests, that touch little of theirs). The selftests leave a
    core idle a tenth of the time (I/O, their own sleeps: khugepaged's waits
    for a scan): measured on 2 cores, 24 GiB, a default series run, cores
    busy 92.7% with two, 97.1% with three; the verdict 612.9 s against 599.2 s."""
    try:
        total_mb = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // (1 << 20)
    except (ValueError, OSError):
        total_mb = 0
    by_memory = total_mb // memory_mb - 2 if total_mb else 3
    return max(1, min(3, (os.cpu_count() or 1) + 1, by_memory))

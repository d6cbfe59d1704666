"""What a series' build (someone else's code) gets, and what it may not do:
a build directory of its own, copied from the base's, and a cap on the disk
it writes there.

The copy: `cp -a --reflink=auto` of the base's build directory, which keeps
make's timestamps (only what the series touched recompiles) and shares the
blocks on a file system with reflinks (XFS, btrfs); elsewhere it is a real
copy (measured on ext4, a 4K build directory of 7.3: 303 MB, 6,340 files,
0.6 s with the files in the page cache). It is
kept for the run (--each-commit's builds share it) and removed after it, or by
the next run if this one was killed.

The host's own files of a build (its log, its metadata, the stamps that say
what the configuration and the probe modules were made from) are kept apart
from the build directory, under CACHE/build-host (host_dir), and a scratch
directory a sandbox is given (the configuration's) is made anew by the host
under CACHE/scratch each time (scratch_dir): nothing the host opens by name
is in a directory a series' build could have written, but for what it must
read from there, read without following a link (beneath.read_beneath)."""

from __future__ import annotations

import collections
import os
import re
import shutil
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

from foliofarm.bounded import log_lines, remove_tree
from foliofarm import locks
from foliofarm.beneath import read_beneath, tree_size, tree_usage
from foliofarm.errors import InfraError
from foliofarm.kernel import seriesdisk
from foliofarm.util import pid_alive, run, sha256_text

# A series' build may add this much to its copy of the base's build directory,
# and this many files and directories.
SERIES_DISK_MB = int(os.environ.get("FOLIOFARM_SERIES_DISK_MB", "4096"))
SERIES_INODES = int(os.environ.get("FOLIOFARM_SERIES_INODES", "200000"))


# The stamps of a base's build a series' copy starts from (the host's own files).
STAMPS = ("kconfig.key", "foliofarm-modules.key")


def host_dir(cache: Path, bdir: Path) -> Path:
    """The host's own files of the build in ``bdir`` (CACHE/build/X ->
    CACHE/build-host/X): a directory no sandbox is ever given."""
    try:
        return cache / "build-host" / bdir.relative_to(cache / "build")
    except ValueError:      # a build directory outside the cache's (a test's)
        return cache / "build-host" / "elsewhere" / f"{bdir.name}-{sha256_text(str(bdir))[:8]}"


@contextmanager
def scratch_dir(cache: Path, name: str) -> Iterator[Path]:
    """A directory the host makes anew for one sandboxed step, removed after."""
    d = cache / "scratch" / f"{name}-{os.getpid()}"
    remove_tree(d)
    d.mkdir(parents=True)
    try:
        yield d
    finally:
        remove_tree(d)


def copy_build_dir(cache: Path, base: Path, bdir: Path, log: Callable[[str], None]) -> int:
    """``bdir`` made anew as a copy of ``base`` (empty if the base has none),
    with the base's stamps in its host directory; returns its size in bytes.
    As root, ``bdir`` is a file system of its own, the base's size and inodes
    and the series' allowance (seriesdisk.py). Copies of killed runs are
    removed first."""
    clean_series_copies(cache, log)
    remove_tree(bdir)
    own = host_dir(cache, bdir)
    remove_tree(own)
    own.mkdir(parents=True)
    for name in STAMPS:
        if (host_dir(cache, base) / name).is_file():
            shutil.copy2(host_dir(cache, base) / name, own / name)
    bdir.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    with locks.build_dir(cache, base, log=log):    # not while the base builds there
        size, inodes = tree_usage(base) if base.is_dir() else (0, 0)
        if not (why := seriesdisk.why_not()):
            try:
                seriesdisk.make(bdir, own, size + (size >> 3) + (SERIES_DISK_MB << 20),
                                inodes + SERIES_INODES)
            except InfraError as exc:      # loop devices refused here: the walk holds it instead
                seriesdisk.unmount(bdir, own)
                why = f"its own file system could not be made: {str(exc).splitlines()[0][:200]}"
        if base.is_dir():
            run(["cp", "-a", "--reflink=auto", f"{base}/.", str(bdir)],
                what="copying the base's build directory for the series")
        else:
            bdir.mkdir(exist_ok=True)
    size = tree_size(bdir)
    log(f"{bdir.name}: the series builds in a copy of the base's build directory "
        f"({size >> 20} MB, {time.monotonic() - t0:.1f} s) "
        + (f"on a file system of its own (+{SERIES_DISK_MB} MB, +{SERIES_INODES} inodes)" if not why
           else f"watched ({why})"))
    return size


def remove_copy(cache: Path, bdir: Path) -> str:
    """A series' build directory and its host directory removed: its own
    file system unmounted first (its image goes with it); '' or what failed."""
    host = host_dir(cache, bdir)
    said = [seriesdisk.unmount(bdir, host), remove_tree(bdir), remove_tree(host)]
    return "; ".join(s for s in said if s)


def clean_series_copies(cache: Path, log: Callable[[str], None] = lambda s: None) -> None:
    """Remove the series' build directories (their own file systems, host
    directories, scratch directories) of runs that are gone (killed),
    whatever a build left in them (bounded.remove_tree). One that cannot be
    removed is moved aside to CACHE/leftover and said: it never stops the
    next series."""
    for parent in (cache / "build" / "series", cache / "build-host" / "series", cache / "scratch"):
        if parent.is_dir():
            for d in parent.iterdir():
                if pid_alive(d.name.rsplit("-", 1)[-1]):
                    continue
                if parent.name == "series" and parent.parent.name == "build":
                    seriesdisk.unmount(d, host_dir(cache, d))
                if why := remove_tree(d):
                    aside = cache / "leftover" / f"{d.name}-{time.time_ns()}"
                    aside.parent.mkdir(parents=True, exist_ok=True)
                    os.rename(d, aside)
                    log(f"{why}; moved aside to {aside} (remove it by hand)")
                else:
                    log(f"removed {d}, left by a run that is gone")


class DiskWatch:
    """Where a series' build directory is not a file system of its own (as a
    user): it may add SERIES_DISK_MB and SERIES_INODES to its build
    directory, and may not take more of the cache's disk than that, unlinked
    files it holds open included (the disk's free space is read: what went
    and no walk finds is counted), nor bring it under a gigabyte free. Asked
    by util.run every few seconds, it walks the directory at most every
    ``every`` seconds. On a file system of its own, the kernel holds the
    limits: only the cache's free space is watched."""

    def __init__(self, bdir: Path, start: int, every: float = 15, start_inodes: int | None = None
                 ) -> None:
        self.bdir, self.start, self.every = bdir, start, every
        self.start_inodes = tree_usage(bdir)[1] if start_inodes is None else start_inodes
        self.free0 = shutil.disk_usage(bdir).free
        self.own = bool(seriesdisk.mounted_below(bdir))
        self.last = time.monotonic()

    def final(self) -> str:
        """Once more when the command has ended, walking whatever the time:
        a bomb made and finished between two walks is found here."""
        self.last = 0.0
        return self()

    def __call__(self) -> str:
        free = shutil.disk_usage(self.bdir.parent if self.own else self.bdir).free
        if free < 1 << 30:
            return "less than 1 GB left free on the cache's disk"
        if self.own:
            return ""
        taken = self.free0 - free      # read each time: a bomb of unlinked files is fast
        if taken - (256 << 20) > SERIES_DISK_MB << 20:
            return (f"its limit of {SERIES_DISK_MB} MB of disk for a series' build ({taken >> 20} MB "
                    "of the disk taken since it started: unlinked files held open count; "
                    "FOLIOFARM_SERIES_DISK_MB)")
        if time.monotonic() - self.last < self.every:
            return ""
        self.last = time.monotonic()
        size, inodes = tree_usage(self.bdir)
        if size - self.start > SERIES_DISK_MB << 20:
            return (f"its limit of {SERIES_DISK_MB} MB of disk for a series' build "
                    f"({(size - self.start) >> 20} MB written; FOLIOFARM_SERIES_DISK_MB)")
        if inodes - self.start_inodes > SERIES_INODES:
            return (f"its limit of {SERIES_INODES} files and directories for a series' build "
                    f"({inodes - self.start_inodes} made; FOLIOFARM_SERIES_INODES)")
        return ""


def config_text(bdir: Path) -> str:
    """The .config a build wrote in ``bdir``, read as text without following a link."""
    return read_beneath(bdir, ".config", 16 << 20, what="the build's .config").decode(errors="replace")


def compiler_errors(logf: Path, limit: int = 20, strip: str = "") -> str:
    """The compiler's error lines from a build log (what a developer wants first),
    with paths relative to the tree as in a 0-day report (the log's last lines
    where it has none). Read a line at a time: a log is up to bounded.LOG_CAP."""
    last: collections.deque[str] = collections.deque(maxlen=limit)

    def error(ln: str) -> bool:
        last.append(ln := ln.replace(strip, "") if strip else ln)
        # a compiler's or linker's error, and make's own fatal lines ($(error ...), a missing rule)
        return bool(re.search(r"\berror\b|Error \d|undefined reference|^\S+:\d+: \*\*\* ", ln))
    found = [ln.replace(strip, "") if strip else ln for ln in log_lines(logf, error, limit)]
    return "\n".join(found) or "\n".join(last)

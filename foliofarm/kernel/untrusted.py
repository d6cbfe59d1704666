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

import os
import shutil
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

from foliofarm import locks
from foliofarm.beneath import read_beneath, tree_size
from foliofarm.util import pid_alive, run, sha256_text

# A series' build may add this much to its copy of the base's build directory.
SERIES_DISK_MB = int(os.environ.get("FOLIOFARM_SERIES_DISK_MB", "4096"))


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
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def copy_build_dir(cache: Path, base: Path, bdir: Path, log: Callable[[str], None]) -> int:
    """``bdir`` made anew as a copy of ``base`` (empty if the base has none),
    with the base's stamps in its host directory; returns its size in bytes.
    Copies of killed runs are removed first."""
    clean_series_copies(cache)
    shutil.rmtree(bdir, ignore_errors=True)
    own = host_dir(cache, bdir)
    shutil.rmtree(own, ignore_errors=True)
    own.mkdir(parents=True)
    for name in STAMPS:
        if (host_dir(cache, base) / name).is_file():
            shutil.copy2(host_dir(cache, base) / name, own / name)
    bdir.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    with locks.build_dir(cache, base, log=log):    # not while the base builds there
        if base.is_dir():
            run(["cp", "-a", "--reflink=auto", f"{base}/.", str(bdir)],
                what="copying the base's build directory for the series")
        else:
            bdir.mkdir()
    size = tree_size(bdir)
    log(f"{bdir.name}: the series builds in a copy of the base's build directory "
        f"({size >> 20} MB, {time.monotonic() - t0:.1f} s)")
    return size


def clean_series_copies(cache: Path) -> None:
    """Remove the series' build directories (their host directories, scratch
    directories) of runs that are gone (killed)."""
    for parent in (cache / "build" / "series", cache / "build-host" / "series", cache / "scratch"):
        if parent.is_dir():
            for d in parent.iterdir():
                if not pid_alive(d.name.rsplit("-", 1)[-1]):
                    shutil.rmtree(d, ignore_errors=True)



class DiskWatch:
    """A series' build may add SERIES_DISK_MB to its build directory, and may
    not bring the disk under a gigabyte free: asked by util.run every few
    seconds, it walks the directory at most every ``every`` seconds."""

    def __init__(self, bdir: Path, start: int, every: float = 15) -> None:
        self.bdir, self.start, self.every = bdir, start, every
        self.last = time.monotonic()

    def __call__(self) -> str:
        if shutil.disk_usage(self.bdir).free < 1 << 30:
            return "less than 1 GB left free on the cache's disk"
        if time.monotonic() - self.last < self.every:
            return ""
        self.last = time.monotonic()
        grown = tree_size(self.bdir) - self.start
        if grown > SERIES_DISK_MB << 20:
            return (f"its limit of {SERIES_DISK_MB} MB of disk for a series' build "
                    f"({grown >> 20} MB written; FOLIOFARM_SERIES_DISK_MB)")
        return ""


def config_text(bdir: Path) -> str:
    """The .config a build wrote in ``bdir``, read as text without following a link."""
    return read_beneath(bdir, ".config", 16 << 20, what="the build's .config").decode(errors="replace")

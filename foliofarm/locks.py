"""Locks on what concurrent runs share in one cache: a kernel source tree (a
series is applied in it) and a build directory (make writes in it).

Each lock is an `fcntl.flock` on a file under ``CACHE/locks``; the kernel drops
it when its holder dies, so a killed run never leaves one behind and nothing
needs cleaning up by hand.

- A source tree is held shared while a base kernel is built from it, and
  exclusively while a series is applied to it: from `git am` through the last
  build of the series side, and while a killed run's leftovers are undone.
- A build directory is held exclusively while make runs in it.

Within one process holds nest (the series side's builds run inside its
exclusive hold of the tree and do not wait for themselves), across its threads
too: the build thread builds inside the main thread's hold. A process that
runs a child to work under its hold (`foliofarm bisect` under `git bisect
run`) passes the lock files in FOLIOFARM_HELD_LOCKS (handed_down): the child
takes them as held.
"""

from __future__ import annotations

import fcntl
import os
import random
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from foliofarm.util import sha256_text


@dataclass
class _Held:
    fd: int
    exclusive: bool
    count: int


_held: dict[str, _Held] = {}
_mutex = threading.Lock()
_taking: dict[str, threading.Lock] = {}    # per lock: one thread at a time takes or joins it


def _taker(key: str) -> threading.Lock:
    with _mutex:
        return _taking.setdefault(key, threading.Lock())


def lock_path(cache: Path, kind: str, what: Path | str) -> Path:
    """The lock file for ``what`` (a tree or build directory path)."""
    name = Path(str(what)).name[:40]
    return cache / "locks" / f"{kind}-{name}-{sha256_text(str(what))[:12]}.lock"


@contextmanager
def hold(path: Path, what: str, exclusive: bool,
         log: Callable[[str], None] | None = None) -> Iterator[None]:
    """Hold the lock at ``path`` (shared or exclusive) for the block. Waits,
    saying for what and who holds it, when another process has it."""
    key = str(path)
    if key in os.environ.get(HANDED_DOWN, "").split(os.pathsep):
        yield                   # a parent process holds it for this one's work
        return
    # Two threads taking the same lock at once must not both open and flock
    # it: the second entry would hide the first, whose descriptor (and flock)
    # would then outlive every hold, and the next exclusive hold wait forever.
    with _taker(key):
        with _mutex:
            held = _held.get(key)
            if held is not None:
                if exclusive and not held.exclusive:
                    raise RuntimeError(f"{what}: an exclusive hold inside a shared one would wait for itself")
                held.count += 1
        if held is None:
            _take(key, path, what, exclusive, log)
    try:
        yield
    finally:
        _release(key)


def _take(key: str, path: Path, what: str, exclusive: bool,
          log: Callable[[str], None] | None) -> None:
    """Open and flock ``path`` (waiting for another process that holds it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
    try:
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            if log is not None:
                log(f"waiting for {what}: another foliofarm run holds it{holder}")
            fcntl.flock(fd, mode)
        if exclusive:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"pid {os.getpid()}: {what}\n".encode(), 0)
    except BaseException:
        os.close(fd)
        raise
    with _mutex:
        _held[key] = _Held(fd, exclusive, 1)


HANDED_DOWN = "FOLIOFARM_HELD_LOCKS"


def handed_down(*paths: Path) -> dict[str, str]:
    """Environment for a child process that works under this process's holds
    of ``paths`` (which must be held now)."""
    with _mutex:
        missing = [str(p) for p in paths if str(p) not in _held]
    if missing:
        raise RuntimeError(f"handing down locks not held: {', '.join(missing)}")
    return {HANDED_DOWN: os.pathsep.join(str(p) for p in paths)}


def _release(key: str) -> None:
    with _mutex:
        held = _held[key]
        held.count -= 1
        if held.count:
            return
        del _held[key]
    if held.exclusive:
        os.ftruncate(held.fd, 0)   # no stale holder named to the next waiter
    os.close(held.fd)      # closing the descriptor drops the flock


def _holder(fd: int) -> str:
    try:
        text = os.pread(fd, 200, 0).decode(errors="replace").strip()
    except OSError:
        return ""
    return f" ({text})" if text else ""


def tree(cache: Path, tree_dir: Path, exclusive: bool,
         log: Callable[[str], None] | None = None):
    """Hold a kernel source tree."""
    return hold(lock_path(cache, "tree", tree_dir), f"kernel tree {tree_dir}", exclusive, log)


def build_dir(cache: Path, bdir: Path, log: Callable[[str], None] | None = None):
    """Hold a build directory, exclusively."""
    return hold(lock_path(cache, "build", bdir), f"build directory {bdir}", True, log)


# What a guest of the farm's own checks keeps of the host's memory (QEMU's
# resident set: its checks touch a few hundred MB of the guest's), and what a
# kernel build keeps per make job (cc1 of a large unit, the linker at the end).
OWN_GUEST_MB = 1024
BUILD_JOB_MB = 512


def host_memory_mb() -> int:
    """The host's memory in MB; 0 where the system does not say."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // (1 << 20)
    except (ValueError, OSError):
        return 0


def guests_for(cores: int, total_mb: int, memory_mb: int) -> tuple[int, int]:
    """Guests at once for a host of ``cores`` and ``total_mb``, guests of
    ``memory_mb``: (the farm's own checks', the tree's). Each pool one more
    than the cores (a guest leaves its core idle while QEMU starts, while the
    host reads its dumps, in the selftests' sleeps: measured on 2 cores, cores
    busy 92.7% with two tree guests, 97.1% with three), no fixed cap; the
    tree's as many as the memory holds beside the own checks' guests and a
    build's make jobs (a series builds while the base's guests run)."""
    cores = max(1, cores)
    if not total_mb:
        return cores + 1, cores + 1
    left = total_mb - (cores + 1) * OWN_GUEST_MB - cores * BUILD_JOB_MB
    return cores + 1, max(1, min(cores + 1, left // max(1, memory_mb)))


def host_guests(memory_mb: int = 2048) -> int:
    """Guests at once on this host, across all runs that share its cache:
    $FOLIOFARM_HOST_GUESTS, else what one run boots at most by default (its own
    checks' guests and its tree's, guests_for), so that a run alone is not
    slowed and two runs share the cores, not double them."""
    env = os.environ.get("FOLIOFARM_HOST_GUESTS", "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    return sum(guests_for(os.cpu_count() or 1, host_memory_mb(), memory_mb))


class HostSlots:
    """The host's guest slots, one lock file each under CACHE/locks/guests:
    a guest of any run holds one while it runs (the kernel frees it when the
    run dies). A waiting guest tries them all every quarter second or so."""

    def __init__(self, cache: Path, n: int | None = None) -> None:
        self.dir = cache / "locks" / "guests"
        self.n = n or host_guests()

    def _open(self, i: int) -> int:
        return os.open(self.dir / f"slot-{i}.lock", os.O_RDWR | os.O_CREAT, 0o644)

    @contextmanager
    def slot(self) -> Iterator[int]:
        self.dir.mkdir(parents=True, exist_ok=True)
        while True:
            for i in random.sample(range(self.n), self.n):
                fd = self._open(i)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    os.close(fd)
                    continue
                try:
                    os.ftruncate(fd, 0)
                    os.write(fd, f"pid {os.getpid()}\n".encode())
                    yield i
                finally:
                    fcntl.flock(fd, fcntl.LOCK_UN)
                    os.close(fd)
                return
            time.sleep(0.2 + random.random() * 0.1)

    @contextmanager
    def every(self) -> Iterator[None]:
        """Every slot held, taken in order, waiting for each: no guest of any
        run on this host starts until it is left, those running end first
        (a boot that must have the host to itself: measure/confirm.py)."""
        self.dir.mkdir(parents=True, exist_ok=True)
        fds: list[int] = []
        try:
            for i in range(self.n):
                fds.append(self._open(i))
                fcntl.flock(fds[-1], fcntl.LOCK_EX)
            yield
        finally:
            for fd in fds:
                os.close(fd)     # and its lock with it

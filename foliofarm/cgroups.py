"""Totals over everything one sandboxed command starts: a control group with a
memory limit and a task limit.

A per-process limit (setrlimit, sandbox.Limits) cannot hold a total: a build
of a thousand processes of 3 GB each stays under every one of them, and
RLIMIT_NPROC is not enforced for root at all (the kernel exempts uid 0, and a
user namespace does not change the uid it counts). A cgroup holds the whole
tree of processes: `memory.max` (the kernel's OOM killer ends a process of the
group, nothing outside it) and `pids.max` (a fork fails with EAGAIN once the
group has that many tasks). Not the CPU controller: a task in a cpu cgroup other
than the root is no longer scheduled by its session's autogroup, and the
autogroups are how the tree's guests yield the cores to the farm's own
(boot/priority.py); a build keeps the weight of one session, as before.

Where the farm may make one:
- cgroup v2 (the unified hierarchy) when memory and pids are offered to the
  farm's own cgroup and it may enable them for its children (root on a host
  without systemd's delegation rules, or a delegated subtree);
- else cgroup v1's memory and pids hierarchies where they are writable
  (root on a hybrid host: what CI runners and this farm's machines have);
- else none: the per-process rlimits are the floor, and `why_not()` says why
  (a user without delegation; `systemd-run --user --scope` would give one).

A group lives as long as its command: made before it starts (the command
joins it in its first instruction, a preexec that writes its own pid), read
for what stopped it (`stopped()`: an OOM kill, the task limit reached), then
emptied (SIGKILL to what is left) and removed. A killed run's groups are
removed by the next (named by the pid that made them)."""

from __future__ import annotations

import itertools
import os
import signal
import threading
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
PREFIX = "foliofarm-"
_counter = itertools.count()
_lock = threading.Lock()


@dataclass(frozen=True)
class Totals:
    """What all the processes of one command may use together."""
    memory_mb: int
    tasks: int


@dataclass(frozen=True)
class _Hierarchy:
    version: int                # 1 or 2
    parent: Path                # where the farm makes its groups
    controllers: frozenset[str]


def _mounts() -> list[tuple[str, str, str]]:
    """(mount point, file system type, super options) of the cgroup mounts."""
    out = []
    try:
        text = Path("/proc/self/mountinfo").read_text()
    except OSError:
        return out
    for line in text.splitlines():
        left, _, right = line.partition(" - ")
        fields, rfields = left.split(), right.split()
        if len(fields) >= 5 and len(rfields) >= 3 and rfields[0] in ("cgroup", "cgroup2"):
            out.append((fields[4].replace("\\040", " "), rfields[0], rfields[2]))
    return out


def _own_paths() -> dict[str, str]:
    """This process's cgroup path per controller ('' for v2's unified one)."""
    out: dict[str, str] = {}
    try:
        text = Path("/proc/self/cgroup").read_text()
    except OSError:
        return out
    for line in text.splitlines():
        num, _, rest = line.partition(":")
        names, _, path = rest.partition(":")
        for name in (names.split(",") if names else [""]):
            out[name] = path
    return out


def _writable_dir(d: Path) -> bool:
    return d.is_dir() and os.access(d, os.W_OK)


def _v2(mounts: list[tuple[str, str, str]], own: dict[str, str]) -> _Hierarchy | str:
    point = next((m for m, fs, _ in mounts if fs == "cgroup2"), None)
    if point is None or "" not in own:
        return "no cgroup v2 hierarchy"
    parent = Path(point) / own[""].lstrip("/")
    try:
        offered = set((parent / "cgroup.controllers").read_text().split())
    except OSError as exc:
        return f"cgroup v2: {exc.strerror}"
    if not {"memory", "pids"} <= offered:
        return f"cgroup v2 offers {' '.join(sorted(offered)) or 'no controller'} here, not memory and pids"
    if not _writable_dir(parent):
        return f"cgroup v2: {parent} is not writable (no delegation)"
    want = {"memory", "pids"}
    try:
        enabled = set((parent / "cgroup.subtree_control").read_text().split())
        if not want <= enabled:
            (parent / "cgroup.subtree_control").write_text(
                " ".join(f"+{c}" for c in sorted(want - enabled)))
    except OSError as exc:      # EBUSY: processes in a non-root group (no internal processes)
        return f"cgroup v2: cannot enable {' '.join(sorted(want))} below {parent} ({exc.strerror})"
    return _Hierarchy(2, parent, frozenset(want))


def _v1(mounts: list[tuple[str, str, str]], own: dict[str, str]) -> list[_Hierarchy] | str:
    out = []
    for controller in ("memory", "pids"):
        point = next((m for m, fs, opts in mounts
                      if fs == "cgroup" and controller in opts.split(",")), None)
        if point is None or controller not in own:
            continue
        parent = Path(point) / own[controller].lstrip("/")
        if _writable_dir(parent):
            out.append(_Hierarchy(1, parent, frozenset([controller])))
    have = {c for h in out for c in h.controllers}
    if not {"memory", "pids"} <= have:
        return "cgroup v1: memory and pids are not both writable"
    return out


@cache
def _hierarchies() -> tuple[tuple[_Hierarchy, ...], str]:
    """Where groups are made, and '' or why none can be."""
    if os.environ.get("FOLIOFARM_CGROUPS", "on").lower() in ("off", "0", "no"):
        return (), "FOLIOFARM_CGROUPS=off"
    mounts, own = _mounts(), _own_paths()
    v2 = _v2(mounts, own)
    if isinstance(v2, _Hierarchy):
        found: tuple[_Hierarchy, ...] = (v2,)
    else:
        v1 = _v1(mounts, own)
        if isinstance(v1, str):
            return (), f"{v2}; {v1}"
        found = tuple(v1)
    for h in found:
        _remove_stale(h.parent)
    return found, ""


def why_not() -> str:
    """'' when the farm can make cgroups here, else why not."""
    return _hierarchies()[1]


def available() -> bool:
    return not why_not()


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_stale(parent: Path) -> None:
    """Groups of runs that are gone (killed): emptied and removed."""
    try:
        names = [d for d in parent.iterdir() if d.name.startswith(PREFIX)]
    except OSError:
        return
    for d in names:
        pid = d.name[len(PREFIX):].split("-", 1)[0]
        if pid.isdigit() and not _pid_alive(int(pid)):
            _empty(d)


def _procs(d: Path) -> list[int]:
    try:
        return [int(p) for p in (d / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def _empty(d: Path, wait: float = 5.0) -> None:
    """Kill every process of group ``d`` and remove it."""
    if (d / "cgroup.kill").exists():
        try:
            (d / "cgroup.kill").write_text("1")
        except OSError:
            pass
    deadline = time.monotonic() + wait
    while True:
        left = _procs(d)
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        try:
            d.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            if time.monotonic() > deadline:
                return       # removed by the next run's _remove_stale
            time.sleep(0.05)


def _read_counter(path: Path, key: str) -> int:
    """The value of ``key`` in a flat-keyed cgroup file (memory.events, pids.events)."""
    try:
        for line in path.read_text().splitlines():
            k, _, v = line.partition(" ")
            if k == key:
                return int(v)
    except (OSError, ValueError):
        pass
    return 0


class Cgroup:
    """One command's cgroup (one directory per hierarchy): join it from the
    child (``join``), ask ``stopped()`` while and after it runs, ``close()``."""

    def __init__(self, totals: Totals, dirs: list[tuple[_Hierarchy, Path]]) -> None:
        self.totals = totals
        self.dirs = dirs
        self._procs = [os.fsencode(d / "cgroup.procs") for _, d in dirs]

    @classmethod
    def make(cls, totals: Totals) -> Cgroup | None:
        """A new group with ``totals``, or None where the host gives none (why_not)."""
        hierarchies, why = _hierarchies()
        if why:
            return None
        with _lock:
            name = f"{PREFIX}{os.getpid()}-{next(_counter)}"
        dirs: list[tuple[_Hierarchy, Path]] = []
        try:
            for h in hierarchies:
                d = h.parent / name
                d.mkdir()
                dirs.append((h, d))
                _set_totals(h, d, totals)
            return cls(totals, dirs)
        except OSError:
            for _, d in dirs:
                _empty(d)
            return None

    def join(self) -> None:
        """Put the calling process in the group (a child's preexec, before exec;
        by path: pexpect closes the descriptors it inherits before its preexec)."""
        pid = str(os.getpid()).encode()
        for path in self._procs:
            fd = os.open(path, os.O_WRONLY)
            try:
                os.write(fd, pid)
            finally:
                os.close(fd)

    def _file(self, controller: str, name: str) -> Path | None:
        for h, d in self.dirs:
            if controller in h.controllers:
                return d / name
        return None

    def stopped(self) -> str:
        """What a limit of the group stopped, or '' (none reached)."""
        v2 = self.dirs[0][0].version == 2
        if (f := self._file("memory", "memory.events" if v2 else "memory.oom_control")) is not None:
            if _read_counter(f, "oom_kill") > 0:
                return (f"its cgroup's memory limit of {self.totals.memory_mb} MB for all its "
                        "processes together (the OOM killer ended one; FOLIOFARM_SANDBOX_MEMORY_MB)")
        if (f := self._file("pids", "pids.events")) is not None and _read_counter(f, "max") > 0:
            return (f"its cgroup's limit of {self.totals.tasks} tasks at once (a fork was refused: "
                    "a process that forks without end?; FOLIOFARM_SANDBOX_TASKS)")
        return ""

    def peak_mb(self) -> int | None:
        """The most memory the group held at once, where the kernel says."""
        v2 = self.dirs[0][0].version == 2
        f = self._file("memory", "memory.peak" if v2 else "memory.max_usage_in_bytes")
        try:
            return int(f.read_text()) >> 20 if f is not None else None
        except (OSError, ValueError):
            return None

    def close(self) -> None:
        """Kill what is left in the group and remove it."""
        for _, d in self.dirs:
            _empty(d)


def _set_totals(h: _Hierarchy, d: Path, t: Totals) -> None:
    mem = str(t.memory_mb << 20)
    if h.version == 2:
        (d / "memory.max").write_text(mem)
        if (d / "memory.swap.max").exists():     # the limit is memory, not memory and swap
            (d / "memory.swap.max").write_text("0")
        (d / "pids.max").write_text(str(t.tasks))
        return
    if "memory" in h.controllers:
        (d / "memory.limit_in_bytes").write_text(mem)
    if "pids" in h.controllers:
        (d / "pids.max").write_text(str(t.tasks))

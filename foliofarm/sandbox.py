"""Running a kernel tree's own code in a sandbox.

A series is someone else's code, and so is the tree it applies to: its
Makefiles, Kconfig, scripts/merge_config.sh and scripts/checkpatch.pl all run
during a farm run. Each such command (make, merge_config.sh, checkpatch.pl,
`git am`, the selftests' makes) runs under bubblewrap with:

- no privilege, whoever runs the farm: a user namespace of its own
  (--unshare-user, also when the farm is root, where bubblewrap would
  otherwise keep every capability), every capability dropped (--cap-drop ALL:
  CapEff 0), no further user namespace (--disable-userns), NoNewPrivs (a
  setuid program gains nothing): mount, remount of a read-only bind, mknod are
  refused;
- no network (a network namespace of its own with only loopback), its own
  PID, IPC, UTS and cgroup namespaces, killed with the farm (--die-with-parent);
- a file system of the host's /usr (the toolchain), read-only, and nothing
  else of the host: not $HOME, not /root, not the rest of the cache, not /etc
  beyond the alternatives symlinks that /usr's tools point through;
- read access to the paths the command is given (the tree, the Kconfig
  fragments, the patch files) and write access only to its own outputs (the
  build directory and ccache; the tree itself only for `git am`); each bound
  from a directory the host made, never from a path inside one a series wrote;
- an empty /tmp of at most Limits.tmp_mb, and an empty read-only $HOME: a
  script that writes there fails with "Read-only file system";
- a cleared environment (bubblewrap's --clearenv): PATH, LC_ALL, HOME (a path
  that does not exist) and what the command is given (ARCH, CROSS_COMPILE, ccache's
  settings), nothing of the farm's own: a `$(info $(SECRET))` in a Makefile
  prints an empty line, whatever the farm was started with;
- limits (Limits): a wall-clock deadline after which the whole sandbox is
  killed; totals over all its processes, a cgroup (cgroups.py: memory and
  tasks) where the host gives the farm one, killed whole with the reason
  when it reaches one; and per-process resource limits set with setrlimit
  before bubblewrap starts, the floor where there is no cgroup: address
  space, open files, the largest file it may write, no core dumps, a process
  count (not enforced for root: the cgroup's task limit is; without a cgroup
  the sandbox's processes are counted every few seconds against it). A build's disk
  use as a whole is watched while it runs (kernel/untrusted.py DiskWatch).

The host reads and writes files in directories such code could write (a build
directory, a scratch copy, a series' tree) only through this module's
*_beneath helpers: no link is followed on any component below the directory
the host made, and what is not a regular file is refused; the host's own logs
and stamps live where no sandbox can write.

QEMU is confined apart (boot/qemu.py: its seccomp sandbox). FOLIOFARM_SANDBOX=off
runs everything unsandboxed, for hosts where bubblewrap cannot make namespaces.
"""

from __future__ import annotations

import os
import platform
import resource
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Callable, Mapping, Sequence

from foliofarm import cgroups
from foliofarm.errors import InfraError, TimedOut

# What of the host a sandboxed command sees, read-only.
SYSTEM = ("/usr", "/etc/alternatives", "/etc/ld.so.cache", "/etc/perl")
def toolchain() -> tuple[str, ...]:
    """What of the host a reproducer's compiler sees, read-only: the cross
    toolchain (Debian's gcc-aarch64-linux-gnu: its driver in /usr/bin, cc1 in
    /usr/lib/gcc-cross, the arm64 C library and headers in
    /usr/aarch64-linux-gnu), the host's libraries it runs on and the loader's
    cache; not /usr/local (its etc/ included), /usr/share, /usr/include or
    the rest of /etc, which a compile error would quote into a reply. On an
    arm64 host the compiler is the native one: its own directories too."""
    arch = getattr(sys.implementation, "_multiarch", "") or f"{platform.machine()}-linux-gnu"
    dirs = ["/usr/bin", "/usr/lib/gcc-cross", "/usr/aarch64-linux-gnu", f"/usr/lib/{arch}", "/usr/lib64",
            "/etc/alternatives", "/etc/ld.so.cache"]
    if platform.machine() == "aarch64":
        dirs += ["/usr/lib/gcc", "/usr/libexec/gcc", "/usr/include"]
    return tuple(dirs)


# Merged-/usr symlinks (or directories on older hosts).
TOP_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")


# The environment every sandboxed command starts from; nothing else of the
# farm's own environment reaches it.
BASE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LC_ALL": "C", "HOME": "/nonexistent"}


def environment(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The whole environment of a sandboxed command: BASE_ENV and ``env``."""
    return {**BASE_ENV, **(env or {})}


def _env_mb(name: str, default: int) -> int:
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        raise InfraError(f"{name}={os.environ[name]!r}: a whole number of MB (or tasks) is "
                         "needed") from None


def _total_memory_default() -> int:
    """A sandbox's memory for all its processes together: 3/4 of the host's, at most 16 GB."""
    try:
        kb = next(int(ln.split()[1]) for ln in Path("/proc/meminfo").read_text().splitlines()
                  if ln.startswith("MemTotal:"))
    except (OSError, StopIteration, ValueError):
        kb = 8 << 20
    return min(16384, (kb >> 10) * 3 // 4)


@dataclass(frozen=True)
class Limits:
    """What one sandboxed command may use. ``seconds``: wall clock, then the
    whole sandbox is killed. ``total_memory_mb`` and ``tasks``:
    totals over all its processes, held by a cgroup (cgroups.py) where the host
    gives one. ``tmp_mb``: the size of its /tmp. The rest are setrlimit's, per
    process: the floor everywhere."""
    seconds: float | None = None
    memory_mb: int = 4096         # RLIMIT_AS: a cc1 of a kernel file needs a few hundred
    processes: int = 4096         # RLIMIT_NPROC (not enforced for root: the cgroup's tasks are)
    file_mb: int = 2048           # RLIMIT_FSIZE: the largest file it may write
    open_files: int = 4096        # RLIMIT_NOFILE
    total_memory_mb: int = field(
        default_factory=lambda: _env_mb("FOLIOFARM_SANDBOX_MEMORY_MB", _total_memory_default()))
    tasks: int = field(default_factory=lambda: _env_mb("FOLIOFARM_SANDBOX_TASKS", 2048))
    tmp_mb: int = field(default_factory=lambda: _env_mb("FOLIOFARM_SANDBOX_TMP_MB", 1024))

    def apply(self) -> None:
        """Set the limits on this process (a child's preexec: bwrap and all it starts)."""
        mb = 1 << 20
        for what, value in ((resource.RLIMIT_AS, self.memory_mb * mb),
                            (resource.RLIMIT_NPROC, self.processes),
                            (resource.RLIMIT_FSIZE, self.file_mb * mb),
                            (resource.RLIMIT_NOFILE, self.open_files),
                            (resource.RLIMIT_CORE, 0)):
            soft, hard = resource.getrlimit(what)
            new = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(what, (new, hard if hard != resource.RLIM_INFINITY else new))

    def totals(self) -> cgroups.Totals:
        return cgroups.Totals(self.total_memory_mb, self.tasks)


def enabled() -> bool:
    return os.environ.get("FOLIOFARM_SANDBOX", "on").lower() not in ("off", "0", "no")


@cache
def _check() -> str:
    """'' if bubblewrap works here, else why not."""
    if shutil.which("bwrap") is None:
        return ("bubblewrap (bwrap) is not installed: run tools/setup-host.sh (Debian package "
                "bubblewrap), or set FOLIOFARM_SANDBOX=off to build series unsandboxed")
    probe = subprocess.run(wrap(["true"], check=False), capture_output=True, text=True)
    if probe.returncode:
        return (f"bubblewrap cannot make a sandbox on this host ({probe.stderr.strip()[:200]}): "
                "it needs user namespaces (bubblewrap 0.8 or later; sysctl "
                "kernel.unprivileged_userns_clone=1 for a user) "
                "or set FOLIOFARM_SANDBOX=off to build series unsandboxed")
    return ""


# No privilege inside, whoever runs the farm: a user namespace of its own even
# for root (bubblewrap run by root keeps every capability without one), every
# capability dropped, no nested user namespace to gain them back in.
UNPRIVILEGED = ("--unshare-user", "--disable-userns", "--cap-drop", "ALL")


def wrap(argv: Sequence[str | os.PathLike[str]], *, read: Sequence[Path] = (),
         write: Sequence[Path] = (), cwd: Path | None = None, check: bool = True,
         env: Mapping[str, str] | None = None, tmp_mb: int | None = None,
         system: Sequence[str] = SYSTEM) -> list[str]:
    """``argv`` as a sandboxed command line, or as it is with the sandbox off.
    Inside, the environment is cleared and holds environment(``env``) only; run
    the line with that environment too (run() does), so that nothing else
    reaches the command with the sandbox off either."""
    args = [os.fspath(a) for a in argv]
    if not enabled():
        return args
    if check and (why := _check()):
        raise InfraError(why)
    tmp = (tmp_mb if tmp_mb is not None else Limits().tmp_mb) << 20
    out = ["bwrap", "--die-with-parent", "--new-session", "--unshare-all", *UNPRIVILEGED,
           "--dev", "/dev", "--proc", "/proc", "--size", str(tmp), "--tmpfs", "/tmp", "--clearenv"]
    for k, v in environment(env).items():
        out += ["--setenv", k, v]
    home = os.environ.get("HOME", "")
    home = home if home not in ("", "/") and os.path.isdir(home) else ""
    if home:
        # $HOME is there but empty (what the command is given may lie below it)
        out += ["--tmpfs", home]
    for p in system:
        if os.path.exists(p):
            out += ["--ro-bind", p, p]
    for p in TOP_LINKS:
        if os.path.islink(p):
            out += ["--symlink", os.readlink(p), p]
        elif os.path.isdir(p):
            out += ["--ro-bind", p, p]
    for p in read:
        out += ["--ro-bind", os.fspath(p), os.fspath(p)]
    for p in write:
        Path(p).mkdir(parents=True, exist_ok=True)
        out += ["--bind", os.fspath(p), os.fspath(p)]
    if home:
        # ... and read-only: a script that writes there fails, and says so
        out += ["--remount-ro", home]
    if cwd is not None:
        out += ["--chdir", os.fspath(cwd)]
    return out + ["--", *args]


def run(argv: Sequence[str | os.PathLike[str]], *, read: Sequence[Path] = (),
        write: Sequence[Path] = (), cwd: Path | None = None, env: Mapping[str, str] | None = None,
        limits: Limits | None = None, log: Path | None = None, what: str = "",
        watch: Callable[[], str] | None = None, check: bool = True,
        input: bytes | None = None, system: Sequence[str] = SYSTEM
        ) -> subprocess.CompletedProcess[bytes]:
    """``argv`` run in the sandbox with a cleared environment and ``limits``
    (util.run's errors; a command over its deadline, over a total of its
    cgroup, or one ``watch`` finds over a limit, is killed whole and raises
    TimedOut with the reason; with ``check`` False a non-zero exit is returned)."""
    from foliofarm.util import DISK_FULL, run as run_
    lim = limits or Limits()
    name = what or os.fspath(argv[0])
    group = cgroups.Cgroup.make(lim.totals()) if enabled() else None
    # no cgroup: RLIMIT_NPROC refuses the forks (not for root), and the
    # command's tasks are counted every few seconds: at the limit, it is stopped
    counted = None if group is not None or not enabled() else _TaskCount(lim.tasks)

    def preexec() -> None:
        lim.apply()
        if group is not None:
            group.join()

    def watching() -> str:
        return ((group.stopped() if group is not None else "") or (counted() if counted else "")
                or (watch() if watch else ""))

    try:
        proc = run_(wrap(argv, read=read, write=write, cwd=cwd, env=env, tmp_mb=lim.tmp_mb, system=system),
                    cwd=cwd, env=environment(env), inherit=False, log=log, what=name,
                    timeout=lim.seconds,
                    preexec=preexec, watch=watching if group or counted or watch else None,
                    check=check, input=input, on_start=counted.start if counted else None,
                    cap=CAPTURED)
        if proc.returncode and group is not None and (why := group.stopped()):
            raise TimedOut(f"{name} was stopped at {why}")
        # a watch that walks at intervals has the last word: what a command
        # made between its last walk and its end counts too
        if watch is not None and (why := getattr(watch, "final", lambda: "")()):
            raise TimedOut(f"{name} was stopped at {why} (found when it ended)")
        return proc
    except TimedOut:
        raise
    except InfraError as exc:
        if group is not None and (why := group.stopped()):
            raise TimedOut(f"{name} was stopped at {why}") from None
        if enabled() and _tmp_full(str(exc), write, log):
            raise TimedOut(f"{name} filled its /tmp (the sandbox's /tmp holds at most "
                             f"{lim.tmp_mb} MB: FOLIOFARM_SANDBOX_TMP_MB; the host's disk has room): "
                             + str(exc).removeprefix(DISK_FULL)) from None
        raise
    finally:
        if group is not None:
            group.close()


# The most of a sandboxed command's stdout (and of its stderr) the farm keeps
# when it captures them, head and tail (util.Capped): a 30 KB file that
# includes itself prints 500 MB of warnings.
CAPTURED = 8 << 20


class _TaskCount:
    """Where the host gives no cgroup: the processes below the sandbox,
    counted when asked; at ``tasks`` or more, the reason to stop it."""

    def __init__(self, tasks: int) -> None:
        self.tasks, self.pid = tasks, 0

    def start(self, pid: int) -> None:
        self.pid = pid

    def __call__(self) -> str:
        from foliofarm.util import descendants
        if self.pid and len(descendants(self.pid)) >= self.tasks:
            return (f"its limit of {self.tasks} tasks at once (counted: the host gives the farm "
                    "no cgroup; a process that forks without end?; FOLIOFARM_SANDBOX_TASKS)")
        return ""


def _tmp_full(message: str, write: Sequence[Path], log: Path | None) -> bool:
    """A failure that says "No space left on device" (in its error or anywhere
    in its log: with -j2 the other job's lines come after it) while every
    directory the command may write has room (bytes and inodes): its /tmp is
    what was full."""
    from foliofarm.bounded import log_lines
    full = "No space left on device"
    if full not in message and not (log and log_lines(log, lambda ln: full in ln, 1)):
        return False
    return all(shutil.disk_usage(p).free > 1 << 30 and os.statvfs(p).f_favail > 1000
               for p in write if os.path.isdir(p))


# What a build's log says when the sandbox stopped something.
STOPPED = ("Read-only file system", "Network is unreachable", "Temporary failure in name resolution",
           "Could not resolve host", "Name or service not known")


def is_stopped(line: str) -> bool:
    """A line of a sandboxed command's output that shows the sandbox stopping it."""
    return any(s in line for s in STOPPED)


def stopped_lines(log_text: str, limit: int = 5) -> list[str]:
    """Lines of a sandboxed command's output that show the sandbox stopping it."""
    if not enabled():
        return []
    return [ln for ln in log_text.splitlines() if is_stopped(ln)][:limit]

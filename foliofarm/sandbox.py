"""Running a kernel tree's own code in a sandbox.

A series is someone else's code, and so is the tree it applies to: its
Makefiles, Kconfig, scripts/merge_config.sh and scripts/checkpatch.pl all run
during a farm run. Each such command (make, merge_config.sh, checkpatch.pl and
`git am`) runs under bubblewrap with:

- no network (a network namespace of its own with only loopback), its own
  PID, IPC and UTS namespaces, killed with the farm (--die-with-parent);
- a file system of the host's /usr (the toolchain), read-only, and nothing
  else of the host: not $HOME, not /root, not the rest of the cache, not /etc
  beyond the alternatives symlinks that /usr's tools point through;
- read access to the paths the command is given (the tree, the Kconfig
  fragments, the patch files) and write access only to its own outputs (the
  build directory and ccache; the tree itself only for `git am`);
- an empty /tmp, and an empty read-only $HOME: a script that writes there
  fails with "Read-only file system";
- a cleared environment (bubblewrap's --clearenv): PATH, LC_ALL, HOME (a path
  that does not exist) and what the command is given (ARCH, CROSS_COMPILE, ccache's
  settings), nothing of the farm's own: a `$(info $(SECRET))` in a Makefile
  prints an empty line, whatever the farm was started with;
- limits (Limits): a wall-clock deadline after which the whole sandbox is
  killed, and per-process resource limits set with setrlimit before bubblewrap
  starts (inherited by everything inside): address space, open files, the
  largest file it may write, no core dumps, and a process count. setrlimit and
  not a cgroup: it needs no privilege, no systemd and no cgroup v2 delegation
  (CI runners and containers often have neither), and its limits are per
  process, which is what stops a runaway cc1 or a fork loop; a build's disk use
  as a whole is watched while it runs (kernel/untrusted.py DiskWatch).

QEMU needs no sandbox of its own here: the guest has no network device and its
disks are read-only or snapshots. FOLIOFARM_SANDBOX=off runs everything
unsandboxed, for hosts where bubblewrap cannot make namespaces.
"""

from __future__ import annotations

import errno
import os
import resource
import stat
import shutil
import subprocess
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Callable, Mapping, Sequence

from foliofarm.errors import InfraError

# What of the host a sandboxed command sees, read-only.
SYSTEM = ("/usr", "/etc/alternatives", "/etc/ld.so.cache", "/etc/perl")
# Merged-/usr symlinks (or directories on older hosts).
TOP_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")


# The environment every sandboxed command starts from; nothing else of the
# farm's own environment reaches it.
BASE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LC_ALL": "C", "HOME": "/nonexistent"}


def environment(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The whole environment of a sandboxed command: BASE_ENV and ``env``."""
    return {**BASE_ENV, **(env or {})}


@dataclass(frozen=True)
class Limits:
    """What one sandboxed command may use. ``seconds``: wall clock, then the
    whole sandbox is killed; the rest are setrlimit's, per process."""
    seconds: float | None = None
    memory_mb: int = 4096         # RLIMIT_AS: a cc1 of a kernel file needs a few hundred
    processes: int = 4096         # RLIMIT_NPROC (not enforced for root: see the README)
    file_mb: int = 2048           # RLIMIT_FSIZE: the largest file it may write
    open_files: int = 4096        # RLIMIT_NOFILE

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
                "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1) "
                "or set FOLIOFARM_SANDBOX=off to build series unsandboxed")
    return ""


def wrap(argv: Sequence[str | os.PathLike[str]], *, read: Sequence[Path] = (),
         write: Sequence[Path] = (), cwd: Path | None = None, check: bool = True,
         env: Mapping[str, str] | None = None) -> list[str]:
    """``argv`` as a sandboxed command line, or as it is with the sandbox off.
    Inside, the environment is cleared and holds environment(``env``) only; run
    the line with that environment too (run() does), so that nothing else
    reaches the command with the sandbox off either."""
    args = [os.fspath(a) for a in argv]
    if not enabled():
        return args
    if check and (why := _check()):
        raise InfraError(why)
    out = ["bwrap", "--die-with-parent", "--new-session", "--unshare-all",
           "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--clearenv"]
    for k, v in environment(env).items():
        out += ["--setenv", k, v]
    home = os.environ.get("HOME", "")
    home = home if home not in ("", "/") and os.path.isdir(home) else ""
    if home:
        # $HOME is there but empty (what the command is given may lie below it)
        out += ["--tmpfs", home]
    for p in SYSTEM:
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
        watch: Callable[[], str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """``argv`` run in the sandbox with a cleared environment and ``limits``
    (util.run's errors; a command over its deadline, or one ``watch`` finds
    over a limit, is killed whole and raises TimedOut)."""
    from foliofarm.util import run as run_
    lim = limits or Limits()
    return run_(wrap(argv, read=read, write=write, cwd=cwd, env=env), env=environment(env),
                inherit=False, log=log, what=what, timeout=lim.seconds, preexec=lim.apply,
                watch=watch)


# What a build's log says when the sandbox stopped something.
STOPPED = ("Read-only file system", "Network is unreachable", "Temporary failure in name resolution",
           "Could not resolve host", "Name or service not known")


def stopped_lines(log_text: str, limit: int = 5) -> list[str]:
    """Lines of a sandboxed command's output that show the sandbox stopping it."""
    if not enabled():
        return []
    return [ln for ln in log_text.splitlines() if any(s in ln for s in STOPPED)][:limit]


# -- files the sandboxed code made or brought (a series' tree, what its build
# wrote): read without following links, only if they are what they should be,
# and bounded. A link to a host file, a FIFO that blocks or /dev/zero is never read.


def read_regular(path: Path, max_bytes: int, what: str = "") -> bytes:
    """A file someone else's code wrote, read without following a link and
    only if it is a regular file of at most ``max_bytes`` (never a FIFO that
    blocks, a device, or a link to a host file)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InfraError(f"{what or path}: {path} is a symbolic link; refused") from None
        raise
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise InfraError(f"{what or path}: {path} is not a regular file; refused")
        if st.st_size > max_bytes:
            raise InfraError(f"{what or path}: {path} is {st.st_size >> 20} MB, over the "
                             f"{max_bytes >> 20} MB such a file may have; refused")
        return f.read(max_bytes + 1)[:max_bytes]


def tree_file_bytes(path: str | os.PathLike[str]) -> bytes:
    """A tree's file as a cache key sees it (a series' tree: anything may be
    there): a link by where it points, never followed (a link to /dev/zero
    would be read forever); anything but a regular file by its kind alone."""
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        return b"link:" + os.fsencode(os.readlink(path))
    if not stat.S_ISREG(st.st_mode):
        return f"special:{stat.S_IFMT(st.st_mode)}".encode()
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as f:
        return f.read()


def copy_regular(src: Path, dst: Path, max_bytes: int, what: str = "") -> None:
    """Copy a file someone else's code made, on read_regular's terms."""
    dst.write_bytes(read_regular(src, max_bytes, what))
    st = os.stat(src, follow_symlinks=False)
    os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns))


def tree_size(path: Path) -> int:
    """Bytes a directory tree takes on disk (links not followed)."""
    total = 0
    stack = [path]
    while stack:
        try:
            with os.scandir(stack.pop()) as it:
                for e in it:
                    try:
                        st = e.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    total += st.st_blocks * 512
                    if e.is_dir(follow_symlinks=False):
                        stack.append(Path(e.path))
        except OSError:
            continue
    return total

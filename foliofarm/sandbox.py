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
  fails with "Read-only file system".

QEMU needs no sandbox of its own here: the guest has no network device and its
disks are read-only or snapshots. FOLIOFARM_SANDBOX=off runs everything
unsandboxed, for hosts where bubblewrap cannot make namespaces.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from functools import cache
from pathlib import Path
from typing import Sequence

from foliofarm.errors import InfraError

# What of the host a sandboxed command sees, read-only.
SYSTEM = ("/usr", "/etc/alternatives", "/etc/ld.so.cache", "/etc/perl")
# Merged-/usr symlinks (or directories on older hosts).
TOP_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")


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
         write: Sequence[Path] = (), cwd: Path | None = None, check: bool = True) -> list[str]:
    """``argv`` as a sandboxed command line, or as it is with the sandbox off."""
    args = [os.fspath(a) for a in argv]
    if not enabled():
        return args
    if check and (why := _check()):
        raise InfraError(why)
    out = ["bwrap", "--die-with-parent", "--new-session", "--unshare-all",
           "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
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


# What a build's log says when the sandbox stopped something.
STOPPED = ("Read-only file system", "Network is unreachable", "Temporary failure in name resolution",
           "Could not resolve host", "Name or service not known")


def stopped_lines(log_text: str, limit: int = 5) -> list[str]:
    """Lines of a sandboxed command's output that show the sandbox stopping it."""
    if not enabled():
        return []
    return [ln for ln in log_text.splitlines() if any(s in ln for s in STOPPED)][:limit]

"""A series' build directory on a file system of its own, which the kernel
holds to a size and an inode count: an ext4 image made for the series (in
the host's own directory of the build, where no build writes), loop-mounted
on the build directory, the base's build copied in.

A file a build unlinks but keeps open still takes its blocks on that file
system, and 300,000 empty files take its inodes: a disk or inode bomb stops
at the limit with "No space left on device" (filled() says which limit),
never on the host's disk. Removal is the file system's: unmounted, its image
deleted, whatever depth or names the build left in it.

Root only (mount and loop devices); as a user the build directory is an
ordinary directory and DiskWatch (untrusted.py) walks it, counting bytes,
inodes and the host disk's free space, which unlinked files still take.
FOLIOFARM_SERIES_FS=off turns it off as root too."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from foliofarm.util import run

IMAGE = "disk.img"        # in the build's host directory (untrusted.host_dir)


def why_not() -> str:
    """'' when a series' build directory can be a file system of its own
    here, else why not (then the walk of DiskWatch holds it)."""
    if os.environ.get("FOLIOFARM_SERIES_FS", "on").lower() in ("off", "0", "no"):
        return "FOLIOFARM_SERIES_FS=off"
    if os.geteuid() != 0:
        return "not root: mount and loop devices are root's (the build directory is walked instead)"
    missing = [t for t in ("mkfs.ext4", "mount", "umount") if shutil.which(t) is None]
    if missing:
        return f"{', '.join(missing)} not found (Debian packages e2fsprogs, mount)"
    if not Path("/dev/loop-control").exists():
        return "no loop devices here (/dev/loop-control)"
    return ""


def make(bdir: Path, host: Path, size: int, inodes: int) -> None:
    """An ext4 file system of ``size`` bytes and ``inodes`` inodes, its image
    in ``host``, mounted on ``bdir`` (made empty), nosuid and nodev."""
    image = host / IMAGE
    image.unlink(missing_ok=True)
    with open(image, "wb") as f:        # sparse: only what the build writes takes the host's disk
        f.truncate(size)
    run(["mkfs.ext4", "-q", "-F", "-N", str(inodes), "-m", "0", "-O", "^has_journal",
         "-E", "lazy_itable_init=1", str(image)], what="mkfs.ext4 of the series' build directory")
    bdir.mkdir(parents=True, exist_ok=True)
    run(["mount", "-o", "loop,nosuid,nodev,noatime", str(image), str(bdir)],
        what="mounting the series' build directory")


def mounted_below(path: Path) -> list[Path]:
    """The mount points at or below ``path``, deepest first (/proc/self/mountinfo)."""
    top = os.path.realpath(path)
    found = []
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return []
    for line in lines:
        fields = line.split()
        if len(fields) > 4:
            point = fields[4].encode().decode("unicode_escape")
            if point == top or point.startswith(top + "/"):
                found.append(Path(point))
    return sorted(found, key=lambda p: len(p.parts), reverse=True)


def unmount(bdir: Path, host: Path) -> str:
    """``bdir``'s own file system unmounted (lazily if still busy) and its
    image deleted; '' when done, else what went wrong."""
    said = ""
    for point in mounted_below(bdir):
        done = run(["umount", str(point)], what="umount", check=False)
        if done.returncode:
            done = run(["umount", "-l", str(point)], what="umount -l", check=False)
            if done.returncode:
                said = f"{point} could not be unmounted: {done.stderr.decode(errors='replace')[-300:]}"
    (host / IMAGE).unlink(missing_ok=True)
    return said


def filled(bdir: Path, said_full: bool = False) -> str:
    """Which limit of its own file system a series' build reached, if any:
    read from the file system, or, where what filled it is gone (a file held
    open by a process that died with the build), from ``said_full`` (its log
    said "No space left on device")."""
    if not mounted_below(bdir):
        return ""
    try:
        st = os.statvfs(bdir)
    except OSError:
        return ""
    inodes = (f"its limit of {st.f_files} files and directories (inodes) for a series' build "
              "(FOLIOFARM_SERIES_INODES, over what the base's build holds)")
    size = (f"its limit of {st.f_blocks * st.f_frsize >> 20} MB of disk for a series' build "
            "(FOLIOFARM_SERIES_DISK_MB, over what the base's build holds)")
    # (what a failing make deleted on its way out gives a few back)
    if st.f_favail < max(64, st.f_files // 100):
        return inodes
    if st.f_bavail < max((1 << 20) // st.f_frsize, st.f_blocks // 100):
        return size
    if said_full:
        return f"{size} or {inodes.removeprefix('its ')}, which its build filled"
    return ""

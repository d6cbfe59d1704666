"""A newc ("070701") cpio archive, as the kernel's initramfs unpacker reads it
(Documentation/driver-api/early-userspace/buffer-format.rst), written in
Python: the host never runs a program a kernel build made (the kernel's own
usr/gen_init_cpio would be the series' own code). Device nodes, directories
and links are entries of the archive, so no privilege is needed to make them.

Entries are written in the order given with inode numbers from 721 up (as
gen_init_cpio numbers them), owner and mtime fixed: the same inputs give the
same bytes."""

from __future__ import annotations

import stat
from dataclasses import dataclass
from pathlib import Path

MAGIC = b"070701"
TRAILER = "TRAILER!!!"


@dataclass(frozen=True)
class Entry:
    """One entry: ``kind`` is dir, file, slink or nod (a character device)."""
    kind: str
    name: str                  # its path in the archive, from the root ("/init")
    mode: int                  # permission bits
    data: bytes = b""          # a file's content, a link's target
    rdev: tuple[int, int] = (0, 0)


def _pad(n: int) -> bytes:
    return b"\0" * (-n % 4)


def _header(ino: int, mode: int, nlink: int, size: int, rdev: tuple[int, int], namesize: int) -> bytes:
    fields = (ino, mode, 0, 0, nlink, 0, size, 0, 0, rdev[0], rdev[1], namesize, 0)
    return MAGIC + b"".join(b"%08X" % f for f in fields)


def archive(entries: list[Entry]) -> bytes:
    """The archive of ``entries`` and its trailer."""
    kinds = {"dir": stat.S_IFDIR, "file": stat.S_IFREG, "slink": stat.S_IFLNK, "nod": stat.S_IFCHR}
    out = bytearray()
    for ino, e in enumerate(entries, 721):
        if e.kind not in kinds:
            raise ValueError(f"cpio entry {e.name!r}: unknown kind {e.kind!r}")
        name = e.name.lstrip("/").encode() + b"\0"
        data = e.data if e.kind in ("file", "slink") else b""
        out += _header(ino, kinds[e.kind] | (e.mode & 0o7777), 2 if e.kind == "dir" else 1,
                       len(data), e.rdev, len(name))
        out += name + _pad(110 + len(name)) + data + _pad(len(data))
    name = TRAILER.encode() + b"\0"
    out += _header(0, 0, 1, 0, (0, 0), len(name)) + name + _pad(110 + len(name))
    return bytes(out)


def read(blob: bytes) -> list[Entry]:
    """The entries of a newc archive (up to its trailer): the tests read back
    what archive() wrote, and what gen_init_cpio writes, the same way."""
    out: list[Entry] = []
    pos = 0
    while True:
        head = blob[pos:pos + 110]
        if len(head) < 110 or head[:6] != MAGIC:
            raise ValueError(f"not a newc cpio entry at byte {pos}")
        f = [int(head[6 + 8 * i:14 + 8 * i], 16) for i in range(13)]
        mode, size, rmaj, rmin, namesize = f[1], f[6], f[9], f[10], f[11]
        pos += 110
        name = blob[pos:pos + namesize - 1].decode()
        pos += namesize + (-(110 + namesize) % 4)
        data = blob[pos:pos + size]
        pos += size + (-size % 4)
        if name == TRAILER:
            return out
        kind = {stat.S_IFDIR: "dir", stat.S_IFREG: "file", stat.S_IFLNK: "slink",
                stat.S_IFCHR: "nod"}.get(stat.S_IFMT(mode), "other")
        out.append(Entry(kind, "/" + name, mode & 0o7777, data, (rmaj, rmin)))


def file(name: str, path: Path, mode: int) -> Entry:
    return Entry("file", name, mode, Path(path).read_bytes())

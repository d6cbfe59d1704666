"""Disk images with the test payloads, made unprivileged on the host with each
filesystem's own mkfs, verified with its own fsck, and attached read-only.

Block size is 4K for every filesystem: no larger than any arm64 page size, so the
same image serves 4K, 16K and 64K kernels."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from foliofarm import hosttools, locks
from foliofarm.kernel.build import CROSS_COMPILE
from foliofarm.errors import BuildError, InfraError
from foliofarm.boot.qemu import SWAP_BYTES
from foliofarm.paths import VMTESTS
from foliofarm.disks.rootfs import CFLAGS
from foliofarm.util import StagingDir, check_free_space, run, seal, sealed, sha256_files, sha256_text

BLOCK_SIZE = 4096
MiB = 1 << 20

# arm64 RET (0xd65f03c0): every 4-byte slot of the stub file is a function that returns.
RET = struct.pack("<I", 0xD65F03C0)


@dataclass(frozen=True)
class Payload:
    name: str
    size: int          # bytes, for generated data files
    kind: str          # "ret" | "pattern" | "elf"
    max_page_size: int = 0   # elf: -z max-page-size, 0 for the linker's default

    @property
    def mode(self) -> int:
        return 0o755 if self.kind == "elf" else 0o644


# The files every image carries; checks refer to them by name.
PAYLOADS = (
    Payload("stubs.bin", 32 * MiB, "ret"),
    # mmap-miss: 400 touches a 1MB stride apart, each beyond the last readahead window
    Payload("big.bin", 448 * MiB, "pattern"),
    # elf-text: a real executable with a 16MB text segment, default and 2M p_align
    Payload("elf-text", 0, "elf"),
    Payload("elf-text-2m", 0, "elf", max_page_size=2 * MiB),
)
ELF_SOURCES = ("payload/elf-text.c", "payload/bigtext.S", "ffguest.c")



def image_size(fs: str) -> int:
    """Bytes for a ``fs`` image holding every payload.

    mkfs.xfs in xfsprogs 6.1 corrupts an image when a protofile payload must span an
    allocation-group boundary, so XFS gets two AGs (its minimum) each larger than the
    largest payload, and never less than the 300MB mkfs.xfs requires."""
    total = sum(p.size for p in PAYLOADS) + 64 * MiB   # executables: ~20MB each
    largest = max(p.size for p in PAYLOADS)
    if fs == "xfs":
        return max(320 * MiB, 2 * (largest + 64 * MiB), total + 128 * MiB)
    return total + total // 8 + 32 * MiB
FS_TOOLS = {"ext4": ("mkfs.ext4", "e2fsck"), "xfs": ("mkfs.xfs", "xfs_repair"),
            "erofs": ("mkfs.erofs", "fsck.erofs")}


def payload_dir(cache: Path) -> Path:
    """The files every image carries, made once: data files and farm-built executables."""
    hosttools.require(CROSS_COMPILE + "gcc")
    elf_key = sha256_text(sha256_files([VMTESTS / s for s in ELF_SOURCES] + [VMTESTS / "ffguest.h",
                                                                           VMTESTS / "ffprobe.h"]),
                          run([CROSS_COMPILE + "gcc", "--version"], what="gcc").stdout.decode(),
                          " ".join(CFLAGS))
    key = sha256_text(elf_key, *(f"{p.name}:{p.size}:{p.kind}:{p.max_page_size}" for p in PAYLOADS))[:12]
    final = cache / "payload" / key
    if final.is_dir():
        return final
    check_free_space(final.parent, 1, "test payloads")
    with StagingDir(final, replace=False) as tmp:
        for p in PAYLOADS:
            if p.kind == "elf":
                _build_elf(tmp / p.name, p.max_page_size)
            else:
                with open(tmp / p.name, "wb") as f:
                    chunk = (RET * (MiB // 4)) if p.kind == "ret" else bytes(range(256)) * (MiB // 256)
                    for _ in range(p.size // MiB):
                        f.write(chunk)
            (tmp / p.name).chmod(p.mode)
    return final


def _build_elf(out: Path, max_page_size: int) -> None:
    ldflags = [f"-Wl,-z,max-page-size={max_page_size:#x}"] if max_page_size else []
    proc = subprocess.run([CROSS_COMPILE + "gcc", *CFLAGS, f"-I{VMTESTS}", *ldflags, "-o", str(out),
                           *(str(VMTESTS / s) for s in ELF_SOURCES)],
                          capture_output=True, text=True, check=False)
    if proc.returncode:
        raise BuildError(f"the elf-text payload does not build:\n{proc.stderr}")


def tool_versions() -> str:
    out = []
    for mkfs, _ in FS_TOOLS.values():
        try:
            proc = run([mkfs, "-V"], what=mkfs)
            out.append((proc.stdout + proc.stderr).decode().splitlines()[0])
        except InfraError:
            out.append(mkfs)
    return "|".join(out)


def image(cache: Path, fs: str) -> Path:
    """The disk image for ``fs``, made and verified once."""
    hosttools.require(*FS_TOOLS[fs])
    payload = payload_dir(cache)
    key = sha256_text(payload.name, fs, tool_versions(), str(image_size(fs)))[:12]
    final = cache / "images" / f"{fs}-{key}"
    if sealed(final / "disk.img", sample=True):
        return final / "disk.img"
    with locks.hold(locks.lock_path(cache, "image", final), f"the {fs} image", True):
        return _make_image(final, fs, payload)


def _make_image(final: Path, fs: str, payload: Path) -> Path:
    if sealed(final / "disk.img", sample=True):      # made by another run meanwhile
        return final / "disk.img"
    if final.exists():
        print(f"foliofarm: {final / 'disk.img'} is damaged or unsealed: making it again", file=sys.stderr)
    check_free_space(final.parent, 1, f"the {fs} image")
    with StagingDir(final) as tmp:
        img = tmp / "disk.img"
        log = tmp / "mkfs.log"
        MAKERS[fs](img, payload, log)
        verify(fs, img, log)
        seal(img, sample=True)
    return final / "disk.img"


def _make_ext4(img: Path, payload: Path, log: Path) -> None:
    run(["mkfs.ext4", "-q", "-F", "-b", str(BLOCK_SIZE), "-L", "ext4", "-E", "root_owner=0:0",
         "-d", str(payload), str(img), f"{image_size('ext4') // 1024}k"], log=log, what="mkfs.ext4")


def _make_xfs(img: Path, payload: Path, log: Path) -> None:
    with open(img, "wb") as f:
        f.truncate(image_size("xfs"))
    # Protofile: boot-image line, block/inode counts, root dir, one line per file, '$'.
    lines = ["/dev/null", "0 0", "d--755 0 0"]
    lines += [f"{p.name} ---{p.mode:o} 0 0 {payload / p.name}" for p in PAYLOADS]
    lines.append("$")
    proto = img.with_suffix(".proto")
    proto.write_text("\n".join(lines) + "\n")
    run(["mkfs.xfs", "-q", "-f", "-b", f"size={BLOCK_SIZE}", "-d", "agcount=2", "-L", "xfs",
         "-p", str(proto), str(img)], log=log, what="mkfs.xfs")


def make_erofs(img: Path, payload: Path, log: Path | None = None) -> None:
    # erofs-utils 1.5 has no -b: its block size is the host page size, 4K on the
    # hosts this runs on; fsck.erofs and the guest mount check the result.
    run(["mkfs.erofs", "--all-root", "-T0", str(img), str(payload)],
        log=log, what="mkfs.erofs")


MAKERS = {"ext4": _make_ext4, "xfs": _make_xfs, "erofs": make_erofs}


def verify(fs: str, img: Path, log: Path) -> None:
    """Each filesystem's own checker, read-only: a bad image is never booted."""
    argv = {
        "ext4": ["e2fsck", "-f", "-n", str(img)],
        "xfs": ["xfs_repair", "-n", "-f", str(img)],
        "erofs": ["fsck.erofs", str(img)],
    }[fs]
    try:
        run(argv, log=log, what=f"{argv[0]} (verify the {fs} image)")
    except InfraError as exc:
        raise InfraError(f"the {fs} image failed verification, not using it: {exc}") from exc


# The selftests' scratch filesystem of a cell: room for files of a few PMD-sized
# folios even with 64K pages (512M each); sparse, so it costs what mkfs writes.
SCRATCH_BYTES = 4 << 30
SCRATCH_MKFS = {"ext4": ["mkfs.ext4", "-q", "-F", "-b", str(BLOCK_SIZE), "-L", "ext4-mm"],
                "xfs": ["mkfs.xfs", "-q", "-f", "-b", f"size={BLOCK_SIZE}", "-L", "xfs-mm"]}


def scratch_image(cache: Path, fs: str) -> Path | None:
    """An empty ``fs`` filesystem for the selftests that write files on the
    cell's filesystem (khugepaged all:file, split_huge_page_test), made and
    verified once, attached with snapshot=on (writes discarded); None for a
    filesystem without one (EROFS is read-only)."""
    if fs not in SCRATCH_MKFS:
        return None
    hosttools.require(*FS_TOOLS[fs])
    key = sha256_text(fs, tool_versions(), str(SCRATCH_BYTES))[:12]
    final = cache / "images" / f"{fs}-mm-{key}"
    if sealed(final / "disk.img", sample=True):
        return final / "disk.img"
    with locks.hold(locks.lock_path(cache, "image", final), f"the {fs} scratch image", True):
        if sealed(final / "disk.img", sample=True):
            return final / "disk.img"
        with StagingDir(final) as tmp:
            img, log = tmp / "disk.img", tmp / "mkfs.log"
            with open(img, "wb") as f:
                f.truncate(SCRATCH_BYTES)
            run([*SCRATCH_MKFS[fs], str(img)], log=log, what=f"{SCRATCH_MKFS[fs][0]} (scratch)")
            verify(fs, img, log)
            seal(img, sample=True)
    return final / "disk.img"


def swap_image(cache: Path) -> Path:
    """An empty, sparse image of SWAP_BYTES for the guests' swap disk; attached
    with snapshot=on, so it stays empty: the guest's mkswap and swap-outs land
    in QEMU's temporary overlay."""
    out = cache / "images" / f"swap-{SWAP_BYTES >> 20}M.raw"
    if out.is_file() and out.stat().st_size == SWAP_BYTES:
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    part = out.with_name(f"{out.name}.part-{os.getpid()}")
    with open(part, "wb") as f:
        f.truncate(SWAP_BYTES)
    os.replace(part, out)
    return out

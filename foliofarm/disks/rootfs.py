"""The guest root filesystem: an initramfs of Debian's arm64 busybox-static, the
guest programs from tests/vmtests (cross-compiled static, -Wall -Werror), the
init script from rootfs/, and the probe module built against each kernel."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from foliofarm.bounded import remove_tree
from foliofarm import hosttools, matrix
from foliofarm.intake.apt import PrivateApt
from foliofarm.kernel.build import CROSS_COMPILE, Artifacts
from foliofarm.kernel.modules import PROBE_SOURCES
from foliofarm.errors import BuildError, InfraError
from foliofarm.disks import cpio
from foliofarm.boot.qemu import REPRO, SELFTESTS, THPMAPS
from foliofarm.paths import ROOTFS, VMTESTS
from foliofarm.util import StagingDir, code_digest, run, seal, sealed, sha256_files, sha256_text, write_atomic

# A reproducer's driver (tests/vmtests/repro-run.sh): on a reproducer's disk
# (disks/reproducer.py), and beside the guest programs as /ff/ffrun for the
# checks promoted from reproducers (a row whose program is ffrun).
DRIVER = VMTESTS / "repro-run.sh"

CFLAGS = ["-static", "-O2", "-g0", "-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter",
          "-D_GNU_SOURCE"]
LIB_SOURCES = ("ffguest.c",)


def guest_programs() -> list[Path]:
    """Every tests/vmtests/*.c but the shared library and the kernel modules' sources."""
    return sorted(p for p in VMTESTS.glob("*.c")
                  if p.name not in LIB_SOURCES and p.name not in PROBE_SOURCES)


def busybox(cache: Path) -> Path:
    """Debian's arm64 busybox-static binary, fetched once."""
    return debian_binary(cache, "busybox-static", ("usr/bin/busybox", "bin/busybox"), "busybox")


def bash(cache: Path) -> Path:
    """Debian's arm64 bash-static (run_vmtests.sh is a bash script), fetched once."""
    return debian_binary(cache, "bash-static", ("bin/bash-static", "usr/bin/bash-static"), "bash")


def debian_binary(cache: Path, package: str, inside: tuple[str, ...], name: str) -> Path:
    """One static binary of Debian's arm64 ``package`` of the guest suite (the
    first of ``inside`` it has), fetched once into the cache as ``name``."""
    out = cache / "guest" / name
    if out.is_file():
        return out
    hosttools.require("dpkg-deb", "apt-get")
    suite = matrix.defaults()["guest_suite"]
    deb = PrivateApt(cache / "apt", suite, "arm64").download(package, cache / "debs")
    unpacked = cache / "guest" / f"{name}-deb"
    with StagingDir(unpacked) as tmp:
        run(["dpkg-deb", "-x", str(deb), str(tmp)], what=f"dpkg-deb -x {deb.name}")
    found = [unpacked / p for p in inside if (unpacked / p).is_file()]
    if not found:
        raise InfraError(f"{deb.name} has no {name} binary in {' or '.join(inside)}")
    write_atomic(out, found[0].read_bytes())
    out.chmod(0o755)
    return out


def build_guest_programs(cache: Path) -> Path:
    """Compile every guest program; returns the folder holding the binaries
    (and the reproducer's driver, ffrun)."""
    hosttools.require(CROSS_COMPILE + "gcc")
    sources = list(VMTESTS.glob("*.c")) + list(VMTESTS.glob("*.h")) + [DRIVER]
    cc_version = run([CROSS_COMPILE + "gcc", "--version"], what="gcc").stdout.decode()
    key = sha256_text(sha256_files(sources), cc_version, " ".join(CFLAGS))[:16]
    final = cache / "guest" / f"bin-{key}"
    if final.is_dir():
        return final
    with StagingDir(final, replace=False) as tmp:      # page sizes' threads may race here
        for prog in guest_programs():
            argv = [CROSS_COMPILE + "gcc", *CFLAGS, f"-I{VMTESTS}", "-o", str(tmp / prog.stem),
                    str(prog), *(str(VMTESTS / s) for s in LIB_SOURCES)]
            proc = subprocess.run(argv, capture_output=True, text=True, check=False)
            if proc.returncode:
                raise BuildError(f"guest program {prog.name} does not build:\n{proc.stderr}")
        shutil.copyfile(DRIVER, tmp / "ffrun")
        (tmp / "ffrun").chmod(0o755)
    return final


def mounts_table() -> str:
    """/etc/foliofarm-mounts: "serial fstype options", one line per disk a
    guest may have attached (rootfs/ffsetup mounts each at /mnt/<serial>)."""
    return "".join(f"{fs.name} {fs.name} {fs.mount_options}\n" +
                   (f"{fs.name}-rw {fs.name} {fs.rw_mount_options}\n"
                    f"{fs.name}-mm {fs.name} rw\n" if fs.rw_mount_options else "")
                   for fs in matrix.filesystems().values()) + f"{SELFTESTS} erofs ro\n{THPMAPS} erofs ro\n{REPRO} erofs ro\n"


def initramfs(cache: Path, arts: Artifacts) -> Path:
    """An initramfs for one kernel: common userland plus that kernel's probe,
    packed by disks/cpio.py (never by a program the kernel's build made)."""
    bb = busybox(cache)
    progs = build_guest_programs(cache)
    mounts = mounts_table()
    key = sha256_text(sha256_files([bb, *progs.iterdir(), arts.probe, arts.splat_module,
                                    ROOTFS / "init", ROOTFS / "ffsetup",
                                    ROOTFS / "banner", ROOTFS / "ffgcov"]), mounts,
                      code_digest(Path(cpio.__file__)))[:16]
    out = cache / "initramfs" / f"{arts.dir.name}-{key}.cpio"
    if sealed(out):
        return out
    dirs = ["/dev", "/bin", "/proc", "/sys", "/tmp", "/mnt", "/lib", "/etc", "/ff"]
    entries = [cpio.Entry("dir", d, 0o1777 if d == "/tmp" else 0o755) for d in dirs]
    entries[1:1] = [cpio.Entry("nod", "/dev/console", 0o600, rdev=(5, 1)),
                    cpio.Entry("nod", "/dev/null", 0o666, rdev=(1, 3))]
    entries += [
        cpio.file("/bin/busybox", bb, 0o755),
        cpio.Entry("slink", "/bin/sh", 0o777, b"/bin/busybox"),
        cpio.file("/init", ROOTFS / "init", 0o755),
        cpio.file("/bin/ffbanner", ROOTFS / "banner", 0o755),
        cpio.file("/bin/ffsetup", ROOTFS / "ffsetup", 0o755),
        cpio.file("/bin/ffgcov", ROOTFS / "ffgcov", 0o755),
        cpio.file("/lib/ffprobe.ko", arts.probe, 0o644),
        cpio.file("/lib/ffsplat.ko", arts.splat_module, 0o644),
        cpio.Entry("file", "/etc/foliofarm-mounts", 0o644, mounts.encode()),
    ]
    entries += [cpio.file(f"/ff/{p.name}", p, 0o755) for p in sorted(progs.iterdir())]
    write_atomic(out, cpio.archive(entries))
    seal(out)
    return out


def clean(cache: Path) -> None:
    remove_tree(cache / "initramfs")

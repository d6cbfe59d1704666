"""The thpmaps disk: Debian's arm64 Python 3 with numpy, unpacked into a root the
guest chroots into, and the tree's own tools/mm/thpmaps, which the thpmaps check
runs on the exec-text mapping it has just dumped (tests/vmtests/thpmaps-run.sh).

The root is every package apt would install for python3 and python3-numpy into
an empty system, unpacked with dpkg-deb (no maintainer scripts: nothing of them
is needed to run Python), cached by the packages' versions; the disk adds the
tree's thpmaps and is cached by both."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from foliofarm import hosttools
from foliofarm.disks import debroot, images
from foliofarm.errors import InfraError
from foliofarm.paths import VMTESTS
from foliofarm.intake.source import KernelSource
from foliofarm.beneath import read_regular
from foliofarm.util import check_free_space, seal, sealed, sha256_files, sha256_text, tmp_dir

PACKAGES = ["python3-minimal", "python3-numpy"]
GUEST_SCRIPT = VMTESTS / "thpmaps-run.sh"
THPMAPS = Path("tools/mm/thpmaps")
# What the packages' maintainer scripts would have made (update-alternatives in
# libblas3's and liblapack3's postinst): numpy's extension links libblas.so.3
# and liblapack.so.3 by these names.
ALTERNATIVES = {"usr/lib/aarch64-linux-gnu/libblas.so.3": "blas/libblas.so.3",
                "usr/lib/aarch64-linux-gnu/liblapack.so.3": "lapack/liblapack.so.3"}


def sysroot(cache: Path) -> Path:
    """The unpacked root, keyed by the packages and versions it holds and the recipe."""
    return debroot.unpacked(cache, PACKAGES, "pyroot", "the Python root of the thpmaps disk",
                            _alternatives, [Path(__file__)], "usr/bin/python3")


def _alternatives(root: Path) -> None:
    for link, target in ALTERNATIVES.items():
        if not (root / link).exists():
            if not (root / link).parent.joinpath(target).is_file():
                raise InfraError(f"Debian's packages for {' '.join(PACKAGES)} have no "
                                 f"{Path(link).parent / target}")
            (root / link).symlink_to(target)


def image(cache: Path, src: KernelSource) -> Path:
    """The thpmaps disk of ``src``: the Python root, the tree's tools/mm/thpmaps
    at /thpmaps and the guest's driver at /thpmaps-run."""
    script = src.tree / THPMAPS
    if not script.is_file() and not script.is_symlink():
        raise InfraError(f"{src.label} has no {THPMAPS}: the thpmaps cross-check needs a tree "
                         "that has it (Linux 6.9 or later)")
    # the tree's (a series') file: never a link to a host file, never a device
    text = read_regular(script, 1 << 20, what=f"{src.label}'s {THPMAPS}", beneath=src.tree)
    hosttools.require("mkfs.erofs")
    root = sysroot(cache)
    key = sha256_text(root.name, text, sha256_files([GUEST_SCRIPT]))[:16]
    out = cache / "images" / f"thpmaps-{key}.erofs"
    if sealed(out):
        return out
    check_free_space(out.parent, 1, "the thpmaps disk")
    with tmp_dir("thpmaps-disk") as tmp:
        payload = Path(tmp) / "root"
        shutil.copytree(root, payload, symlinks=True)
        (payload / "thpmaps").write_bytes(text)
        shutil.copy2(GUEST_SCRIPT, payload / "thpmaps-run")
        for p in ("thpmaps", "thpmaps-run"):
            (payload / p).chmod(0o755)
        part = out.with_name(out.name + f".part-{os.getpid()}")
        images.make_erofs(part, payload)
        os.replace(part, out)
        seal(out)
    return out

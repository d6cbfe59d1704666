"""Which objects a coverage build profiles with gcov.

``CONFIG_GCOV_PROFILE_ALL`` instruments every kernel object: measured on 7.3
4K, 2 cores, the build took 16.7 min cold against ~7.5 for the default, and
every check ran slower in the guest. The coverage map needs only the code a
series of this field changes: a variant lists those directories (``profile``
in configs/kernels/matrix.toml) and each C file there is profiled alone, the
way Kbuild asks: ``GCOV_PROFILE_<stem>.o=y``, given on make's command line
(Kbuild's sub-makes do not see such a name from the environment; on the
command line it is passed down, and wins over the Makefiles' own).

Kbuild keys that variable by the object's name alone, not its directory, and
it profiles the object even where ``CONFIG_GCOV_PROFILE_ALL`` would not (an
object outside vmlinux and the modules). So a stem is left out when an object
of that name is built outside the kernel proper (the vDSO's, the early
position-independent code's, and the EFI stub's when the config builds it), or
where a Makefile of the tree (this architecture's, or a generic one) says
``GCOV_PROFILE_<stem>.o := n``.
A file left out is a file the map has no record of: a series that changes it
runs every selftest, which is what the map cannot see anyway.
"""

from __future__ import annotations

import io
import os
import re
import tarfile
from pathlib import Path

from foliofarm import matrix
from foliofarm.beneath import read_regular
from foliofarm.errors import BuildError
from foliofarm.util import sha256_text

# Objects built outside vmlinux and the modules (no gcov runtime there): the
# directories whose C and assembly files name the stems never profiled, and
# the config symbol that builds them ("" always).
OUTSIDE_KERNEL = {
    "arch/arm64/kernel/vdso": "", "arch/arm64/kernel/vdso32": "", "lib/vdso": "",
    "arch/arm64/kernel/pi": "", "drivers/firmware/efi/libstub": "CONFIG_EFI_STUB",
}


# A series' build keeps the notes (.gcno) of the objects it compiled again:
# each at most this, all together at most NOTES_TOTAL (a 7.3 kernel's 610
# profiled objects have 41 MB of notes).
NOTE_CAP = 16 << 20
NOTES_TOTAL = 256 << 20
NOTES_MAX = 5000
NOTES = "gcno.tgz"


def dirs(variant: str) -> list[str]:
    """The directories whose objects ``variant`` profiles alone ([] for none)."""
    return list(matrix.variants()[variant].get("profile", []))


def config_key(fragments_digest: str, variant: str) -> str:
    """The configuration's part of a build's keys: the fragments' digest, and
    where the variant profiles objects alone, the directories and this
    module's rule (the stems follow from the tree and the config)."""
    d = dirs(variant)
    return (sha256_text(fragments_digest, "profiled-v2", *d) if d else fragments_digest)[:16]


NOT_PROFILED = re.compile(r"^\s*GCOV_PROFILE_([\w.-]+)\.o\s*:?=\s*n", re.M)


def stems(tree: Path, dirs: list[str], config: str) -> list[str]:
    """The object stems of ``dirs``' C files (each directory alone, not below
    it) that no object outside the kernel proper shares and no Makefile keeps
    from gcov, sorted."""
    found = {f.stem for d in dirs for f in (tree / d).glob("*.c") if f.is_file()}
    for d, symbol in OUTSIDE_KERNEL.items():
        if symbol and f"{symbol}=y" not in config.splitlines():
            continue
        found -= {f.stem for f in (tree / d).rglob("*") if f.suffix in (".c", ".S")}
    return sorted(found - kept_out(tree))


def kept_out(tree: Path) -> set[str]:
    """The stems a Makefile of the tree sets ``GCOV_PROFILE_<stem>.o := n`` for
    (another architecture's left alone)."""
    out: set[str] = set()
    for top, subdirs, files in os.walk(tree):
        rel = os.path.relpath(top, tree)
        if rel == "arch":
            subdirs[:] = [d for d in subdirs if d == "arm64"]
        subdirs[:] = [d for d in subdirs if not d.startswith(".")]
        for name in files:
            if name in ("Makefile", "Kbuild") or name.startswith("Makefile."):
                try:
                    out.update(NOT_PROFILED.findall(Path(top, name).read_text(errors="replace")))
                except OSError:
                    continue
    return out


def make_vars(tree: Path, dirs: list[str], config: str) -> list[str]:
    """make's command-line variables that profile ``dirs``' objects."""
    return [f"GCOV_PROFILE_{s}.o=y" for s in stems(tree, dirs, config)]


def keep_notes(bdir: Path, base: Path, dirs_: list[str], into: Path) -> int:
    """The notes (.gcno) of ``dirs_``' objects that a series' build in ``bdir``
    wrote anew (they differ from the base's build directory ``base``: the
    files it changes and those that include a header it changes), packed
    into ``into`` for its patch coverage (coverage/patch.py); how many.
    They are the build's bytes: read without following a link, under caps."""
    total = kept = 0
    with tarfile.open(into, "w:gz") as tar:
        for d in dirs_:
            for note in sorted((bdir / d).glob("*.gcno"))[:NOTES_MAX]:
                rel = note.relative_to(bdir).as_posix()
                data = read_regular(note, NOTE_CAP, what=f"the build's {rel}", beneath=bdir)
                try:
                    if (base / rel).read_bytes() == data:
                        continue
                except OSError:
                    pass
                total, kept = total + len(data), kept + 1
                if total > NOTES_TOTAL or kept > NOTES_MAX:
                    raise BuildError(f"the series' build wrote over {NOTES_TOTAL >> 20} MB or "
                                     f"{NOTES_MAX} gcov notes (.gcno) in the profiled directories")
                info = tarfile.TarInfo(rel)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return kept

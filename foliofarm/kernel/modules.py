"""The probe modules (tests/vmtests: ffprobe, ffsplat) are rebuilt in a kernel's
build directory only when what kbuild's own records say they are made of
changed: kbuild's walk of an external module costs ~2.4 CPU-seconds even when
nothing in it changed, as for most series (a .c file of the kernel)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

from foliofarm.errors import InfraError
from foliofarm.beneath import (exists_beneath, list_beneath, mkdir_beneath, read_beneath,
                               read_regular, write_beneath)
from foliofarm.paths import VMTESTS
from foliofarm.util import sha256_text

# The guest's kernel modules: the page-table probe every boot loads, and the
# splat trigger that only the console recordings load.
PROBE_SOURCES = ("ffprobe.c", "ffprobe.h", "ffsplat_trigger.c", "ffsplat_noasan.c", "Kbuild")
MODULES = ("ffprobe.ko", "ffsplat.ko")
# What the probe modules were last built from (module_inputs), in the build's
# host directory (untrusted.host_dir: where no build writes).
MODULE_STAMP = "foliofarm-modules.key"


def cmd_dependencies(text: str) -> list[str]:
    """The files a kbuild ``.cmd`` record names: its ``source_``, its ``deps_``
    (``$(wildcard ...)`` entries too: a Kconfig symbol's file appearing or
    going is a change) and every path on its ``savedcmd_`` line that is not an
    option (the link's inputs and linker script)."""
    deps: list[str] = []
    in_deps = False
    for line in text.splitlines():
        if line.startswith("savedcmd_"):
            cmd = line.split(":=", 1)[1] if ":=" in line else ""
            deps += [w for w in cmd.replace(";", " ").split() if "/" in w and not w.startswith("-")
                     or w.endswith((".o", ".lds", ".ko", ".symvers", ".order"))]
        elif line.startswith("source_"):
            deps.append(line.split(":=", 1)[1].strip())
        elif line.startswith("deps_"):
            in_deps = True
            continue
        if in_deps:
            if not line.strip():
                in_deps = False
                continue
            word = line.strip().rstrip("\\").strip()
            if word.startswith("$(wildcard"):
                word = word[len("$(wildcard"):].rstrip(")").strip()
            if word:
                deps.append(word)
    return deps


def module_inputs(bdir: Path, mdir: Path, toolchain: str) -> str | None:
    """A digest of everything the probe modules are built from, as kbuild's
    own records in ``mdir`` name it (the .cmd files, so the commands too), each
    file by size and modification time as make judges it, and the kernel build
    they link against by content (its .config, Module.symvers, module.lds:
    rewritten by every kernel build, the same unless what they say changed);
    None when there are no records yet (never built here)."""
    try:
        rel = mdir.relative_to(bdir)
        cmds = [mdir / n for n, regular in list_beneath(bdir, rel)
                if regular and n.startswith(".") and n.endswith(".cmd")]
    except InfraError:
        return None      # the directory is a link, or not there: rebuild
    if not cmds:
        return None
    try:
        return _inputs(bdir, mdir, toolchain, cmds)
    except (InfraError, OSError):
        return None      # a record that is not a plain file (a series' build made it): rebuild


def _inputs(bdir: Path, mdir: Path, toolchain: str, cmds: list[Path]) -> str:
    kernel_side = (bdir / ".config", bdir / "Module.symvers", bdir / "scripts/module.lds")
    parts: list[str | bytes] = [toolchain]
    seen = {os.path.normpath(f) for f in kernel_side}     # by content, below
    for cmd in cmds:
        text = read_regular(cmd, 4 << 20, beneath=bdir).decode(errors="replace")
        parts += [cmd.name, text]
        for dep in cmd_dependencies(text):
            if dep.startswith("/"):
                path = os.path.normpath(dep)
            elif dep.endswith((".o", ".ko")):
                continue    # the modules' own objects (their inputs are in their records)
            else:
                path = os.path.normpath(mdir / dep)
                if not os.path.lexists(path):
                    path = os.path.normpath(bdir / dep)
            if path in seen:
                continue
            seen.add(path)
            # as make itself judges a file: by its time (and size); a tree's
            # checkout rewrites only the files it changes
            try:
                st = os.stat(path)
                parts.append(f"{path} {st.st_size} {st.st_mtime_ns}")
            except FileNotFoundError:
                parts.append(f"{path} absent")
    for f in kernel_side:
        parts += [f.name, read_regular(f, 64 << 20, beneath=bdir) if os.path.lexists(f)
                  else b"(absent)"]
    return sha256_text(*parts)



def build_probe(bdir: Path, host: Path, toolchain: str, log: Callable[[str], None],
                make: Callable[..., None]) -> None:
    """The probe modules' sources put in ``bdir``/ffprobe (written without
    following a link a series' build may have planted there) and ``make``
    M=... modules run, unless nothing their records name changed since the
    stamp in ``host`` (the build's host directory) was written."""
    mdir = bdir / "ffprobe"
    mkdir_beneath(bdir, "ffprobe", what="the probe modules' directory")
    for name in PROBE_SOURCES:
        src = (VMTESTS / name).read_bytes()
        rel = f"ffprobe/{name}"
        try:
            same = read_beneath(bdir, rel, 1 << 20) == src
        except InfraError:
            same = False     # absent, or not a regular file: written anew below
        if not same:
            write_beneath(bdir, rel, src, what="the probe module's sources")
    stamp = host / MODULE_STAMP
    key = module_inputs(bdir, mdir, toolchain)
    if key is not None and stamp.is_file() and stamp.read_text() == key + "\n" and all(
            exists_beneath(bdir, f"ffprobe/{f}") for f in MODULES):
        log(f"{bdir.name}: probe modules' inputs unchanged, modules kept")
        return
    stamp.unlink(missing_ok=True)   # a make killed half-way leaves no stamp to trust
    make(f"M={mdir}", "modules")
    if (key := module_inputs(bdir, mdir, toolchain)) is not None:
        stamp.write_text(key + "\n")

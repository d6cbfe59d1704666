"""The kernel's own mm selftests (tools/testing/selftests/mm), built from the
tree under test: base and series each get their own, so a series that changes
a selftest is tested with its version.

- Headers: `make headers` of the tree into a directory of the build (the uapi
  headers the selftests compile against; `headers_install` wants rsync).
- Sources: the mm folder's Makefile writes local_config.* beside itself and
  includes files from the rest of the tree (mm/gup_test.h, lib/test_hmm_uapi.h,
  ../pidfd, tools/include), so the parts it reads (TREE_PARTS) are copied to a
  scratch tree and built there, sandboxed like the kernel build.
- Libraries: libcap and libnuma for arm64, static, from Debian's arm64 packages
  (SYSROOT_PACKAGES) unpacked into a sysroot in the cache: the host's multiarch
  set-up is left alone.
- `make -k`: a test that does not build is recorded by name (with the
  compiler's error) and the others are built; the run says which are missing
  (the Makefile itself lists what it should have built).

The result is cached by the tree's content, the toolchain, the sysroot and this
recipe (RECIPE): a second run with nothing changed builds nothing."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from foliofarm.bounded import remove_tree
from foliofarm import hosttools, locks, matrix, sandbox
from foliofarm.disks import images
from foliofarm.intake.apt import DEBIAN_SUITES, PrivateApt
from foliofarm.kernel import untrusted
from foliofarm.kernel.build import CROSS_COMPILE, toolchain_id
from foliofarm.errors import InfraError, TimedOut
from foliofarm.intake.source import KernelSource
from foliofarm.paths import VMTESTS
from foliofarm.util import (StagingDir, check_free_space, clean_stale_staging, code_digest, run, seal, sealed,
                            sha256_files, sha256_text, tmp_dir, write_json)
from foliofarm.beneath import list_beneath, read_beneath, tree_file_bytes, tree_size, write_beneath

RECIPE = "mm-selftests 1"
SYSROOT_PACKAGES = ("libcap-dev", "libcap2", "libnuma-dev", "libnuma1")
# What the mm selftests read from the tree: globs relative to its top.
TREE_PARTS = ("tools/include", "tools/arch", "tools/scripts",
              "tools/testing/selftests/lib.mk", "tools/testing/selftests/*.h",
              "tools/testing/selftests/kselftest", "tools/testing/selftests/mm",
              "tools/testing/selftests/pidfd", "tools/testing/selftests/clone3",
              "tools/testing/selftests/arm64/signal",
              "mm/*.h", "lib/*.h", "include/vdso")
MM = "tools/testing/selftests/mm"
# Each make of the selftests (the tree's own code, a series' too): a stage's wall clock.
LIMITS = sandbox.Limits(seconds=3600)
# What `make headers` reads for arm64: the uapi headers the selftests compile
# against (the version header, the syscall tables, the install scripts).
HEADER_INPUTS = ("Makefile", "scripts", "include/uapi", "arch/arm64/include/uapi",
                 "arch/arm64/Makefile", "arch/arm64/tools")


def inputs_digest(tree: Path) -> str:
    """The content of every file the selftests' build reads from ``tree``
    (TREE_PARTS and HEADER_INPUTS), with its path: the cache key of the build,
    so that a series that touches none of it (most mm series: mm/*.c) reuses
    the base's selftests instead of building them again for minutes, while one
    that changes a selftest, a header they include or a uapi header gets its own."""
    h = hashlib.sha256()
    for pattern in (*TREE_PARTS, *HEADER_INPUTS):
        for top in parts_of(tree, pattern):
            files = sorted(q for q in top.rglob("*") if q.is_symlink() or q.is_file()) \
                if top.is_dir() and not top.is_symlink() else [top]
            for f in files:
                h.update(str(f.relative_to(tree)).encode() + b"\0" + tree_file_bytes(f) + b"\0")
    return h.hexdigest()


@dataclass(frozen=True)
class Selftests:
    dir: Path                  # bin/: the programs and scripts, as run_vmtests.sh expects them
    built: bool                # built by this call (False: from the cache)
    missing: dict[str, str]    # test -> why it was not built (the compiler's first error)
    seconds: float | None

    @property
    def bin(self) -> Path:
        return self.dir / "bin"


def host_suite() -> str:
    """The Debian suite whose C library the host's cross toolchain links
    against (its own release), for libraries that must link with it: a newer
    suite's static libraries call symbols an older libc lacks."""
    try:
        text = Path("/etc/os-release").read_text()
    except OSError:
        text = ""
    m = re.search(r"^VERSION_CODENAME=\"?(\w+)", text, re.M)
    return m.group(1) if m and m.group(1) in DEBIAN_SUITES else matrix.defaults()["guest_suite"]


def sysroot(cache: Path) -> Path:
    """Debian's arm64 libcap and libnuma (headers and static libraries) of the
    host's own suite, unpacked once into a sysroot."""
    suite = host_suite()
    apt = PrivateApt(cache / "apt", suite, "arm64")
    debs = [apt.download(p, cache / "debs") for p in SYSROOT_PACKAGES]
    final = cache / "guest" / f"sysroot-{sha256_text(*sorted(d.name for d in debs))[:12]}"
    if final.is_dir():
        return final
    hosttools.require("dpkg-deb")
    with StagingDir(final, replace=False) as tmp:
        for deb in debs:
            run(["dpkg-deb", "-x", str(deb), str(tmp)], what=f"dpkg-deb -x {deb.name}")
    return final


def build(cache: Path, src: KernelSource, jobs: int = 2,
          log: Callable[[str], None] = lambda s: None) -> Selftests:
    """Build (or take from the cache) the mm selftests of ``src``, holding the
    tree (shared) so that no other run applies a series to it meanwhile."""
    hosttools.require("make", CROSS_COMPILE + "gcc", "dpkg-deb")
    if not (src.tree / MM / "Makefile").is_file():
        raise InfraError(f"{src.tree} has no {MM}/Makefile: no mm selftests in this tree")
    root = sysroot(cache)
    with locks.tree(cache, src.tree, exclusive=False, log=log):
        return _build(cache, src, root, jobs, log)


def _build(cache: Path, src: KernelSource, root: Path, jobs: int,
           log: Callable[[str], None]) -> Selftests:
    recipe = sha256_text(RECIPE, toolchain_id(), root.name, code_digest(Path(__file__)))[:12]
    state = inputs_digest(src.tree)[:16]
    final = cache / "selftests" / f"{src.label}-{state}-{recipe}"
    if (final / "selftests.json").is_file():
        meta = json.loads((final / "selftests.json").read_text())
        return Selftests(final, False, meta.get("missing", {}), meta.get("seconds"))
    clean_stale_staging(final.parent)
    t0 = time.monotonic()
    log(f"building the mm selftests of {src.label} ({src.tree / MM})")
    with StagingDir(final) as tmp:
        logf = tmp / "build.log"
        hdr, scratch, out = tmp / "headers", tmp / "src", tmp / "bin"
        env = {"ARCH": "arm64", "CROSS_COMPILE": CROSS_COMPILE, "LC_ALL": "C"}
        # the tree's own makes (a series' too) may add this much to the staging folder
        watch = untrusted.DiskWatch(tmp, 0)
        sandbox.run(["make", "-C", str(src.tree), f"O={hdr}", f"-j{jobs}", "headers"],
                    read=[src.tree], write=[hdr], env=env, limits=LIMITS, log=logf,
                    what="make headers", watch=watch)
        copy_parts(src.tree, scratch)
        watch.start = tree_size(tmp)
        out.mkdir()
        cflags = f"-isystem {root}/usr/include"
        ldflags = f"-static -L{root}/usr/lib/aarch64-linux-gnu"
        make = ["make", "-k", "-C", str(scratch / MM), f"-j{jobs}", f"OUTPUT={out}",
                f"KHDR_INCLUDES=-isystem {hdr}/usr/include", f"EXTRA_CFLAGS={cflags}",
                f"LDFLAGS={ldflags}"]
        try:
            sandbox.run(make, read=[root, hdr], write=[scratch, out], env=env, limits=LIMITS,
                        log=logf, what="make -C tools/testing/selftests/mm", watch=watch)
        except TimedOut:
            raise
        except InfraError:
            pass    # -k: what did not build is listed below, the rest is used
        install_scripts(scratch, out)
        listed = sandbox.run([*make[:2], "-s", *make[2:], "--eval",
                              "foliofarm-list: ; @echo $(TEST_GEN_FILES)", "foliofarm-list"],
                             read=[root, hdr], write=[scratch, out], env=env, limits=LIMITS,
                             what="listing the mm selftests", watch=watch).stdout.decode()
        expected = [Path(t).name for t in listed.split()]
        missing = {t: first_error(logf.read_text(errors="replace"), t)
                   for t in expected if not (out / t).is_file()}
        remove_tree(scratch)
        remove_tree(hdr)
        seconds = round(time.monotonic() - t0, 1)
        write_json(tmp / "selftests.json", {"tree": str(src.tree), "state": src.state(),
                                            "origin": src.origin, "recipe": RECIPE,
                                            "sysroot": root.name, "seconds": seconds,
                                            "built": sorted(p.name for p in out.iterdir()),
                                            "missing": missing})
    if missing:
        log(f"mm selftests of {src.label}: {len(missing)} not built: {', '.join(sorted(missing))}")
    return Selftests(final, True, missing, seconds)


GUEST_SCRIPT = VMTESTS / "mm-selftests.sh"


def image(cache: Path, st: Selftests, bash: Path) -> Path:
    """The selftests disk the guest mounts read-only at /mnt/ffmm: the programs
    (bin/), Debian's static bash and the guest's driver script
    (tests/vmtests/mm-selftests.sh), an erofs image made unprivileged and
    cached by what it holds."""
    hosttools.require("mkfs.erofs")
    key = sha256_text(st.dir.name, sha256_files([bash, GUEST_SCRIPT]))[:16]
    out = cache / "images" / f"mm-selftests-{key}.erofs"
    if sealed(out):
        return out
    check_free_space(out.parent, 1, "the mm selftests disk")
    with tmp_dir("selftests-disk") as tmp:
        root = Path(tmp)
        shutil.copytree(st.bin, root / "bin", symlinks=True)
        shutil.copy2(bash, root / "bash")
        shutil.copy2(GUEST_SCRIPT, root / "mm-selftests")
        (root / "mm-selftests").chmod(0o755)
        part = out.with_name(out.name + f".part-{os.getpid()}")
        images.make_erofs(part, root)
        os.replace(part, out)
        seal(out)
    return out


def parts_of(tree: Path, pattern: str) -> list[Path]:
    """The tree's paths that ``pattern`` matches, reached without a link: a
    match below a folder that is a link (a series may add `tools -> /home`)
    is left out; a match that is itself a link is kept, as a link."""
    out = []
    for p in sorted(tree.glob(pattern)):
        parents = p.relative_to(tree).parents
        if not any((tree / d).is_symlink() for d in parents if str(d) != "."):
            out.append(p)
    return out


def copy_parts(tree: Path, scratch: Path) -> None:
    for pattern in TREE_PARTS:
        for p in parts_of(tree, pattern):
            dst = scratch / p.relative_to(tree)
            dst.parent.mkdir(parents=True, exist_ok=True)
            # a link is copied as a link (a series' link to a host file stays
            # a dangling link in the sandbox, never that file's content)
            if p.is_dir() and not p.is_symlink():
                shutil.copytree(p, dst, symlinks=True)
            else:
                shutil.copy2(p, dst, follow_symlinks=False)


def install_scripts(scratch: Path, out: Path) -> None:
    """What `make install` would add beside the programs (it needs rsync): the
    scripts run_vmtests.sh and the ksft_* wrappers call, and the settings file.
    The scratch tree is the selftests' make's to write: its mm folder and the
    scripts in it are read without following a link (a link planted there is
    passed over, never the host file it names)."""
    for name, regular in list_beneath(scratch, MM):
        if regular and (name.endswith(".sh") or name == "settings"):
            data = read_beneath(scratch, f"{MM}/{name}", 16 << 20,
                                        what="an mm selftests script")
            write_beneath(out, name, data, mode=0o755 if name.endswith(".sh") else 0o644)


def first_error(log_text: str, test: str) -> str:
    """The compiler's or linker's first error for ``test``: the error lines
    between the make failure before it and make's "bin/<test>] Error" line."""
    since: list[str] = []
    for line in log_text.splitlines():
        if re.search(rf"/{re.escape(test)}\] Error \d", line):
            errs = [ln for ln in since if re.search(r"error|undefined reference", ln)]
            return (errs[0].strip() if errs else line.strip())[:300]
        if line.startswith("make: ***"):
            since = []
        else:
            since.append(line)
    return "not built (make reported nothing for it: see build.log)"

"""Cross-builds of arm64 kernels and the probe module.

Two caches, two keys:
- build directories (``O=``) keyed by (tree location, config, toolchain): make's
  own incremental build works there, so a one-file patch rebuilds in a minute;
- artifacts keyed by (tree content, config, toolchain), published atomically with
  a complete marker: a warm run with nothing changed does not run make at all,
  and a killed build leaves nothing that a later run trusts.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from foliofarm import hosttools, locks, matrix, sandbox
from foliofarm.kernel import kconfig
from foliofarm.kernel.modules import MODULE_STAMP, MODULES, module_inputs
from foliofarm.errors import BuildError, InfraError, UsageError
from foliofarm.paths import KERNEL_CONFIGS, VMTESTS
from foliofarm.intake.source import KernelSource
from foliofarm.util import (StagingDir, check_free_space, clean_stale_staging, file_digest, is_enospc,
                            run, sha256_files, sha256_text, write_atomic, write_json)

CROSS_COMPILE = "aarch64-linux-gnu-"
# The guest's kernel modules: the page-table probe every boot loads, and the
# splat trigger that only the console recordings load.
PROBE_SOURCES = ("ffprobe.c", "ffprobe.h", "ffsplat_trigger.c", "ffsplat_noasan.c", "Kbuild")
ARTIFACT_FILES = ("Image", "config", "System.map", "ffprobe.ko", "ffsplat.ko", "gen_init_cpio")


@dataclass(frozen=True)
class Artifacts:
    dir: Path
    source: KernelSource
    page: matrix.PageSize
    variant: str
    built: bool        # True if this run built it, False if it came from the cache

    @property
    def image(self) -> Path:
        return self.dir / "Image"

    @property
    def probe(self) -> Path:
        return self.dir / "ffprobe.ko"

    @property
    def splat_module(self) -> Path:
        return self.dir / "ffsplat.ko"

    @property
    def gen_init_cpio(self) -> Path:
        return self.dir / "gen_init_cpio"

    def meta(self) -> dict:
        return json.loads((self.dir / "build.json").read_text())


def fragments(page: matrix.PageSize, variant: str) -> list[Path]:
    names = ["base.config", page.fragment, *matrix.variants()[variant]["fragments"]]
    return [KERNEL_CONFIGS / n for n in names]


def toolchain_id() -> str:
    hosttools.require(CROSS_COMPILE + "gcc")
    out = run([CROSS_COMPILE + "gcc", "--version"], what="gcc --version").stdout.decode()
    return out.splitlines()[0]


def jobs_default() -> int:
    return int(os.environ.get("FOLIOFARM_JOBS", os.cpu_count() or 2))


EXTRA_ITEM = re.compile(r"^CONFIG_[A-Za-z0-9_]+=(?:y|m|n|-?\d+|0x[0-9a-fA-F]+|\"[^\"]*\")$")


def extra_fragment(cache: Path, items: list[str]) -> Path | None:
    """`-K CONFIG_FOO=y` items as a fragment of their own (in the cache, named by
    its content), merged after the others and verified like them."""
    if not items:
        return None
    bad = [i for i in items if not EXTRA_ITEM.match(i)]
    if bad:
        raise UsageError(f"-K {bad[0]!r}: write it CONFIG_NAME=VALUE (y, m, n, a number or a "
                         "quoted string)")
    text = "# -K on the command line\n" + "".join(f"{i}\n" for i in items)
    f = cache / "fragments" / f"extra-{sha256_text(text)[:16]}.config"
    if not f.is_file():
        f.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(f, text)
    return f


class Builder:
    def __init__(self, cache: Path, log: Callable[[str], None] = lambda s: None,
                 jobs: int | None = None, extra: Path | None = None) -> None:
        self.cache = cache
        self.log = log
        self.toolchain = toolchain_id()
        self.jobs = jobs or jobs_default()
        self.extra = extra          # the -K fragment, if any
        # kconfig.inputs_digest by (tree, state) of a git tree: the page sizes
        # building at once walk the same tree once, not once each
        self._inputs: dict[tuple[str, str], str] = {}
        self._inputs_lock = threading.Lock()

    def fragments(self, page: matrix.PageSize, variant: str) -> list[Path]:
        return fragments(page, variant) + ([self.extra] if self.extra else [])

    def artifact_dir(self, source: KernelSource, page: matrix.PageSize, variant: str) -> Path | None:
        """Where the artifacts of this (tree content, config, toolchain, probe) live;
        None for a tree without git, whose content only make can judge."""
        if not source.versioned:
            return None
        config_key = sha256_files(self.fragments(page, variant))[:16]
        probe_key = sha256_files([VMTESTS / n for n in PROBE_SOURCES])[:8]
        tc_key = sha256_text(self.toolchain)[:8]
        state = sha256_text(source.state())[:16]
        return (self.cache / "artifacts" /
                f"{source.label}-{page.name}-{variant}-{state}-{config_key}-{tc_key}-{probe_key}")

    @staticmethod
    def _complete(art_dir: Path) -> bool:
        """Every artifact there, with the digest recorded when it was published: a
        truncated or damaged Image is never booted (it is built again)."""
        try:
            digests = json.loads((art_dir / "build.json").read_text()).get("sha256") or {}
            return all(digests.get(f) == file_digest(art_dir / f) for f in ARTIFACT_FILES)
        except (OSError, ValueError, AttributeError):
            return False

    def build_dir(self, source: KernelSource, page: matrix.PageSize, variant: str) -> Path:
        """Where make builds this: keyed by where the tree is, not what it
        holds, so a series applied to it rebuilds incrementally there."""
        config_key = sha256_files(self.fragments(page, variant))[:16]
        tc_key = sha256_text(self.toolchain)[:8]
        return (self.cache / "build" /
                f"{source.xy}-{page.name}-{variant}-{sha256_text(str(source.tree))[:8]}-{config_key}-{tc_key}")

    def is_warm(self, source: KernelSource, page: matrix.PageSize, variant: str = "default") -> bool:
        """True if building this runs at most an incremental make: its
        artifacts are there, or its build directory holds a finished build."""
        bdir = self.build_dir(source, page, variant)
        return self.is_cached(source, page, variant) or (
            (bdir / ".config").is_file() and (bdir / "arch/arm64/boot/Image").is_file())

    def is_cached(self, source: KernelSource, page: matrix.PageSize, variant: str = "default") -> bool:
        """True if building this would not run make."""
        art_dir = self.artifact_dir(source, page, variant)
        return art_dir is not None and self._complete(art_dir)

    def make_env(self) -> dict[str, str]:
        env = {
            "ARCH": "arm64",
            "CROSS_COMPILE": CROSS_COMPILE,
            "CCACHE_DIR": str(self.cache / "ccache"),
            "CCACHE_MAXSIZE": os.environ.get("CCACHE_MAXSIZE", "5G"),
            # Depend mode: a miss costs the compile alone, not the preprocessor
            # run besides it (the kernel's -Wp,-MMD gives ccache the headers).
            # Measured on fs/ext4 from scratch, cold ccache: ~1.02x a build
            # without ccache, against ~1.3x in ccache's default mode.
            "CCACHE_DEPEND": "1",
            # Fixed build identity: the same source builds the same Image (and hits ccache).
            "KBUILD_BUILD_USER": "foliofarm",
            "KBUILD_BUILD_HOST": "foliofarm",
            "KBUILD_BUILD_TIMESTAMP": "2000-01-01",
            "LC_ALL": "C",
        }
        return env

    def make_argv(self, source: KernelSource, bdir: Path, *targets: str) -> list[str]:
        cc = f"ccache {CROSS_COMPILE}gcc" if shutil.which("ccache") else f"{CROSS_COMPILE}gcc"
        return ["make", "-C", str(source.tree), f"O={bdir}", f"-j{self.jobs}", f"CC={cc}",
                *targets]

    def sandboxed(self, source: KernelSource, bdir: Path, argv: list[str], cwd: Path | None = None,
                  frags: list[Path] = ()) -> list[str]:
        """The tree's own code (make, merge_config.sh) sees the tree and the
        fragments read-only and writes only its build directory and ccache."""
        return sandbox.wrap(argv, read=[source.tree, KERNEL_CONFIGS, *frags],
                            write=[bdir, self.cache / "ccache"], cwd=cwd)

    def build(self, source: KernelSource, page: matrix.PageSize, variant: str = "default"
              ) -> Artifacts:
        hosttools.require("make", "gcc", "flex", "bison", "bc", "perl")
        frags = self.fragments(page, variant)
        missing = [f for f in frags if not f.is_file()]
        if missing:
            raise InfraError(f"missing Kconfig fragment(s): {', '.join(map(str, missing))}")
        # The tree must not change under the build (another run applying a
        # series), nor may two runs run make in one build directory.
        with locks.tree(self.cache, source.tree, exclusive=False, log=self.log):
            return self._build(source, page, variant, frags)

    def _build(self, source: KernelSource, page: matrix.PageSize, variant: str, frags: list[Path]
               ) -> Artifacts:
        clean_stale_staging(self.cache / "artifacts")
        art_dir = self.artifact_dir(source, page, variant)
        if art_dir is not None and self._complete(art_dir):
            return Artifacts(art_dir, source, page, variant, built=False)
        if art_dir is not None and art_dir.exists():
            self.log(f"artifacts {art_dir.name} are damaged or incomplete: building them again")

        bdir = self.build_dir(source, page, variant)
        check_free_space(bdir.parent, 3, f"building {source.label} {page.name}")
        with locks.build_dir(self.cache, bdir, log=self.log):
            if art_dir is not None and self._complete(art_dir):
                return Artifacts(art_dir, source, page, variant, built=False)  # built while we waited
            return self._make_in(source, page, variant, frags, bdir, art_dir)

    def _make_in(self, source: KernelSource, page: matrix.PageSize, variant: str, frags: list[Path],
                 bdir: Path, art_dir: Path | None) -> Artifacts:
        bdir.mkdir(parents=True, exist_ok=True)
        logf = bdir / "foliofarm-build.log"
        logf.write_text("")
        env = self.make_env()
        reproduce = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items()
                             if k in ("ARCH", "CROSS_COMPILE")) + " " + shlex.join(
            self.make_argv(source, bdir, "Image", "modules"))
        meta = {
            "state": "building",
            "kernel": source.spec, "origin": source.origin, "version": source.version,
            "tree": str(source.tree), "tree_state": source.state(),
            "page_size": page.name, "variant": variant,
            "fragments": [str(f) for f in frags], "toolchain": self.toolchain,
            "build_dir": str(bdir),
            "reproduce": f"merge {' '.join(f.name for f in frags)} over allnoconfig, then: {reproduce}",
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        # Written first, so that a killed build still says what it was doing.
        write_json(bdir / "foliofarm-build.json", meta)
        self.log(f"build {source.label} {page.name}: {reproduce}")
        t0 = time.monotonic()
        try:
            verification = self._configure(source, bdir, frags, env, logf)
            self._make(source, bdir, env, logf, "Image", "modules")
            self._build_probe(source, bdir, env, logf)
        except OSError as exc:
            if is_enospc(exc):
                raise InfraError(f"disk full while building in {bdir}: free space and rerun; "
                                 "the incomplete build will be redone") from exc
            raise
        meta.update(state="complete", seconds=round(time.monotonic() - t0, 1),
                    absent_optional=[r.symbol for r in verification.absent_optional])
        write_json(bdir / "foliofarm-build.json", meta)

        if art_dir is None:   # unversioned tree: key the artifact by what was built
            art_dir = self.cache / "artifacts" / (f"{source.label}-{page.name}-{variant}-"
                                  f"{sha256_files([bdir / 'arch/arm64/boot/Image'])[:16]}")
        with StagingDir(art_dir) as tmp:
            shutil.copy2(bdir / "arch/arm64/boot/Image", tmp / "Image")
            shutil.copy2(bdir / ".config", tmp / "config")
            shutil.copy2(bdir / "System.map", tmp / "System.map")
            shutil.copy2(bdir / "ffprobe" / "ffprobe.ko", tmp / "ffprobe.ko")
            shutil.copy2(bdir / "ffprobe" / "ffsplat.ko", tmp / "ffsplat.ko")
            shutil.copy2(bdir / "usr" / "gen_init_cpio", tmp / "gen_init_cpio")
            shutil.copy2(logf, tmp / "build.log")
            meta["sha256"] = {f: file_digest(tmp / f) for f in ARTIFACT_FILES}
            write_json(tmp / "build.json", meta)
        return Artifacts(art_dir, source, page, variant, built=True)

    def _configure(self, source: KernelSource, bdir: Path, frags: list[Path],
                   env: dict[str, str], logf: Path) -> kconfig.Verification:
        reqs = [r for f in frags for r in kconfig.parse_fragment(f)]
        old = (bdir / ".config").read_text() if (bdir / ".config").exists() else None
        # The same fragments over the same Kconfig files give the same .config:
        # then the three configuration steps (seconds each) are skipped.
        stamp = bdir / "foliofarm-kconfig.key"
        key = sha256_text(sha256_files(frags), self.config_inputs(source))
        if old is not None and stamp.is_file() and stamp.read_text() == f"{key} {sha256_text(old)}\n":
            self.log(f"{bdir.name}: configuration inputs unchanged, .config kept")
            return kconfig.verify(old, reqs, source.tree)
        stamp.unlink(missing_ok=True)
        tmp = bdir / "foliofarm-kconfig"
        tmp.mkdir(exist_ok=True)
        self._make(source, tmp, env, logf, "allnoconfig", jobs_=1)
        # merge_config.sh only merges (-m); olddefconfig then resolves dependencies.
        run(self.sandboxed(source, bdir, [str(source.tree / "scripts/kconfig/merge_config.sh"), "-m",
                                          "-O", str(tmp), str(tmp / ".config"), *map(str, frags)],
                           cwd=tmp, frags=frags), env=env, log=logf, what="merge_config.sh")
        self._make(source, tmp, env, logf, "olddefconfig", jobs_=1)
        new = (tmp / ".config").read_text()
        verification = kconfig.verify(new, reqs, source.tree)
        if new != old:  # leave .config untouched when equal: make then rebuilds nothing
            (bdir / ".config").write_text(new)
        stamp.write_text(f"{key} {sha256_text(new)}\n")
        return verification

    def config_inputs(self, source: KernelSource) -> str:
        """kconfig.inputs_digest of ``source``'s tree, walked once per tree state."""
        if not source.versioned:
            return kconfig.inputs_digest(source.tree)
        with self._inputs_lock:
            key = (str(source.tree), source.state())
            if key not in self._inputs:
                self._inputs[key] = kconfig.inputs_digest(source.tree)
            return self._inputs[key]

    def _make(self, source: KernelSource, bdir: Path, env: dict[str, str], logf: Path,
              *targets: str, jobs_: int | None = None) -> None:
        argv = self.make_argv(source, bdir, *targets)
        if jobs_ is not None:
            argv[4] = f"-j{jobs_}"
        try:
            run(self.sandboxed(source, bdir, argv), env=env, log=logf, what=f"make {' '.join(targets)}")
        except InfraError as exc:
            msg = f"{source.label}: make {' '.join(targets)} failed in {bdir}\n"
            stopped = sandbox.stopped_lines(logf.read_text(errors="replace") if logf.exists() else "")
            if stopped:
                msg += ("the build tried to write outside its build directory or to reach the "
                        "network, and the sandbox stopped it (it sees the tree and /usr read-only, "
                        "writes only its build directory, has no network):\n"
                        + "\n".join(f"  {ln}" for ln in stopped) + "\n")
            raise BuildError(msg + compiler_errors(logf, strip=f"{source.tree}/")
                             + f"\nfull log: {logf}") from exc

    def _build_probe(self, source: KernelSource, bdir: Path, env: dict[str, str],
                     logf: Path) -> None:
        mdir = bdir / "ffprobe"
        mdir.mkdir(exist_ok=True)
        for name in PROBE_SOURCES:
            src = (VMTESTS / name).read_bytes()
            dst = mdir / name
            if not dst.exists() or dst.read_bytes() != src:
                dst.write_bytes(src)
        # kept as built when nothing kbuild's records name changed (modules.py)
        stamp = mdir / MODULE_STAMP
        key = module_inputs(bdir, mdir, self.toolchain)
        if key is not None and stamp.is_file() and stamp.read_text() == key + "\n" and all(
                (mdir / f).is_file() for f in MODULES):
            self.log(f"{bdir.name}: probe modules' inputs unchanged, modules kept")
            return
        stamp.unlink(missing_ok=True)   # a make killed half-way leaves no stamp to trust
        self._make(source, bdir, env, logf, f"M={mdir}", "modules")
        if (key := module_inputs(bdir, mdir, self.toolchain)) is not None:
            stamp.write_text(key + "\n")


def compiler_errors(logf: Path, limit: int = 20, strip: str = "") -> str:
    """The compiler's error lines from a build log (what a developer wants first),
    with paths relative to the tree as in a 0-day report."""
    text = logf.read_text(errors="replace") if logf.exists() else ""
    if strip:
        text = text.replace(strip, "")
    lines = [ln for ln in text.splitlines()
             if re.search(r"\berror\b|Error \d|undefined reference", ln)]
    return "\n".join(lines[:limit]) or "\n".join(text.splitlines()[-limit:])

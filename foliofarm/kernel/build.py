"""Cross-builds of arm64 kernels and the probe module.

Two caches, two keys:
- build directories (``O=``) keyed by (tree location, config, toolchain): make's
  own incremental build works there, so a one-file patch rebuilds in a minute;
- artifacts keyed by (tree content, config, toolchain), published atomically with
  a complete marker: a warm run with nothing changed does not run make at all,
  and a killed build leaves nothing that a later run trusts.

A series' side builds in a copy of the base's build directory of its own,
with ccache read-only, and what it made is copied out without following links
(kernel/untrusted.py); the host never runs anything a build made. The host's
own files of a build (its log, its metadata, the configuration and module
stamps) live in a directory of their own beside the build directories
(host_dir), where no build can write: a link a series' build plants in its
build directory never steers where the host writes or what it reads; what
the host must put in a build directory (.config, the probe's sources) is
written without following a link (beneath.write_beneath).
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
from foliofarm.kernel import kconfig, modules, profiled, prune, seriesdisk, untrusted
from foliofarm.kernel.untrusted import compiler_errors, log_lines
from foliofarm.kernel.modules import PROBE_SOURCES
from foliofarm.errors import BuildError, InfraError, TimedOut
from foliofarm.paths import KERNEL_CONFIGS, VMTESTS
from foliofarm.intake.source import KernelSource
from foliofarm.beneath import copy_regular, write_beneath
from foliofarm.util import (StagingDir, check_free_space, clean_stale_staging, file_digest, is_enospc,
                            run, sha256_files, sha256_text, write_json)

CROSS_COMPILE = "aarch64-linux-gnu-"
ARTIFACT_FILES = ("Image", "config", "System.map", "ffprobe.ko", "ffsplat.ko")
# Where each artifact comes from in a build directory, and the most it may weigh.
ARTIFACT_SOURCES = {"Image": ("arch/arm64/boot/Image", 256), "config": (".config", 4),
                    "System.map": ("System.map", 64), "ffprobe.ko": ("ffprobe/ffprobe.ko", 64),
                    "ffsplat.ko": ("ffprobe/ffsplat.ko", 64)}


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


def build_seconds_default() -> float:
    """A build's wall-clock limit: a cold build takes ~8 min on 2 cores alone,
    ~25 min beside two others and their guests."""
    return float(os.environ.get("FOLIOFARM_BUILD_TIMEOUT", 3 * 3600))


class Builder:
    def __init__(self, cache: Path, log: Callable[[str], None] = lambda s: None,
                 jobs: int | None = None, extra: Path | None = None,
                 seconds: float | None = None) -> None:
        self.cache = cache
        self.log = log
        self.toolchain = toolchain_id()
        self.jobs = jobs or jobs_default()
        self.extra = extra          # the -K fragment, if any
        # each make's limits (sandbox.Limits): the wall clock of one build stage
        self.limits = sandbox.Limits(seconds=seconds or build_seconds_default())
        self.copied: dict[Path, int] = {}    # the series' build directories of this run, and their size
        self.make_vars: dict[Path, list[str]] = {}   # a build directory's profiled objects (profiled.py)
        # kconfig.inputs_digest by (tree, state) of a git tree: the page sizes
        # building at once walk the same tree once, not once each
        self._inputs: dict[tuple[str, str], str] = {}
        self._inputs_lock = threading.Lock()

    def fragments(self, page: matrix.PageSize, variant: str) -> list[Path]:
        return fragments(page, variant) + ([self.extra] if self.extra else [])

    def config_key(self, page: matrix.PageSize, variant: str) -> str:
        return profiled.config_key(sha256_files(self.fragments(page, variant)), variant)

    def artifact_dir(self, source: KernelSource, page: matrix.PageSize, variant: str) -> Path | None:
        """Where the artifacts of this (tree content, config, toolchain, probe) live;
        None for a tree without git, whose content only make can judge."""
        if not source.versioned:
            return None
        config_key = self.config_key(page, variant)
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

    def base_build_dir(self, source: KernelSource, page: matrix.PageSize, variant: str) -> Path:
        """The base's build directory: keyed by where the tree is, not what it
        holds, so a change of the tree rebuilds incrementally there."""
        config_key = self.config_key(page, variant)
        tc_key = sha256_text(self.toolchain)[:8]
        return (self.cache / "build" /
                f"{source.xy}-{page.name}-{variant}-{sha256_text(str(source.tree))[:8]}-{config_key}-{tc_key}")

    def host_dir(self, bdir: Path) -> Path:
        """The host's own files of the build in ``bdir`` (untrusted.host_dir), made if need be."""
        d = untrusted.host_dir(self.cache, bdir)
        d.mkdir(parents=True, exist_ok=True)
        return d

    def build_dir(self, source: KernelSource, page: matrix.PageSize, variant: str) -> Path:
        """Where make builds this: the base's own build directory, or for a
        series (a tagged source) this run's copy of it."""
        base = self.base_build_dir(source, page, variant)
        if not source.tag:
            return base
        return self.cache / "build" / "series" / f"{base.name}-{source.tag}-{os.getpid()}"

    def is_warm(self, source: KernelSource, page: matrix.PageSize, variant: str = "default") -> bool:
        """True if building this runs at most an incremental make: its
        artifacts are there, or its (base's) build directory holds a finished build."""
        bdir = self.base_build_dir(source, page, variant)
        return self.is_cached(source, page, variant) or (
            (bdir / ".config").is_file() and (bdir / "arch/arm64/boot/Image").is_file())

    def is_cached(self, source: KernelSource, page: matrix.PageSize, variant: str = "default") -> bool:
        """True if building this would not run make."""
        art_dir = self.artifact_dir(source, page, variant)
        return art_dir is not None and self._complete(art_dir)

    def make_env(self, trusted: bool = True) -> dict[str, str]:
        """The whole environment of a make (sandbox.environment adds PATH and
        the like); an untrusted build reads ccache and never writes it."""
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
        if not trusted:
            env.update(CCACHE_READONLY="1", CCACHE_TEMPDIR="/tmp" if sandbox.enabled() else
                       str(self.cache / "ccache-tmp"))
        return env

    def make_argv(self, source: KernelSource, bdir: Path, *targets: str) -> list[str]:
        cc = f"ccache {CROSS_COMPILE}gcc" if shutil.which("ccache") else f"{CROSS_COMPILE}gcc"
        return ["make", "-C", str(source.tree), f"O={bdir}", f"-j{self.jobs}", f"CC={cc}",
                *self.make_vars.get(bdir, []), *targets]

    def sandboxed(self, source: KernelSource, bdir: Path, argv: list[str], env: dict[str, str],
                  logf: Path, what: str, cwd: Path | None = None, frags: list[Path] = ()) -> None:
        """The tree's own code (make, merge_config.sh) sees the tree and the
        fragments read-only and writes only its build directory, and ccache
        when it builds the base; with a cleared environment and the limits."""
        ccache = self.cache / "ccache"
        trusted = not source.tag
        if not trusted and not sandbox.enabled():
            (self.cache / "ccache-tmp").mkdir(parents=True, exist_ok=True)
        ccache.mkdir(parents=True, exist_ok=True)
        sandbox.run(argv, read=[source.tree, KERNEL_CONFIGS, *frags, *([] if trusted else [ccache])],
                    write=[bdir, *([ccache] if trusted else [])], cwd=cwd, env=env,
                    limits=self.limits, log=logf, what=what,
                    watch=None if trusted else untrusted.DiskWatch(bdir, self.copied.get(bdir, 0)))

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
            prune.mark_used(art_dir)
            return Artifacts(art_dir, source, page, variant, built=False)
        if art_dir is not None and art_dir.exists():
            self.log(f"artifacts {art_dir.name} are damaged or incomplete: building them again")

        bdir = self.build_dir(source, page, variant)
        check_free_space(bdir.parent, 3, f"building {source.label} {page.name}")
        if source.tag:
            self._series_copy(source, page, variant, bdir)
        with locks.build_dir(self.cache, bdir, log=self.log):
            if art_dir is not None and self._complete(art_dir):
                prune.mark_used(art_dir)
                return Artifacts(art_dir, source, page, variant, built=False)  # built while we waited
            return self._make_in(source, page, variant, frags, bdir, art_dir)

    def _series_copy(self, source: KernelSource, page: matrix.PageSize, variant: str,
                     bdir: Path) -> None:
        """This run's copy of the base's build directory for a series (made
        once per run: --each-commit's builds share it)."""
        if bdir not in self.copied:
            self.copied[bdir] = untrusted.copy_build_dir(
                self.cache, self.base_build_dir(source, page, variant), bdir, self.log)

    def close(self) -> None:
        """Remove this run's series build directories (their artifacts are kept)."""
        for d in self.copied:
            if why := untrusted.remove_copy(self.cache, d):
                self.log(f"{why} (the next series run removes it)")
        self.copied.clear()

    def _make_in(self, source: KernelSource, page: matrix.PageSize, variant: str, frags: list[Path],
                 bdir: Path, art_dir: Path | None) -> Artifacts:
        bdir.mkdir(parents=True, exist_ok=True)
        host = self.host_dir(bdir)
        logf = host / "build.log"
        logf.unlink(missing_ok=True)
        logf.write_text("")
        env = self.make_env(trusted=not source.tag)
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
        write_json(host / "build.json", meta)
        self.log(f"build {source.label} {page.name}: {reproduce}")
        t0 = time.monotonic()
        try:
            verification = self._configure(source, bdir, frags, env, logf)
            if dirs := profiled.dirs(variant):
                self.make_vars[bdir] = profiled.make_vars(source.tree, dirs, untrusted.config_text(bdir))
                meta["profiled"] = {"dirs": dirs, "objects": len(self.make_vars[bdir])}
                self.log(f"build {source.label} {page.name}: gcov profiles {len(self.make_vars[bdir])} "
                         f"objects of {', '.join(dirs)} (GCOV_PROFILE_<object>.o=y on make's command line)")
            self._make(source, bdir, env, logf, "Image", "modules")
            self._build_probe(source, bdir, env, logf)
        except OSError as exc:
            if is_enospc(exc):
                raise InfraError(f"disk full while building in {bdir}: free space and rerun; "
                                 "the incomplete build will be redone") from exc
            raise
        meta.update(state="complete", seconds=round(time.monotonic() - t0, 1),
                    absent_optional=[r.symbol for r in verification.absent_optional])
        write_json(host / "build.json", meta)

        if art_dir is None:   # unversioned tree: key the artifact by what was built
            art_dir = self.cache / "artifacts" / (f"{source.label}-{page.name}-{variant}-"
                                  f"{sha256_files([bdir / 'arch/arm64/boot/Image'])[:16]}")
        with StagingDir(art_dir) as tmp:
            # what a build made is not trusted: no link followed, regular files of a sane size
            for name, (inside, max_mb) in ARTIFACT_SOURCES.items():
                copy_regular(bdir / inside, tmp / name, max_mb << 20, what=f"the build's {inside}",
                             beneath=bdir)
            copy_regular(logf, tmp / "build.log", 256 << 20, what="the build log")
            if source.tag and (dirs := profiled.dirs(variant)):
                meta["notes"] = profiled.keep_notes(bdir, self.base_build_dir(source, page, variant),
                                                    dirs, tmp / profiled.NOTES)
            meta["sha256"] = {f: file_digest(tmp / f) for f in ARTIFACT_FILES}
            write_json(tmp / "build.json", meta)
        return Artifacts(art_dir, source, page, variant, built=True)

    def _configure(self, source: KernelSource, bdir: Path, frags: list[Path],
                   env: dict[str, str], logf: Path) -> kconfig.Verification:
        reqs = [r for f in frags for r in kconfig.parse_fragment(f)]
        old = untrusted.config_text(bdir) if (bdir / ".config").exists() else None
        # The same fragments over the same Kconfig files give the same .config:
        # then the three configuration steps (seconds each) are skipped.
        stamp = self.host_dir(bdir) / "kconfig.key"
        key = sha256_text(sha256_files(frags), self.config_inputs(source))
        if old is not None and stamp.is_file() and stamp.read_text() == f"{key} {sha256_text(old)}\n":
            self.log(f"{bdir.name}: configuration inputs unchanged, .config kept")
            return kconfig.verify(old, reqs, source.tree)
        stamp.unlink(missing_ok=True)
        # configured in a directory the host makes anew each time (never one
        # the build directory holds, which an earlier build could have made a link)
        with untrusted.scratch_dir(self.cache, f"kconfig-{bdir.name}") as tmp:
            self._make(source, tmp, env, logf, "allnoconfig", jobs_=1)
            # merge_config.sh only merges (-m); olddefconfig then resolves dependencies.
            try:
                self.sandboxed(source, tmp, [str(source.tree / "scripts/kconfig/merge_config.sh"),
                                             "-m", "-O", str(tmp), str(tmp / ".config"),
                                             *map(str, frags)],
                               env, logf, "merge_config.sh", cwd=tmp, frags=frags)
            except TimedOut as exc:
                raise BuildError(f"{source.label}: {exc}") from None
            self._make(source, tmp, env, logf, "olddefconfig", jobs_=1)
            new = untrusted.config_text(tmp)
        verification = kconfig.verify(new, reqs, source.tree)
        if new != old:  # leave .config untouched when equal: make then rebuilds nothing
            write_beneath(bdir, ".config", new.encode(), what="the build's .config")
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
            self.sandboxed(source, bdir, argv, env, logf, f"make {' '.join(targets)}")
        except TimedOut as exc:
            raise BuildError(f"{source.label}: the build was stopped at a limit (a build stage "
                             f"may take {self.limits.seconds:g} s: --build-timeout or "
                             f"FOLIOFARM_BUILD_TIMEOUT; the sandbox's totals: "
                             f"FOLIOFARM_SANDBOX_MEMORY_MB, FOLIOFARM_SANDBOX_TASKS)\n{exc}") from None
        except InfraError as exc:
            msg = f"{source.label}: make {' '.join(targets)} failed in {bdir}\n"
            enospc = bool(log_lines(logf, lambda ln: "No space left on device" in ln, 1))
            if source.tag and (full := seriesdisk.filled(bdir, enospc)):
                msg = f"{source.label}: the series' build was stopped at {full}\n" + msg
            stopped = log_lines(logf, sandbox.is_stopped) if sandbox.enabled() else []
            if stopped:
                msg += ("the build tried to write outside its build directory or to reach the "
                        "network, and the sandbox stopped it (it sees the tree and /usr read-only, "
                        "writes only its build directory, has no network):\n"
                        + "\n".join(f"  {ln}" for ln in stopped) + "\n")
            raise BuildError(msg + compiler_errors(logf, strip=f"{source.tree}/")
                             + f"\nfull log: {logf}") from exc

    def _build_probe(self, source: KernelSource, bdir: Path, env: dict[str, str],
                     logf: Path) -> None:
        modules.build_probe(bdir, self.host_dir(bdir), self.toolchain, self.log,
                            lambda *targets: self._make(source, bdir, env, logf, *targets))

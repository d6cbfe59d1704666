"""Applying a patch series to a cached kernel tree with `git am`, on a work
branch, always restoring the tree to exactly what it was."""

from __future__ import annotations

import email
import re
import subprocess
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Iterator

from foliofarm.errors import InfraError, UsageError
from foliofarm.source import GIT_IDENTITY, KernelSource

WORK_BRANCH = "foliofarm-series"


def patch_files(path: Path) -> list[Path]:
    """The patches of a series directory: in the order of a quilt `series` file
    if there is one, else by name."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise UsageError(f"series {path} is neither a patch file nor a directory")
    quilt = path / "series"
    if quilt.is_file():
        names = [ln.split("#", 1)[0].split()[0] for ln in quilt.read_text().splitlines()
                 if ln.split("#", 1)[0].strip()]
        missing = [n for n in names if not (path / n).is_file()]
        if missing:
            raise UsageError(f"{quilt} lists patches that are not there: {', '.join(missing)}")
        return [path / n for n in names]
    patches = sorted(p for p in path.iterdir() if p.suffix in (".patch", ".diff", ".mbox"))
    if not patches:
        raise UsageError(f"series directory {path} has no .patch files")
    return patches


def _git(tree: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(["git", "-C", str(tree), *args], capture_output=True, text=True,
                          env={**GIT_IDENTITY, "PATH": "/usr/bin:/bin", "HOME": "/nonexistent",
                               "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C"}, check=False)
    if check and proc.returncode:
        raise InfraError(f"git {' '.join(args)} in {tree} failed: {proc.stderr.strip()}")
    return proc


def _subject(patch: Path) -> str:
    """The patch's subject without its [PATCH n/m] prefix."""
    msg = email.message_from_string(patch.read_text(errors="replace"))
    subject = re.sub(r"\s+", " ", str(msg.get("Subject", ""))).strip()
    return re.sub(r"^\[[^\]]*\]\s*", "", subject) or patch.name


@contextmanager
def applied(src: KernelSource, series: Path, tag: str = "series") -> Iterator[KernelSource]:
    """Yield ``src`` with ``series`` applied; on exit the tree is back on its
    original commit with no trace of the work branch, whatever happened."""
    tree = src.tree
    if not (tree / ".git").exists():
        raise UsageError(f"{tree} is not a git tree: a series needs one to apply with git am")
    if _git(tree, "status", "--porcelain", "--untracked-files=no").stdout.strip():
        raise UsageError(f"{tree} has uncommitted changes; commit or stash them before applying a series")
    patches = patch_files(series)
    head = _git(tree, "rev-parse", "HEAD").stdout.strip()
    branch = _git(tree, "symbolic-ref", "--short", "-q", "HEAD", check=False).stdout.strip()
    _git(tree, "checkout", "-q", "-B", WORK_BRANCH, head)
    try:
        for n, patch in enumerate(patches, 1):
            am = _git(tree, "am", "-q", "--keep-cr", str(patch.resolve()), check=False)
            if am.returncode:
                _git(tree, "am", "--abort", check=False)
                raise UsageError(f"patch {n}/{len(patches)} {_subject(patch)!r} ({patch.name}) "
                                 f"does not apply to {src.origin}:\n{(am.stdout + am.stderr).strip()}")
        yield replace(src, spec=f"{src.spec}+{tag}", origin=f"{src.origin} + {series}", tag=tag)
    finally:
        _git(tree, "am", "--abort", check=False)
        _git(tree, "checkout", "-q", "-f", branch or head)
        _git(tree, "branch", "-q", "-D", WORK_BRANCH, check=False)

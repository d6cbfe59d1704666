"""Applying a series with `git am` on a work branch: whatever happens, the
tree is back on its original commit with no trace of the work branch on the
way out; a killed run's leftovers are undone first (recover). A patch that
does not apply is refused naming it, git's reasons and what to do."""

from __future__ import annotations

import re
import subprocess
import sys
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterator

from foliofarm import locks
from foliofarm.errors import UsageError
from foliofarm.intake import git
from foliofarm.intake.series import Patch, Series
from foliofarm.intake.source import WORK_BRANCH, KernelSource
from foliofarm.util import tmp_dir


def tree_snapshot(tree: Path) -> tuple[str, str, str]:
    """HEAD, branches and status: what "left exactly as it was" compares."""
    return (git.git(tree, "rev-parse", "HEAD").stdout, git.git(tree, "branch", "--list").stdout,
            git.git(tree, "--no-optional-locks", "status", "--porcelain", "--untracked-files=all").stdout)


def recover(tree: Path, owned: bool = False) -> None:
    """Undo what a killed run left: a `git am` in progress, the work branch
    checked out, and in a tree of the farm's own (``owned``: in its cache, held
    exclusively) the index lock of a git killed with it."""
    lock = tree / ".git" / "index.lock"
    if owned and lock.is_file() and not lock.is_symlink():
        print(f"foliofarm: {lock} left by a git killed with an earlier run: removed", file=sys.stderr)
        lock.unlink()
    git.git(tree, "am", "--abort", check=False)     # a no-op when none is in progress
    branch = git.git(tree, "symbolic-ref", "--short", "-q", "HEAD", check=False).stdout.strip()
    if branch == WORK_BRANCH:
        if git.git(tree, "rev-parse", "--verify", "-q", "refs/heads/base", check=False).returncode:
            raise UsageError(f"{tree} is still on {WORK_BRANCH} from an interrupted run: check out "
                             f"your branch there and delete {WORK_BRANCH}")
        git.git(tree, "checkout", "-q", "-f", "base")
    git.git(tree, "branch", "-q", "-D", WORK_BRANCH, check=False)


def base_commit_note(ser: Series, src: KernelSource) -> str | None:
    """Say so when the series names a base-commit other than the base under test."""
    if not ser.base_commit:
        return None
    head = git.git(src.tree, "rev-parse", "HEAD").stdout.strip() if src.versioned else ""
    if head.startswith(ser.base_commit) or ser.base_commit.startswith(head[:12] or "-"):
        return None
    known = src.versioned and git.git(src.tree, "cat-file", "-e", f"{ser.base_commit}^{{commit}}",
                                   check=False).returncode == 0
    return (f"the series says base-commit: {ser.base_commit}, but the base under test is {src.origin}"
            f"{f' at {head[:12]}' if head else ''}"
            + (" (that commit is in the tree)" if known else " (that commit is not in this tree)"))


def _missing_files(tree: Path, patch: Patch) -> list[str]:
    return [f for f in patch.files if not (tree / f).exists()]


@dataclass
class Applied:
    source: KernelSource     # the patched tree, labelled X.Y+<tag>
    commits: list[str]       # one commit per patch, in order


@contextmanager
def applied(src: KernelSource, ser: Series, tag: str = "series", cache: Path | None = None
            ) -> Iterator[Applied]:
    """Yield ``src`` with ``ser`` applied; on exit the tree is back on its original
    commit with no trace of the work branch, whatever happened. With ``cache``,
    the tree is held exclusively meanwhile (locks.tree): no other run builds it
    as its base, or applies its own series, until this one is done with it."""
    if cache is None:
        yield from _applied(src, ser, tag)
        return
    with locks.tree(cache, src.tree, exclusive=True, log=lambda m: print(m, file=sys.stderr)):
        yield from _applied(src, ser, tag, owned=src.tree.resolve().is_relative_to(cache.resolve()))


def _applied(src: KernelSource, ser: Series, tag: str, owned: bool = False) -> Iterator[Applied]:
    tree = src.tree
    if not (tree / ".git").exists():
        raise UsageError(f"{tree} is not a git tree: a series needs one to apply with git am")
    recover(tree, owned)
    borrowed = tree / git.git(tree, "rev-parse", "--git-path", "objects/info/alternates").stdout.strip()
    if borrowed.is_file() and borrowed.read_text(errors="replace").strip():
        raise UsageError(
            f"{tree} borrows its git objects from {borrowed.read_text(errors='replace').split()[0]} "
            "(a clone made with --shared or --reference): git am runs in a sandbox that sees the tree "
            "alone and cannot read them; clone it without --shared, or run `git repack -a -d` in it "
            f"and remove {borrowed}")
    if git.git(tree, "--no-optional-locks", "status", "--porcelain", "--untracked-files=no").stdout.strip():
        raise UsageError(f"{tree} has uncommitted changes; commit or stash them before applying a series")
    head = git.git(tree, "rev-parse", "HEAD").stdout.strip()
    branch = git.git(tree, "symbolic-ref", "--short", "-q", "HEAD", check=False).stdout.strip()
    git.git(tree, "checkout", "-q", "-B", WORK_BRANCH, head)
    commits: list[str] = []
    try:
        with tmp_dir("series") as tmp:
            for p in ser.patches:
                f = Path(tmp) / f"{p.number:04d}.mbox"
                f.write_bytes(p.mbox())
                am = git.git(tree, "am", "-q", str(f), check=False,
                          sandboxed=[Path(tmp)])
                if am.returncode:
                    git.git(tree, "am", "--abort", check=False)
                    raise UsageError(_apply_error(src, ser, p, am, tree))
                commits.append(git.git(tree, "rev-parse", "HEAD").stdout.strip())
        yield Applied(replace(src, spec=f"{src.spec}+{tag}", origin=f"{src.origin} + {ser.spec}",
                              tag=tag), commits)
    finally:
        git.git(tree, "am", "--abort", check=False)
        git.git(tree, "checkout", "-q", "-f", branch or head)
        git.git(tree, "branch", "-q", "-D", WORK_BRANCH, check=False)


def checkout(src: KernelSource, commit: str) -> None:
    """Move the work branch to one commit of the applied series (for --each-commit)."""
    git.git(src.tree, "checkout", "-q", "-f", "-B", WORK_BRANCH, commit)


def _apply_error(src: KernelSource, ser: Series, p: Patch, am: subprocess.CompletedProcess[str],
                 tree: Path) -> str:
    # git's own reasons, without its advice on resuming an am we have already aborted
    said = [ln for ln in (am.stdout + am.stderr).splitlines()
            if ln.strip() and not re.match(r"(hint:|Patch failed at|When you have resolved|If you prefer"
                                           r"|To restore the original)", ln)]
    msg = [f"patch {p.number}/{len(ser.patches)} {p.subject!r} ({p.name}) does not apply to {src.origin}:",
           *("  " + ln for ln in said)]
    missing = _missing_files(tree, p)
    if missing:
        msg.append(f"it modifies files this tree does not have ({', '.join(missing[:5])}): is the series "
                   "for a different tree? Choose the base it was written for with --kernel")
    else:
        msg.append("rebase the series onto the base under test, or choose its base with --kernel")
    if note := base_commit_note(ser, src):
        msg.append(note)
    return "\n".join(msg)

"""The base a series was written for, in a followed kernel tree.

A followed tree is `git:WHERE#BRANCH,BRANCH,...`: a local repository or a URL
git can fetch (git://, http(s)://, a path), and its branches in the order to
try (for linux-mm: mm-new, mm-unstable, mm-stable, then Linus' master). It is
cloned once into the cache and fetched again each time it is followed; its
branches are kept as refs/remotes/origin/<branch>.

A series' base is decided as a careful bot decides it:
1. its `base-commit:` (the cover's, or patch 1's), when the tree has that commit;
2. else a branch its subject names (`[PATCH mm-unstable v2 1/3]`), when that
   branch is followed and the series applies to its head;
3. else each followed branch's head in turn: the first the series applies to
   (`git apply --cached` on a scratch index, no checkout: then `--3way`).
Every attempt is recorded with git's reason, so that a series that applies
nowhere says where it was tried and why not."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from foliofarm.errors import InfraError, UsageError
from foliofarm.intake import git, mail
from foliofarm.util import sha256_text, tmp_dir

PREFIX = "git:"
BRANCH = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/+-]*$")


@dataclass(frozen=True)
class Followed:
    where: str                    # a path or a URL
    branches: tuple[str, ...]
    commit: str = ""              # `...#BRANCHES@COMMIT` (--base): the base, decided

    @classmethod
    def parse(cls, spec: str) -> "Followed":
        """`git:WHERE#b1,b2[@COMMIT]` (UsageError saying how to write it otherwise)."""
        if not spec.startswith(PREFIX) or "#" not in spec:
            raise UsageError(f"{spec!r}: a followed tree is git:WHERE#BRANCH,BRANCH (a path or a "
                             "URL, and its branches in the order to try)")
        where, _, names = spec[len(PREFIX):].rpartition("#")
        names, _, commit = names.partition("@")
        if commit and not re.fullmatch(r"[0-9a-fA-F]{7,40}", commit):
            raise UsageError(f"{spec!r}: {commit!r} after @ is not a commit id (--base COMMIT)")
        branches = tuple(b.strip() for b in names.split(",") if b.strip())
        bad = [b for b in branches if not BRANCH.match(b) or ".." in b]
        if not where or not branches or bad:
            raise UsageError(f"{spec!r}: give the tree and at least one branch name"
                             + (f" ({bad[0]!r} is not one)" if bad else ""))
        return cls(where, branches, commit.lower())

    def clone_dir(self, cache: Path) -> Path:
        slug = re.sub(r"[^A-Za-z0-9]+", "-", self.where).strip("-")[-40:] or "tree"
        return cache / "follow" / f"{slug}-{sha256_text(self.where)[:8]}"


# Words of a subject's [PATCH ...] prefix that say nothing of the tree it is for.
NOT_A_TAG = re.compile(r"^(patch|rfc|resend|v\d+|\d+/\d+|)$", re.I)


def tags(subject: str) -> list[str]:
    """The tree or branch tags of a subject's prefix, lower case:
    "[PATCH mm-unstable v2 1/3]" -> ["mm-unstable"], "[PATCH AUTOSEL 6.12 01/20]"
    -> ["autosel", "6.12"], "[PATCH 6.1.y,6.6.y]" -> ["6.1.y", "6.6.y"]."""
    m = mail.PREFIX.match(subject or "")
    words = re.split(r"[\s,\[\]]+", m.group(0)) if m else []
    return [w.lower() for w in words if not NOT_A_TAG.match(w)]


def is_followed(spec: str) -> bool:
    return spec.startswith(PREFIX)


def fetch(cache: Path, f: Followed, log: Callable[[str], None] = lambda s: None) -> Path:
    """The followed tree's clone in the cache, its branches fetched now; its
    work tree at the first branch (a tree the farm's --kernel PATH@REF takes)."""
    d = f.clone_dir(cache)
    where = f.where if "://" in f.where else str(Path(f.where).expanduser().resolve())
    if not (d / ".git").exists():
        d.parent.mkdir(parents=True, exist_ok=True)
        git.git(None, "clone", "-q", "--no-checkout", "--no-tags", where, str(d),
                what="cloning the followed tree")
    refspecs = [f"+refs/heads/{b}:refs/remotes/origin/{b}" for b in f.branches]
    p = git.git(d, "fetch", "-q", "--prune", "--no-tags", "origin", *refspecs, check=False)
    if p.returncode:
        raise InfraError(f"fetching {', '.join(f.branches)} of {f.where}: {p.stderr.strip()[-500:]}")
    git.git(d, "checkout", "-q", "-f", "--detach", f"refs/remotes/origin/{f.branches[0]}")
    log(f"followed tree {f.where}: " + ", ".join(
        f"{b} {head(d, b)[:12]}" for b in f.branches))
    return d


def head(tree: Path, branch: str) -> str:
    return git.git(tree, "rev-parse", f"refs/remotes/origin/{branch}").stdout.strip()


@dataclass
class Choice:
    """Where a series goes: ``commit`` (None: it applies nowhere), the branch
    it is on ("" for a base-commit), why, and every attempt."""
    commit: str | None
    branch: str = ""
    why: str = ""
    attempts: list[str] = field(default_factory=list)

    def describe(self) -> str:
        if self.commit is None:
            return "applies to no followed branch: " + "; ".join(self.attempts)
        on = f"{self.branch} at {self.commit[:12]}" if self.branch else self.commit[:12]
        return f"applied to {on}, chosen because {self.why}"


def choose(tree: Path, branches: tuple[str, ...], patches: list[bytes], base_commit: str | None,
           tags: list[str]) -> Choice:
    """The base of a series (its patches as mail, in order) in a fetched tree."""
    attempts: list[str] = []
    if base_commit:
        full = git.git(tree, "rev-parse", "--verify", "-q", f"{base_commit}^{{commit}}", check=False)
        if full.returncode == 0:
            return Choice(full.stdout.strip(), "", f"the series says base-commit: {base_commit}",
                          attempts)
        attempts.append(f"base-commit {base_commit} is not in the tree")
    named = [b for b in branches if b.lower() in tags]
    for b in named + [b for b in branches if b not in named]:
        commit = head(tree, b)
        why = applies(tree, commit, patches)
        if not why:
            because = (f"the subject names {b}" if b in named else
                       f"{b} is the first followed branch it applies to"
                       + (f" (tried before it: {', '.join(branches[:branches.index(b)])})"
                          if branches.index(b) else ""))
            return Choice(commit, b, because, attempts)
        attempts.append(f"{b} at {commit[:12]}: {why}")
    return Choice(None, "", "", attempts)


def applies(tree: Path, commit: str, patches: list[bytes]) -> str:
    """"" if every patch applies in turn to ``commit`` (plainly, else with
    --3way), else git's reason for the first that does not. No checkout: the
    patches are applied to a scratch index."""
    with tmp_dir("apply-check") as tmp:
        env = {"GIT_INDEX_FILE": os.path.join(tmp, "index")}
        git.git(tree, "read-tree", commit, extra=env)
        for k, raw in enumerate(patches, 1):
            f = Path(tmp) / f"{k:04d}.patch"
            f.write_bytes(raw)
            plain = git.git(tree, "apply", "--cached", str(f), check=False, extra=env)
            if plain.returncode == 0:
                continue
            three = git.git(tree, "apply", "--cached", "--3way", str(f), check=False, extra=env)
            if three.returncode:
                said = [ln for ln in plain.stderr.splitlines() if ln.startswith("error:")]
                return f"patch {k} does not apply ({(said or ['git apply failed'])[0][7:].strip()})"
    return ""

"""Kernel sources: ``debian:X.Y`` (Debian's linux-source-X.Y, unpacked once into
the cache and made a one-commit git repository) or a local kernel tree."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from foliofarm.bounded import remove_tree
from foliofarm import locks, matrix
from foliofarm.intake import bases, git
from foliofarm.intake.apt import PrivateApt
from foliofarm.errors import InfraError, UsageError
from foliofarm.util import StagingDir, check_free_space, clean_stale_staging, run, say, sha256_text

# The branch a series is applied on (foliofarm/intake/series.py).
WORK_BRANCH = "foliofarm-series"

GIT_IDENTITY = git.IDENTITY     # the farm's commits' author, committer and date


@dataclass(frozen=True)
class KernelSource:
    spec: str          # what the user asked for: "debian:7.3" or a path
    tree: Path         # the kernel tree
    version: str       # "7.3.4" from the Makefile
    origin: str        # "linux-source-7.3 7.3.4-1~bpo13+1" or the path
    tag: str = ""      # "series" when a series is applied
    ref: str = ""      # PATH@REF: the commit to build, checked out in a worktree (checked_out)

    @property
    def xy(self) -> str:
        """"X.Y" of the kernel version: what expectations are keyed by."""
        return ".".join(self.version.split(".")[:2])

    @property
    def label(self) -> str:
        """Kernel label used in cell ids: "7.3", or "7.3+series"."""
        return self.xy + (f"+{self.tag}" if self.tag else "")

    def state(self) -> str:
        """Identity of the tree's content: HEAD commit plus any uncommitted change.
        Artifacts are keyed by it, so a changed tree is never mistaken for a built one.
        Within ``states_kept()`` it is worked out once per HEAD and index."""
        if (self.tree / ".git").exists():
            head, index = git.out(self.tree, "rev-parse", "HEAD", "--git-path", "index").split("\n")[:2]
            key = None
            if _kept.depth:
                try:
                    st = (self.tree / index).stat()
                    key = (str(self.tree), head, st.st_mtime_ns, st.st_size)
                except OSError:
                    pass
                with _kept.lock:
                    if key is not None and key in _kept.states:
                        return _kept.states[key]
            dirty = git.out(self.tree, "--no-optional-locks", "status", "--porcelain", "--untracked-files=no")
            if dirty:
                dirty += git.out(self.tree, "diff", "HEAD")
            state = head + ("-" + sha256_text(dirty)[:12] if dirty else "")
            if key is not None:
                with _kept.lock:
                    _kept.states[key] = state
            return state
        # An unpacked tree without git: only make can tell what changed.
        return "unversioned-" + sha256_text(str(self.tree))[:12]

    @property
    def versioned(self) -> bool:
        return (self.tree / ".git").exists()


class _Kept:
    """The trees' states worked out while ``states_kept()`` is open."""
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.depth = 0
        self.states: dict[tuple[str, str, int, int], str] = {}


_kept = _Kept()


@contextmanager
def states_kept() -> Iterator[None]:
    """While a run holds its trees (nothing but the farm changes them: a
    series is applied with git, which moves HEAD and rewrites the index), a
    tree's state is worked out once per HEAD and index, not by a `git status`
    over its 80,000 files at each of the twenty look-ups before a series'
    first build (0.1 s each)."""
    with _kept.lock:
        _kept.depth += 1
    try:
        yield
    finally:
        with _kept.lock:
            _kept.depth -= 1
            if not _kept.depth:
                _kept.states.clear()


def is_dirty(tree: Path) -> bool:
    return bool(git.out(tree, "--no-optional-locks", "status", "--porcelain", "--untracked-files=no").strip())


def makefile_version(tree: Path, ref: str = "") -> str:
    """X.Y.Z from the tree's top Makefile (at ``ref``, if given)."""
    if ref:
        text = git.out(tree, "show", f"{ref}:Makefile")[:2000]
    else:
        text = (tree / "Makefile").read_text(errors="replace")[:2000]
    parts = {}
    for key in ("VERSION", "PATCHLEVEL", "SUBLEVEL"):
        m = re.search(rf"^{key}\s*=\s*(\d*)", text, re.M)
        parts[key] = m.group(1) if m and m.group(1) else "0"
    return f"{parts['VERSION']}.{parts['PATCHLEVEL']}.{parts['SUBLEVEL']}"


def valid_specs() -> list[str]:
    return [f"debian:{v}" for v in matrix.debian_kernels()] + ["PATH (a kernel git tree or unpacked source)"]


def split_spec(spec: str) -> tuple[Path, str]:
    """PATH or PATH@REF -> (path, ref or ""). A path that exists with an @ in
    its name is a path."""
    path = Path(spec).expanduser()
    if path.exists() or "@" not in spec:
        return path, ""
    where, _, ref = spec.rpartition("@")
    return Path(where).expanduser(), ref


def validate_spec(spec: str) -> None:
    """Raise UsageError for a --kernel value that names nothing we can build."""
    if bases.is_followed(spec):
        bases.Followed.parse(spec)
        return
    if spec.startswith("debian:"):
        if spec.split(":", 1)[1] not in matrix.debian_kernels():
            raise UsageError(f"unknown kernel {spec!r}; valid: {', '.join(valid_specs())}")
        return
    path, ref = split_spec(spec)
    if not path.exists():
        raise UsageError(f"unknown kernel {spec!r}: not a path; valid: {', '.join(valid_specs())}, "
                         "or PATH@REF (a commit of a kernel git tree)")
    if not (path / "Makefile").is_file() or not (path / "arch" / "arm64").is_dir():
        raise UsageError(f"{path} is not a kernel tree (no Makefile or arch/arm64)")
    if ref:
        if not (path / ".git").exists():
            raise UsageError(f"{spec}: {path} is not a git tree, so it has no {ref!r} to build")
        if git.git(path, "rev-parse", "--verify", "-q", f"{ref}^{{commit}}", check=False,
                   environment="user").returncode:
            raise UsageError(f"{spec}: {ref!r} does not resolve to a commit in {path}")


def resolve(spec: str, cache: Path) -> KernelSource:
    """Turn a --kernel value into a ready source tree, fetching it if needed.
    PATH@REF names the tree and the commit; checked_out() gives the worktree
    where that commit is built."""
    validate_spec(spec)
    if spec.startswith("debian:"):
        return _debian(spec.split(":", 1)[1], cache)
    if bases.is_followed(spec):
        return followed(spec, cache)
    path, ref = split_spec(spec)
    path = path.resolve()
    return KernelSource(spec=spec, tree=path, version=makefile_version(path, ref),
                        origin=f"{path} at {ref}" if ref else str(path), ref=ref)


def followed(spec: str, cache: Path) -> KernelSource:
    """git:WHERE#BRANCHES[@COMMIT]: the followed tree fetched now, at COMMIT or
    the first branch's head (a series run decides its own base: plan.py)."""
    f = bases.Followed.parse(spec)
    clone = bases.fetch(cache, f)
    ref = f.commit or bases.head(clone, f.branches[0])
    full = git.git(clone, "rev-parse", "--verify", "-q", f"{ref}^{{commit}}", check=False)
    if full.returncode:
        raise UsageError(f"{spec}: {ref} is not a commit of {f.where} ({', '.join(f.branches)})")
    ref = full.stdout.strip()
    on = "" if f.commit else f" ({f.branches[0]})"
    return KernelSource(spec=spec, tree=clone, version=makefile_version(clone, ref),
                        origin=f"{f.where} at {ref[:12]}{on}", ref=ref)


@contextmanager
def checked_out(src: KernelSource, cache: Path, log=None) -> Iterator[KernelSource]:
    """The tree to build ``src`` from: itself, or for PATH@REF a worktree of
    PATH in the cache at REF, held (exclusive) while the caller builds and
    boots it, so that no other run checks out something else there meanwhile."""
    if not src.ref:
        yield src
        return
    with locks.tree(cache, worktree_dir(src, cache), exclusive=True, log=log):
        yield worktree(src, cache, src.ref)


def _debian(ver: str, cache: Path) -> KernelSource:
    package = f"linux-source-{ver}"
    src_root = cache / "src"
    # One run fetches and unpacks; another run that wants it meanwhile waits.
    with locks.hold(locks.lock_path(cache, "src", package), f"the {package} download", True):
        clean_stale_staging(src_root)
        # Reuse an unpacked tree without asking the network: a warm run is offline.
        ready = sorted(src_root.glob(f"{package}_*/.foliofarm-ready"))
        if ready:
            tree_dir = ready[-1].parent
            deb_version = tree_dir.name.split("_", 1)[1]
        else:
            suite = matrix.debian_kernels()[ver]["suite"]
            apt = PrivateApt(cache / "apt", suite)
            deb = apt.download(package, cache / "debs")
            deb_version = deb.name.split("_")[1].replace("%3a", ":")
            tree_dir = src_root / f"{package}_{deb_version}"
            check_free_space(src_root, 4, f"unpacking {package}")
            _unpack(deb, package, tree_dir)
    tree = tree_dir / "linux"
    # Looking needs the tree held only as a build holds it: a run building its
    # other page sizes does not keep this one waiting. Putting it back needs it alone.
    with locks.tree(cache, tree, exclusive=False, log=say):
        clean = at_base(tree)
    if not clean:
        with locks.tree(cache, tree, exclusive=True, log=say):
            restore_base(tree)
    return KernelSource(spec=f"debian:{ver}", tree=tree, version=makefile_version(tree),
                        origin=f"{package} {deb_version}")


def at_base(tree: Path) -> bool:
    """The tree is on its `base` branch at the base commit, clean, with no
    `git am` or bisect under way."""
    head = git.out(tree, "rev-parse", "HEAD").strip()
    base = git.out(tree, "rev-parse", "refs/heads/base").strip()
    am = (tree / ".git" / "rebase-apply").exists()
    bisecting = (tree / ".git" / "BISECT_LOG").exists()
    on_base = git.git(tree, "symbolic-ref", "-q", "--short", "HEAD", check=False,
                      environment="user").stdout.strip() == "base"
    dirty = git.out(tree, "--no-optional-locks", "status", "--porcelain", "--untracked-files=no").strip()
    return head == base and on_base and not am and not bisecting and not dirty


def restore_base(tree: Path) -> bool:
    """An unpacked Debian tree is the farm's own and is built as shipped: its
    `base` commit. A run killed while a series was applied leaves it on the work
    branch or in the middle of `git am`; put it back, so that the series' code is
    never built and judged as the base. True if something had to be undone."""
    if at_base(tree):
        return False
    head = git.out(tree, "rev-parse", "HEAD").strip()
    dirty = git.out(tree, "--no-optional-locks", "status", "--porcelain", "--untracked-files=no").strip()
    git.git(tree, "am", "--abort", check=False, environment="user")
    git.git(tree, "bisect", "reset", check=False, environment="user")
    git.out(tree, "checkout", "-q", "-f", "base")
    git.git(tree, "branch", "-q", "-D", WORK_BRANCH, check=False, environment="user")
    print(f"foliofarm: {tree} was left at {head[:12]}{' (dirty)' if dirty else ''} by an interrupted "
          "run: restored to its base commit", file=sys.stderr)
    return True


def _unpack(deb: Path, package: str, final: Path) -> None:
    """Unpack the source tarball inside ``deb`` into ``final/linux`` and commit it."""
    with StagingDir(final) as tmp:
        inner = f"./usr/src/{package}.tar.xz"
        # dpkg-deb streams the data tarball; tar picks the kernel tarball out of it.
        with subprocess.Popen(["dpkg-deb", "--fsys-tarfile", str(deb)],
                              stdout=subprocess.PIPE) as dpkg:
            tar = subprocess.run(["tar", "-x", "-C", str(tmp), inner], stdin=dpkg.stdout,
                                 capture_output=True, check=False)
        if dpkg.returncode or tar.returncode:
            raise InfraError(f"cannot extract {inner} from {deb}: {tar.stderr.decode()[-500:]}")
        tarball = tmp / inner
        run(["tar", "-xJf", str(tarball), "-C", str(tmp)], what=f"unpack {tarball.name}")
        tarball.unlink()
        remove_tree(tmp / "usr")
        top = [p for p in tmp.iterdir() if p.is_dir()]
        if len(top) != 1:
            raise InfraError(f"{deb.name}: expected one top directory, found {top}")
        top[0].rename(tmp / "linux")
        tree = tmp / "linux"
        git.git(tree, "init", "-q", "-b", "base")
        git.git(tree, "add", "-A", "-f")
        git.git(tree, "commit", "-q", "--no-verify", "-m",
                f"{package} {final.name.split('_', 1)[1]} as shipped by Debian")
        (tmp / ".foliofarm-ready").write_text(package + "\n")


def worktree_dir(src: KernelSource, cache: Path) -> Path:
    return cache / "worktrees" / f"{src.tree.name}-{sha256_text(str(src.tree))[:8]}"


def _worktree_of(wt: Path, tree: Path) -> bool:
    """Whether ``wt`` is a live worktree of the repository at ``tree``: its
    .git file names a git directory that is there, inside ``tree``'s."""
    dotgit = wt / ".git"
    if dotgit.is_symlink() or not dotgit.is_file():
        return False
    text = dotgit.read_text(errors="replace").strip()
    if not text.startswith("gitdir:"):
        return False
    gitdir = Path(text.split(":", 1)[1].strip())
    common = Path(git.out(tree, "rev-parse", "--path-format=absolute", "--git-common-dir").strip())
    return gitdir.is_dir() and gitdir.resolve().parent.parent == common.resolve()


def worktree(src: KernelSource, cache: Path, rev: str) -> KernelSource:
    """A git worktree of a local kernel repository, kept in the cache and detached
    at ``rev``: a series is applied there, never in the developer's own checkout.
    Its place is fixed per repository, so its build directory stays warm; a run
    holds it (locks.tree, exclusive) from this checkout to its last build."""
    wt = worktree_dir(src, cache)
    commit = git.out(src.tree, "rev-parse", "--verify", f"{rev}^{{commit}}").strip()
    if (wt / ".git").exists() and not _worktree_of(wt, src.tree):
        # the repository was made anew at that path (cloned again, moved back):
        # its old worktree's git directory is gone, and the worktree with it
        remove_tree(wt)
    if not (wt / ".git").exists():
        wt.parent.mkdir(parents=True, exist_ok=True)
        git.out(src.tree, "worktree", "prune")
        git.out(src.tree, "worktree", "add", "-q", "--detach", str(wt), commit)
    else:
        git.git(wt, "am", "--abort", check=False, environment="user")
        git.out(wt, "checkout", "-q", "-f", "--detach", commit)
    # a followed tree is named as followed, not by its clone in the cache
    named = bases.Followed.parse(src.spec).where if bases.is_followed(src.spec) else src.tree
    return KernelSource(spec=src.spec, tree=wt, version=makefile_version(wt),
                        origin=f"{named} at {rev} ({commit[:12]})" if rev not in ("HEAD", commit)
                        and not commit.startswith(rev) else f"{named} at {commit[:12]}")

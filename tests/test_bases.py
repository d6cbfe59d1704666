"""A series' base in a followed tree (foliofarm/intake/bases.py), on a small
git repository made here with the mm tree's branches: mm-stable, mm-unstable
and mm-new, each a real change on the one before. Followed over a local path
and over `git daemon` on loopback."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from foliofarm.errors import UsageError
from foliofarm.intake import bases
from foliofarm.intake.source import GIT_IDENTITY

sys.path.insert(0, str(Path(__file__).resolve().parent))
from inbox import git_daemon  # noqa: E402

BASE = "".join(f"int line{i};\n" for i in range(1, 40))


def git(tree: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(tree), *args], check=True, capture_output=True,
                          text=True, env={**GIT_IDENTITY, "PATH": "/usr/bin:/bin"}).stdout


def change(tree: Path, old: str, new: str, subject: str) -> str:
    f = tree / "mm" / "filemap.c"
    text = f.read_text()
    assert text.count(old) == 1
    f.write_text(text.replace(old, new))
    git(tree, "commit", "-q", "-am", subject)
    return git(tree, "rev-parse", "HEAD").strip()


@pytest.fixture
def mm_tree(tmp_path) -> Path:
    """master: the base; mm-stable: line5 renamed; mm-unstable: and line20;
    mm-new: and line30."""
    t = tmp_path / "mm"
    (t / "mm").mkdir(parents=True)
    (t / "mm" / "filemap.c").write_text(BASE)
    git(t, "init", "-q", "-b", "master")
    git(t, "add", "-A")
    git(t, "commit", "-q", "-m", "base")
    git(t, "checkout", "-q", "-b", "mm-stable")
    change(t, "int line5;", "int line5_stable;", "mm: stable change")
    git(t, "checkout", "-q", "-b", "mm-unstable")
    change(t, "int line20;", "int line20_unstable;", "mm: unstable change")
    git(t, "checkout", "-q", "-b", "mm-new")
    change(t, "int line30;", "int line30_new;", "mm: new change")
    git(t, "checkout", "-q", "master")
    return t


def patch_on(tree: Path, branch: str, old: str, new: str) -> bytes:
    """A format-patch mail made on ``branch`` (the tree is left as it was)."""
    git(tree, "checkout", "-q", branch)
    change(tree, old, new, f"mm: change {old.strip(';')}")
    mail = subprocess.run(["git", "-C", str(tree), "format-patch", "-1", "--stdout"],
                          capture_output=True, check=True).stdout
    git(tree, "reset", "-q", "--hard", "HEAD~1")
    git(tree, "checkout", "-q", "master")
    return mail


BRANCHES = ("mm-new", "mm-unstable", "mm-stable", "master")


def test_a_series_goes_to_the_first_branch_it_applies_to(mm_tree, tmp_path):
    f = bases.Followed.parse(f"git:{mm_tree}#{','.join(BRANCHES)}")
    clone = bases.fetch(tmp_path / "cache", f)
    # a change to what only mm-new has
    only_new = patch_on(mm_tree, "mm-new", "int line30_new;", "int line30_newer;")
    c = bases.choose(clone, f.branches, [only_new], None, [])
    assert (c.branch, c.commit) == ("mm-new", git(mm_tree, "rev-parse", "mm-new").strip())
    assert "mm-new is the first followed branch it applies to" in c.describe()
    # one that applies everywhere goes to the first branch; one to mm-stable's
    # line5 goes past mm-new and mm-unstable (which have it too) to mm-new first
    anywhere = patch_on(mm_tree, "master", "int line10;", "int line10_x;")
    assert bases.choose(clone, f.branches, [anywhere], None, []).branch == "mm-new"
    # named in the subject: that branch, though the first would take it too
    c = bases.choose(clone, f.branches, [anywhere], None, ["mm-unstable"])
    assert c.branch == "mm-unstable" and "the subject names mm-unstable" in c.why


def test_base_commit_decides_when_the_tree_has_it(mm_tree, tmp_path):
    f = bases.Followed.parse(f"git:{mm_tree}#{','.join(BRANCHES)}")
    clone = bases.fetch(tmp_path / "cache", f)
    unstable = git(mm_tree, "rev-parse", "mm-unstable").strip()
    p = patch_on(mm_tree, "mm-unstable", "int line21;", "int line21_x;")
    c = bases.choose(clone, f.branches, [p], unstable[:12], [])
    assert c.commit == unstable and c.branch == "" and "base-commit" in c.why
    c = bases.choose(clone, f.branches, [p], "1234567890ab", [])
    assert c.attempts[0] == "base-commit 1234567890ab is not in the tree" and c.branch == "mm-new"


def test_a_series_that_applies_nowhere_says_where_it_was_tried(mm_tree, tmp_path):
    f = bases.Followed.parse(f"git:{mm_tree}#{','.join(BRANCHES)}")
    clone = bases.fetch(tmp_path / "cache", f)
    nowhere = patch_on(mm_tree, "master", "int line7;", "int line7_x;").replace(
        b"-int line7;", b"-int line7_gone;")
    c = bases.choose(clone, f.branches, [nowhere], None, [])
    assert c.commit is None and len(c.attempts) == 4
    assert all("does not apply" in a for a in c.attempts)
    assert c.describe().startswith("applies to no followed branch: mm-new at ")


def test_a_moved_branch_is_fetched_again(mm_tree, tmp_path):
    f = bases.Followed.parse(f"git:{mm_tree}#mm-new")
    clone = bases.fetch(tmp_path / "cache", f)
    before = bases.head(clone, "mm-new")
    git(mm_tree, "checkout", "-q", "mm-new")
    moved = change(mm_tree, "int line31;", "int line31_new;", "mm: newer")
    git(mm_tree, "checkout", "-q", "master")
    bases.fetch(tmp_path / "cache", f)
    assert bases.head(clone, "mm-new") == moved != before


def test_followed_over_git_daemon_on_loopback(mm_tree, tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    (mm_tree / ".git" / "git-daemon-export-ok").touch()
    with git_daemon(mm_tree.parent, port) as where:
        f = bases.Followed.parse(f"git:{where}/mm/.git#mm-unstable,mm-stable")
        clone = bases.fetch(tmp_path / "cache", f)
        assert bases.head(clone, "mm-stable") == git(mm_tree, "rev-parse", "mm-stable").strip()
        assert (clone / "mm" / "filemap.c").read_text().count("_unstable") == 1   # the first branch


@pytest.mark.parametrize("spec", ["git:/x", "git:#mm-new", "/x#mm-new", "git:/x#a..b", "git:/x#,"])
def test_a_followed_tree_written_wrong_says_how(spec):
    with pytest.raises(UsageError, match="git:WHERE#BRANCH|at least one branch"):
        bases.Followed.parse(spec)

"""Applying a series with git am to a (tiny, real) git tree, and restoring it."""

import subprocess
from pathlib import Path

import pytest

from foliofarm import series
from foliofarm.errors import UsageError
from foliofarm.source import GIT_IDENTITY, KernelSource

ROOT = Path(__file__).resolve().parent.parent


def git(tree: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(tree), *args], check=True, capture_output=True,
                          text=True, env={**GIT_IDENTITY, "PATH": "/usr/bin:/bin"}).stdout


@pytest.fixture
def tree(tmp_path) -> KernelSource:
    t = tmp_path / "linux"
    (t / "mm").mkdir(parents=True)
    (t / "mm" / "filemap.c").write_text("int a;\nint b;\nint c;\n")
    git(t, "init", "-q", "-b", "base")
    git(t, "add", "-A")
    git(t, "commit", "-q", "-m", "base")
    return KernelSource(spec="debian:7.3", tree=t, version="7.3.4", origin="fake 7.3")


def make_patch(src: KernelSource, out: Path, old: str, new: str, subject: str) -> Path:
    f = src.tree / "mm" / "filemap.c"
    f.write_text(f.read_text().replace(old, new))
    git(src.tree, "commit", "-q", "-am", subject)
    out.mkdir(exist_ok=True)
    git(src.tree, "format-patch", "-q", "-1", "-o", str(out))
    git(src.tree, "reset", "-q", "--hard", "HEAD~1")
    return out


def state(src: KernelSource) -> tuple[str, str, str]:
    return (git(src.tree, "rev-parse", "HEAD"), git(src.tree, "branch", "--list"),
            git(src.tree, "status", "--porcelain"))


def test_series_applies_and_tree_is_restored(tree, tmp_path):
    d = make_patch(tree, tmp_path / "s", "int b;", "int b2;", "mm: rename b")
    before = state(tree)
    base_state = tree.state()
    with series.applied(tree, d) as patched:
        assert patched.label == "7.3+series"
        assert "int b2;" in (tree.tree / "mm" / "filemap.c").read_text()
        assert patched.state() != base_state
    assert state(tree) == before
    assert "int b;" in (tree.tree / "mm" / "filemap.c").read_text()


def test_patch_that_does_not_apply_names_it_and_leaves_tree_as_it_was(tree, tmp_path):
    d = make_patch(tree, tmp_path / "s", "int b;", "int b2;", "mm: rename b")
    (d / "0002-x.patch").write_text(
        (next(d.glob("0001-*.patch"))).read_text().replace("mm: rename b", "mm: rename b again"))
    before = state(tree)
    with pytest.raises(UsageError) as exc:
        with series.applied(tree, d):
            pass
    assert "patch 2/2 'mm: rename b again'" in str(exc.value)
    assert "does not apply" in str(exc.value)
    assert state(tree) == before


def test_dirty_tree_is_refused(tree, tmp_path):
    d = make_patch(tree, tmp_path / "s", "int b;", "int b2;", "mm: rename b")
    (tree.tree / "mm" / "filemap.c").write_text("dirty\n")
    with pytest.raises(UsageError, match="uncommitted changes"):
        with series.applied(tree, d):
            pass


def test_quilt_series_file_orders_patches(tmp_path):
    for n in ("b.patch", "a.patch"):
        (tmp_path / n).write_text("x")
    (tmp_path / "series").write_text("# order\nb.patch\na.patch -p1\n")
    assert [p.name for p in series.patch_files(tmp_path)] == ["b.patch", "a.patch"]
    (tmp_path / "series").write_text("c.patch\n")
    with pytest.raises(UsageError, match="c.patch"):
        series.patch_files(tmp_path)


def test_empty_series_directory(tmp_path):
    with pytest.raises(UsageError, match="no .patch files"):
        series.patch_files(tmp_path)


def test_example_controls_are_single_file_patches():
    """Negative controls must rebuild incrementally: one .c file each."""
    for d in (ROOT / "examples" / "series").glob("neg-*"):
        patches = series.patch_files(d)
        assert len(patches) == 1
        files = [ln for ln in patches[0].read_text().splitlines() if ln.startswith("+++ b/")]
        assert len(files) == 1 and files[0].endswith(".c"), d

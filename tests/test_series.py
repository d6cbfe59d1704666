"""Series intake (mbox, directory, git range), bad input, and applying with git am
to a tiny real git tree that must always be left exactly as it was."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from foliofarm.intake import apply, checkpatch, series, source
from foliofarm.errors import UsageError
from foliofarm.intake.source import GIT_IDENTITY, KernelSource

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"


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


def commit(src: KernelSource, old: str, new: str, subject: str) -> None:
    f = src.tree / "mm" / "filemap.c"
    f.write_text(f.read_text().replace(old, new))
    git(src.tree, "commit", "-q", "-am", subject)


def two_patch_series(src: KernelSource, out: Path, *extra: str) -> Path:
    """A two-patch series written by git format-patch into ``out``; the tree is reset."""
    commit(src, "int b;", "int b2;", "mm: rename b")
    commit(src, "int c;", "int c2;", "mm: rename c")
    out.mkdir(exist_ok=True)
    git(src.tree, "format-patch", "-q", *extra, "-2", "-o", str(out))
    git(src.tree, "reset", "-q", "--hard", "HEAD~2")
    return out


def mbox(src: KernelSource, tmp_path: Path, *extra: str) -> Path:
    d = two_patch_series(src, tmp_path / "fp", *extra)
    box = tmp_path / "series.mbox"
    box.write_bytes(b"".join(p.read_bytes() for p in sorted(d.iterdir())))
    return box


def snapshot(src: KernelSource):
    return apply.tree_snapshot(src.tree)


def test_directory_applies_in_order_and_tree_is_restored(tree, tmp_path):
    d = two_patch_series(tree, tmp_path / "s")
    ser = series.load(str(d))
    assert ser.kind == "directory"
    assert [p.subject for p in ser.patches] == ["mm: rename b", "mm: rename c"]
    assert ser.patches[0].files == ("mm/filemap.c",)
    before, base_state = snapshot(tree), tree.state()
    with apply.applied(tree, ser) as ap:
        assert ap.source.label == "7.3+series"
        assert len(ap.commits) == 2
        assert "int b2;\nint c2;" in (tree.tree / "mm" / "filemap.c").read_text()
        assert ap.source.state() != base_state
    assert snapshot(tree) == before


def test_mbox_with_cover_letter_skips_it_and_reads_base_commit(tree, tmp_path):
    base = git(tree.tree, "rev-parse", "HEAD").strip()
    box = mbox(tree, tmp_path, "--cover-letter", f"--base={base}")
    ser = series.load(str(box))
    assert ser.kind == "mbox"
    assert len(ser.patches) == 2 and ser.patches[1].number == 2
    assert ser.cover is not None          # "*** SUBJECT HERE ***" from format-patch
    assert ser.base_commit == base
    assert apply.base_commit_note(ser, tree) is None    # the same base: nothing to say
    with apply.applied(tree, ser) as ap:
        assert len(ap.commits) == 2


def test_a_threaded_series_keeps_its_message_ids_for_kcidb(tree, tmp_path):
    box = mbox(tree, tmp_path, "--cover-letter", "--thread")
    ser = series.load(str(box))
    ids = re.findall(r"^Message-ID: <([^>]+)>", box.read_text(), re.M | re.I)
    assert len(ids) == 3 and ser.message_id == ids[0]
    assert [p.message_id for p in ser.patches] == ids[1:]
    (tmp_path / "plain").mkdir()
    assert series.load(str(mbox(tree, tmp_path / "plain"))).message_id == ""


def test_base_commit_other_than_base_under_test_is_reported(tree, tmp_path):
    box = mbox(tree, tmp_path, "--cover-letter", "--base=HEAD~2")
    ser = series.load(str(box))
    other = git(tree.tree, "rev-parse", "HEAD").strip()
    commit(tree, "int a;", "int a1;", "unrelated")          # base under test moves on
    note = apply.base_commit_note(ser, tree)
    assert note and ser.base_commit in note and "fake 7.3" in note
    assert ser.base_commit == other


def test_b4_style_mbox_without_mbox_from_lines_of_git(tree, tmp_path):
    box = mbox(tree, tmp_path)
    text = box.read_text()
    b4 = "\n".join("From git@z Thu Jan  1 00:00:00 1970" if ln.startswith("From ") and ln.endswith("2001")
                   else ln for ln in text.splitlines()) + "\n"
    box.write_text(b4)
    assert len(series.load(str(box)).patches) == 2


def test_quilt_series_file_orders_patches_and_headerless_diffs_get_headers(tree, tmp_path):
    d = two_patch_series(tree, tmp_path / "s")
    q = tmp_path / "quilt"
    q.mkdir()
    for n, p in enumerate(sorted(d.iterdir())):   # headerless: only the diff
        text = p.read_text()
        (q / f"{'ba'[n]}.diff").write_text(text[text.index("diff --git"):])
    (q / "series").write_text("# order\nb.diff\na.diff -p1\n")
    ser = series.load(str(q))
    assert [p.subject for p in ser.patches] == ["b", "a"]
    with apply.applied(tree, ser) as ap:
        assert len(ap.commits) == 2
    (q / "series").write_text("c.patch\n")
    with pytest.raises(UsageError, match="c.patch"):
        series.load(str(q))


def test_git_range_in_a_local_tree(tree, tmp_path):
    base = git(tree.tree, "rev-parse", "HEAD").strip()
    commit(tree, "int b;", "int b2;", "mm: rename b")
    commit(tree, "int c;", "int c2;", "mm: rename c")
    ser = series.load("HEAD~2..HEAD", tree.tree)
    assert ser.kind == "range" and ser.base_rev == base
    assert [p.subject for p in ser.patches] == ["mm: rename b", "mm: rename c"]
    with pytest.raises(UsageError, match="does not resolve"):
        series.load("nosuch..HEAD", tree.tree)
    with pytest.raises(UsageError, match="is empty"):
        series.load("HEAD..HEAD~1", tree.tree)
    with pytest.raises(UsageError, match="needs --kernel PATH"):
        series.load("v7.3..HEAD", None)


@pytest.mark.parametrize("content,msg", [
    (b"", "is empty"),
    (b"\n\n  \n", "is empty"),
    (b"\x00\x01garbage", "not an mbox"),
    (b"From 1 Mon Sep 17 00:00:00 2001\nFrom: a <a@b>\nSubject: [PATCH] mm: words\n\nno diff here\n",
     "has no diff"),
    (b"From 1 Mon Sep 17 00:00:00 2001\nFrom: a <a@b>\nSubject: [PATCH 0/1] cover\n\nonly a cover\n",
     "holds no patch"),
])
def test_bad_mbox_is_a_clear_usage_error(tmp_path, content, msg):
    f = tmp_path / "bad.mbox"
    f.write_bytes(content)
    with pytest.raises(UsageError, match=msg):
        series.load(str(f))


def test_nonexistent_series(tmp_path):
    with pytest.raises(UsageError, match="not a file, a directory or a git range"):
        series.load(str(tmp_path / "nope.mbox"))


def test_empty_series_directory(tmp_path):
    with pytest.raises(UsageError, match="has no .patch"):
        series.load(str(tmp_path))


def test_patch_that_does_not_apply_names_it_and_leaves_tree_as_it_was(tree, tmp_path):
    d = two_patch_series(tree, tmp_path / "s")
    second = sorted(d.iterdir())[1]
    second.write_text(second.read_text().replace("-int c;", "-int zzz;"))
    ser = series.load(str(d))
    before = snapshot(tree)
    with pytest.raises(UsageError) as exc:
        with apply.applied(tree, ser):
            pass
    assert "patch 2/2 'mm: rename c'" in str(exc.value)
    assert "does not apply to fake 7.3" in str(exc.value)
    assert "patch failed" in str(exc.value)       # git's own message
    assert snapshot(tree) == before


def test_series_for_a_different_tree_says_so(tree, tmp_path):
    d = two_patch_series(tree, tmp_path / "s")
    for p in d.iterdir():
        p.write_text(p.read_text().replace("mm/filemap.c", "fs/nosuch.c"))
    before = snapshot(tree)
    with pytest.raises(UsageError, match="files this tree does not have .fs/nosuch.c.*different tree"):
        with apply.applied(tree, series.load(str(d))):
            pass
    assert snapshot(tree) == before


def test_interrupted_run_is_recovered(tree, tmp_path):
    """A killed run leaves the work branch checked out: the next run puts it back."""
    before = snapshot(tree)
    ser = series.load(str(two_patch_series(tree, tmp_path / "s")))
    git(tree.tree, "checkout", "-q", "-b", source.WORK_BRANCH)
    commit(tree, "int a;", "int a9;", "half-applied")
    with apply.applied(tree, ser):
        pass
    assert snapshot(tree) == before


def test_a_killed_git_s_index_lock_is_removed_only_in_the_farm_s_own_tree(tree, tmp_path, capsys):
    """A run killed mid-git leaves .git/index.lock: in a tree of the farm's
    cache (held exclusively) the next series run removes it and says so; in
    a tree of the user's it is left (their own git may be running there)."""
    from foliofarm.errors import FarmError
    ser = series.load(str(two_patch_series(tree, tmp_path / "s")))
    lock = tree.tree / ".git" / "index.lock"
    lock.write_text("")
    with pytest.raises(FarmError, match="index.lock"):
        with apply.applied(tree, ser, cache=tmp_path / "elsewhere"):
            pass
    assert lock.exists()
    with apply.applied(tree, ser, cache=tmp_path) as ap:
        assert len(ap.commits) == 2
    assert not lock.exists() and "left by a git killed with an earlier run" in capsys.readouterr().err


def test_debian_tree_left_mid_series_is_built_as_base(tree, tmp_path, capsys):
    """A run killed with a series applied leaves the farm's own Debian tree on the
    work branch, mid `git am`, or with edits: resolving it again restores `base`,
    so a series' code is never built and judged as the base kernel."""
    before = snapshot(tree)
    assert source.restore_base(tree.tree) is False
    git(tree.tree, "checkout", "-q", "-b", source.WORK_BRANCH)
    commit(tree, "int a;", "int a9;", "mutant")
    (tree.tree / "mm" / "filemap.c").write_text("half-applied\n")
    assert source.restore_base(tree.tree) is True
    assert "restored to its base commit" in capsys.readouterr().err
    assert snapshot(tree) == before
    assert (tree.tree / "mm" / "filemap.c").read_text() == "int a;\nint b;\nint c;\n"
    # killed mid-bisection: detached, a bisection in progress
    commit(tree, "int a;", "int a8;", "step")
    git(tree.tree, "bisect", "start", "HEAD", "HEAD~1")
    assert source.restore_base(tree.tree) is True
    assert snapshot(tree)[1] == before[1] and not (tree.tree / ".git" / "BISECT_LOG").exists()


def test_dirty_tree_is_refused(tree, tmp_path):
    ser = series.load(str(two_patch_series(tree, tmp_path / "s")))
    (tree.tree / "mm" / "filemap.c").write_text("dirty\n")
    with pytest.raises(UsageError, match="uncommitted changes"):
        with apply.applied(tree, ser):
            pass


def test_a_tree_borrowing_its_objects_is_refused_with_what_to_do(tree, tmp_path):
    """A clone made with --shared keeps its objects in another repository: the
    sandboxed git am cannot read them, and the run says so, not "does not apply"."""
    ser = series.load(str(two_patch_series(tree, tmp_path / "s")))
    shared = tmp_path / "shared"
    git(tmp_path, "clone", "-q", "--shared", str(tree.tree), str(shared))
    src = KernelSource(spec=str(shared), tree=shared, version="7.3.4", origin="a shared clone")
    with pytest.raises(UsageError, match=r"borrows its git objects from .*clone it without --shared"):
        with apply.applied(src, ser):
            pass
    git(shared, "repack", "-q", "-a", "-d")
    (shared / ".git" / "objects" / "info" / "alternates").unlink()
    with apply.applied(src, ser) as done:
        assert len(done.commits) == 2


def test_checkpatch_output_parsed():
    """Recorded from 7.3's scripts/checkpatch.pl --terse --show-types on style.patch."""
    res = checkpatch.parse((DATA / "checkpatch" / "terse.txt").read_text())
    assert (res["errors"], res["warnings"], res["checks"]) == (5, 4, 0)
    assert res["findings"][1] == {"line": 14, "level": "ERROR", "type": "TRAILING_WHITESPACE",
                                  "message": "trailing whitespace"}
    assert "MISSING_SIGN_OFF" in {f["type"] for f in res["findings"]}


def test_example_series_parse():
    ex = ROOT / "examples" / "series"
    for d in ex.glob("neg-*"):
        ser = series.load(str(d))
        assert len(ser.patches) == 1
        assert len(ser.patches[0].files) == 1 and ser.patches[0].files[0].endswith(".c"), d


def test_local_tree_series_go_to_a_worktree_in_the_cache(tree, tmp_path):
    """A developer's checkout is never touched: series are applied in a worktree."""
    (tree.tree / "Makefile").write_text("VERSION = 7\nPATCHLEVEL = 3\nSUBLEVEL = 4\n")
    git(tree.tree, "add", "Makefile")
    git(tree.tree, "commit", "-q", "-m", "Makefile")
    base = git(tree.tree, "rev-parse", "HEAD").strip()
    commit(tree, "int b;", "int b2;", "mm: rename b")
    before = snapshot(tree)
    local = KernelSource(spec=str(tree.tree), tree=tree.tree, version="7.3.4", origin=str(tree.tree))
    ser = series.load("HEAD~1..HEAD", tree.tree)
    wt = source.worktree(local, tmp_path / "cache", ser.base_rev)
    assert wt.tree.parent == tmp_path / "cache" / "worktrees" and wt.xy == "7.3"
    assert git(wt.tree, "rev-parse", "HEAD").strip() == base
    with apply.applied(wt, ser) as ap:
        assert "int b2;" in (wt.tree / "mm" / "filemap.c").read_text()
        assert len(ap.commits) == 1
    assert git(wt.tree, "rev-parse", "HEAD").strip() == base
    # the same place next time, moved to whatever base is asked for
    again = source.worktree(local, tmp_path / "cache", "HEAD")
    assert again.tree == wt.tree
    assert snapshot(tree) == before
    # the repository made anew at that path (cloned again): its old worktree
    # is stale, and is made again rather than failing the run
    shutil.rmtree(tree.tree / ".git")
    git(tree.tree, "init", "-q", "-b", "base")
    git(tree.tree, "add", "-A")
    git(tree.tree, "commit", "-q", "-m", "anew")
    anew = source.worktree(local, tmp_path / "cache", "HEAD")
    assert anew.tree == wt.tree and git(anew.tree, "log", "--format=%s", "-1").strip() == "anew"


def test_a_local_tree_at_a_ref_is_built_from_a_worktree_at_that_commit(tmp_path):
    """--kernel PATH@REF: REF's version and content, checked out in a worktree
    in the cache; the developer's checkout stays as it was."""
    t = tmp_path / "linux"
    (t / "arch" / "arm64").mkdir(parents=True)
    (t / "arch" / "arm64" / "Kconfig").write_text("config ARM64\n")
    (t / "Makefile").write_text("VERSION = 7\nPATCHLEVEL = 2\nSUBLEVEL = 0\n")
    git(t, "init", "-q", "-b", "main")
    git(t, "add", "-A")
    git(t, "commit", "-q", "-m", "v7.2")
    git(t, "tag", "v7.2")
    (t / "Makefile").write_text("VERSION = 7\nPATCHLEVEL = 3\nSUBLEVEL = 0\n")
    git(t, "commit", "-q", "-am", "v7.3")
    before = apply.tree_snapshot(t)
    src = source.resolve(f"{t}@v7.2", tmp_path / "cache")
    assert src.ref == "v7.2" and src.label == "7.2" and "v7.2" in src.origin
    with source.checked_out(src, tmp_path / "cache") as wt:
        assert wt.tree != t and wt.tree.is_relative_to(tmp_path / "cache")
        assert "PATCHLEVEL = 2" in (wt.tree / "Makefile").read_text() and wt.label == "7.2"
    assert apply.tree_snapshot(t) == before
    plain = source.resolve(str(t), tmp_path / "cache")
    with source.checked_out(plain, tmp_path / "cache") as same:
        assert same.tree == t and same.label == "7.3"
    with pytest.raises(UsageError, match="does not resolve to a commit"):
        source.validate_spec(f"{t}@no-such-ref")


def test_a_binary_patch_is_refused_at_intake_unless_allowed(tree, tmp_path):
    """A git binary patch (a 45 kB mail that applies as an 8 MB file) is no
    kernel series: refused, naming the patch, unless --allow-binary."""
    blob = tree.tree / "mm" / "blob.bin"
    blob.write_bytes(bytes(range(256)) * 64)
    git(tree.tree, "add", "-A")
    git(tree.tree, "commit", "-q", "-m", "mm: add a blob")
    out = tmp_path / "bin"
    git(tree.tree, "format-patch", "-q", "--binary", "-1", "-o", str(out))
    git(tree.tree, "reset", "-q", "--hard", "HEAD~1")
    [patch] = list(out.iterdir())
    assert b"GIT binary patch" in patch.read_bytes()
    with pytest.raises(UsageError, match=r"patch 1/1 'mm: add a blob'.*binary patch \(mm/blob.bin\)"
                                         r".*--allow-binary"):
        series.load(str(patch))
    assert series.load(str(patch), allow_binary=True).patches[0].files == ("mm/blob.bin",) or \
        series.load(str(patch), allow_binary=True).patches[0].new_files == ("mm/blob.bin",)


def test_a_series_over_the_size_cap_is_refused(tree, tmp_path, monkeypatch):
    box = mbox(tree, tmp_path)
    monkeypatch.setattr(series, "MAX_SERIES_KB", 0)
    with pytest.raises(UsageError, match="over the 0 kB a series may have"):
        series.load(str(box))

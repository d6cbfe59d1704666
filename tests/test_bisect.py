"""foliofarm bisect on a real tree: a five-commit series whose third commit
makes exec text base pages; the bisection names that commit, with the
exec-text figures at the last good commit and at it."""

import json
import subprocess
from pathlib import Path

import pytest

from foliofarm.intake import source
from foliofarm.cli import main
from foliofarm.paths import cache_dir
from foliofarm.intake.source import GIT_IDENTITY

ROOT = Path(__file__).resolve().parent.parent
pytestmark = [pytest.mark.integration, pytest.mark.budget]


def git(tree: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(tree), *args], check=True, capture_output=True, text=True,
                          env={**GIT_IDENTITY, "PATH": "/usr/bin:/bin"}).stdout


def five_commit_series(tmp_path: Path) -> Path:
    """Commits 1, 2, 4 and 5 add a comment to an mm file; commit 3 is the
    exec-order-zero mutant. Made in a throwaway worktree of the cached 7.3 tree."""
    tree = source.resolve("debian:7.3", cache_dir()).tree
    wt = tmp_path / "wt"
    git(tree, "worktree", "add", "-q", "--detach", str(wt), "base")
    try:
        def comment(path: str, n: int) -> None:
            f = wt / path
            f.write_text(f.read_text() + f"/* bisect test commit {n} */\n")
            git(wt, "commit", "-q", "-am", f"mm: bisect test commit {n}")
        comment("mm/readahead.c", 1)
        comment("mm/memory.c", 2)
        git(wt, "am", "-q", str(ROOT / "tests" / "mutants" / "exec-order-zero.patch"))
        comment("mm/readahead.c", 4)
        comment("mm/memory.c", 5)
        box = tmp_path / "five.mbox"
        box.write_text(git(wt, "format-patch", "--stdout", "base..HEAD"))
    finally:
        git(tree, "worktree", "remove", "--force", str(wt))
    return box


def test_bisect_names_the_commit_that_regresses(tmp_path, budget):
    budget(12 * 60, "bisect (four incremental 4K builds)")
    box = five_commit_series(tmp_path)
    code = main(["bisect", "--kernel", "debian:7.3", "--series", str(box), "--cell", "4k-xfs",
                 "--check", "exec-text", "--results", str(tmp_path / "r")])
    assert code == 0
    out = next((tmp_path / "r").glob("bisect-*"))
    result = json.loads((out / "bisect.json").read_text())
    assert result["subject"] == "mm/filemap: read exec text in base pages"
    assert result["good_subject"] == "mm: bisect test commit 2"
    figs = {f["metric"]: f for f in result["figures"]}
    assert figs["aligned_pct"]["base"] >= 90 and figs["aligned_pct"]["series"] == 0
    assert figs["max_folio_kb"]["regression"]
    assert "First bad commit:" in (out / "bisect.md").read_text()
    # the tree is left as it was: on its base, no work branch, no bisection
    tree = source.resolve("debian:7.3", cache_dir()).tree
    assert git(tree, "branch", "--list").split() == ["*", "base"]
    assert subprocess.run(["git", "-C", str(tree), "bisect", "log"], capture_output=True).returncode != 0


def test_bisect_with_a_reproducer_names_the_commit_where_it_starts_to_fail(tmp_path, budget):
    """examples/series/warn-64k-exec: patch 1 a comment, patch 2 a WARN the
    reproducer's exec faults reach on 64K pages; bisect --repro names patch 2."""
    budget(8 * 60, "bisect --repro (a 64K build of patch 1; patch 2's is the series run's)")
    code = main(["bisect", "--kernel", "debian:7.3", "--series", str(ROOT / "examples" / "series" / "warn-64k-exec"),
                 "--cell", "64k-xfs", "--repro", str(ROOT / "examples" / "repro" / "exec-resident.c"),
                 "--results", str(tmp_path / "r")])
    assert code == 0
    out = next((tmp_path / "r").glob("bisect-*"))
    result = json.loads((out / "bisect.json").read_text())
    assert result["check"] == "repro"
    assert result["subject"] == "mm/filemap: assert that exec text is read in large folios"
    assert result["good_subject"] == "mm/filemap: say which folio order exec text is read in"
    assert "WARNING" in result["why"]
    assert [s["verdict"] for s in result["steps"]] == ["good", "bad", "good"]


def test_bisect_refuses_a_reproducer_beside_a_check(tmp_path, capsys):
    code = main(["bisect", "--series", "x", "--cell", "64k-xfs", "--check", "exec-text", "--repro", "r.c"])
    assert code == 2 and "give it or --check, not both" in capsys.readouterr().err

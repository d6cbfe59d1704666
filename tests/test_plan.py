"""The plan alone: driven step by step as the runner drives it, on tiny real git
trees, with a builder that only answers what is built. What each step sees
(which source, which side, the tree's content at that moment) is the plan's
whole contract with the lab."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from foliofarm.results import read
from foliofarm import matrix
from foliofarm.run import plan
from foliofarm.errors import UsageError
from foliofarm.intake.source import GIT_IDENTITY, KernelSource
from foliofarm.judge import catalogue
from foliofarm.run.plan import Build
from foliofarm.results.schema import KernelEntry, Role
from foliofarm.results.writer import ResultsWriter

PAGES = [matrix.page_sizes()["4k"], matrix.page_sizes()["16k"]]


def git(tree: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(tree), *args], check=True, capture_output=True,
                          text=True, env={**GIT_IDENTITY, "PATH": "/usr/bin:/bin"}).stdout


def kernel_tree(path: Path, patchlevel: int = 3) -> Path:
    """A git tree that passes for a kernel's: a Makefile with its version,
    arch/arm64, one source file, and a checkpatch.pl that finds nothing."""
    (path / "mm").mkdir(parents=True)
    (path / "arch" / "arm64").mkdir(parents=True)
    (path / "arch" / "arm64" / "Kconfig").write_text("config ARM64\n")
    (path / "scripts").mkdir()
    (path / "scripts" / "checkpatch.pl").write_text("exit 0;\n")
    (path / "Makefile").write_text(f"VERSION = 7\nPATCHLEVEL = {patchlevel}\nSUBLEVEL = 0\n")
    (path / "mm" / "filemap.c").write_text("int a;\nint b;\nint c;\n")
    git(path, "init", "-q", "-b", "base")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "base")
    return path


def series_mbox(tree: Path, out: Path) -> Path:
    """Two patches by git format-patch, as one mbox; the tree is reset to its base."""
    f = tree / "mm" / "filemap.c"
    for old, new in (("int b;", "int b2;"), ("int c;", "int c2;")):
        f.write_text(f.read_text().replace(old, new))
        git(tree, "commit", "-q", "-am", f"mm: {new}")
    d = out / "fp"
    git(tree, "format-patch", "-q", "-2", "-o", str(d))
    git(tree, "reset", "-q", "--hard", "HEAD~2")
    box = out / "series.mbox"
    box.write_bytes(b"".join(p.read_bytes() for p in sorted(d.iterdir())))
    return box


@dataclass
class Arts:
    built: bool = True


@dataclass
class Builder:
    """Answers what is built; records what --each-commit builds (and the tree then)."""
    cached: bool = False
    built: list[tuple[str, str]] = field(default_factory=list)

    def is_cached(self, src: KernelSource, page: matrix.PageSize, variant: str = "default") -> bool:
        return self.cached

    def build(self, src: KernelSource, page: matrix.PageSize, variant: str = "default") -> Arts:
        self.built.append((page.name, (src.tree / "mm" / "filemap.c").read_text()))
        return Arts()


@dataclass
class Seen:
    step: str
    source: str
    role: Role | None
    tree: str          # mm/filemap.c when the step was taken
    builds: Any = None
    free_tree: bool = False


def drive(g: plan.Ground, opts: plan.RunOptions, src: KernelSource) -> list[Seen]:
    """Take the plan's steps as the runner does: reply to a Build with a token,
    to a Measure with True, after recording the series side's kernels as the
    lab does."""
    seen: list[Seen] = []
    gen = plan.steps(g, opts, src)
    reply: Any = None
    while True:
        try:
            step = gen.send(reply)
        except StopIteration:
            return seen
        content = (step.source.tree / "mm" / "filemap.c").read_text()
        if isinstance(step, Build):
            seen.append(Seen("build", step.source.label, None, content, free_tree=step.free_tree))
            reply = f"builds of {step.source.label}"
        else:
            seen.append(Seen("measure", step.source.label, step.role, content, step.builds))
            for p in g.page_sizes:
                g.writer.add_kernel(KernelEntry(page_size=p.name, kernel=step.source.label, side=step.role))
            reply = True


@pytest.fixture
def ground(tmp_path):
    def make(builder: Builder) -> plan.Ground:
        w = ResultsWriter(tmp_path / "results", ["test"])
        return plan.Ground(writer=w, cache=tmp_path / "cache", builder=builder,  # type: ignore[arg-type]
                           page_sizes=PAGES, variant="default", log=lambda *a, **k: None,
                           status=lambda msg: _Quiet())
    return make


class _Quiet:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def options(tmp_path: Path, **kw: Any) -> plan.RunOptions:
    kw.setdefault("kernel", "debian:7.3")
    return plan.RunOptions(page_sizes=PAGES, filesystems=list(matrix.filesystems().values()),
                           checks=[catalogue.by_name()["exec-text"]], results=tmp_path / "results", **kw)


BASE, PATCHED = "int a;\nint b;\nint c;\n", "int a;\nint b2;\nint c2;\n"


def debian_like(tree: Path) -> KernelSource:
    return KernelSource(spec="debian:7.3", tree=tree, version="7.3.0", origin="fake 7.3")


def test_a_plain_run_measures_one_kernel_once(tmp_path, ground):
    src = debian_like(kernel_tree(tmp_path / "linux"))
    assert drive(ground(Builder()), options(tmp_path), src) == [Seen("measure", "7.3", None, BASE)]


def test_a_series_measures_the_base_then_the_series_applied(tmp_path, ground):
    src = debian_like(kernel_tree(tmp_path / "linux"))
    box = series_mbox(src.tree, tmp_path)
    g = ground(Builder())
    seen = drive(g, options(tmp_path, series=str(box)), src)
    assert seen == [Seen("measure", "7.3", Role.BASE, BASE),
                    Seen("measure", "7.3+series", Role.SERIES, PATCHED)]
    assert (src.tree / "mm" / "filemap.c").read_text() == BASE, "the tree is back at its base"
    doc = read.written(g.writer.doc)
    assert [p["subject"] for p in doc["series"]["patches"]] == ["mm: int b2;", "mm: int c2;"]
    assert len(doc["series"]["commits"]) == 2
    assert doc["sides"] == {"base": {"kernel": "7.3", "origin": "fake 7.3"},
                            "series": {"kernel": "7.3+series", "origin": f"fake 7.3 + {box}"}}
    assert [c["errors"] for c in doc["checkpatch"]] == [0, 0]
    assert "each_commit" not in doc
    json.dumps(doc)      # the sides' keys are plain strings in the document


def test_a_series_over_a_built_base_queues_both_before_measuring(tmp_path, ground):
    """The base's builds are queued (and the tree freed) at the base; the series'
    builds are queued once it is applied; the base is judged from its queued
    builds while the series' build runs."""
    src = debian_like(kernel_tree(tmp_path / "linux"))
    box = series_mbox(src.tree, tmp_path)
    seen = drive(ground(Builder(cached=True)), options(tmp_path, series=str(box)), src)
    assert seen == [
        Seen("build", "7.3", None, BASE, free_tree=True),
        Seen("build", "7.3+series", None, PATCHED),
        Seen("measure", "7.3", Role.BASE, PATCHED, "builds of 7.3"),
        Seen("measure", "7.3+series", Role.SERIES, PATCHED, "builds of 7.3+series"),
    ]
    assert (src.tree / "mm" / "filemap.c").read_text() == BASE


def test_each_commit_builds_every_commit_before_the_tip_then_records_the_tip(tmp_path, ground):
    src = debian_like(kernel_tree(tmp_path / "linux"))
    box = series_mbox(src.tree, tmp_path)
    builder = Builder(cached=True)      # a built base does not skip the per-commit builds
    g = ground(builder)
    seen = drive(g, options(tmp_path, series=str(box), each_commit=True), src)
    assert [(s.step, s.role, s.tree) for s in seen] == [("measure", Role.BASE, BASE),
                                                        ("measure", Role.SERIES, PATCHED)]
    first = "int a;\nint b2;\nint c;\n"
    assert builder.built == [("4k", first), ("16k", first)]
    rows = [(e["number"], e["page_size"], e["ok"]) for e in read.written(g.writer.doc)["each_commit"]]
    assert rows == [(1, "4k", True), (1, "16k", True), (2, "4k", True), (2, "16k", True)]


def test_compare_measures_two_versions_in_order(tmp_path, ground):
    a = kernel_tree(tmp_path / "a", patchlevel=3)
    b = kernel_tree(tmp_path / "b", patchlevel=2)
    src = KernelSource(spec=str(a), tree=a, version="7.3.0", origin=str(a))
    g = ground(Builder())
    seen = drive(g, options(tmp_path, kernel=str(a), compare=str(b)), src)
    assert [(s.source, s.role) for s in seen] == [("7.3", Role.BASE), ("7.2", Role.SERIES)]
    assert g.writer.doc.sides.series.kernel == "7.2"


def test_compare_with_the_same_version_is_refused_before_any_step(tmp_path, ground):
    a = kernel_tree(tmp_path / "a")
    b = kernel_tree(tmp_path / "b")
    src = KernelSource(spec=str(a), tree=a, version="7.3.0", origin=str(a))
    with pytest.raises(UsageError, match="same kernel version"):
        drive(ground(Builder()), options(tmp_path, kernel=str(a), compare=str(b)), src)


def test_a_runner_that_stops_mid_plan_leaves_the_tree_at_its_base(tmp_path, ground):
    """Closing the plan between steps (the runner's loop failed) unwinds it:
    the series is taken off the tree."""
    src = debian_like(kernel_tree(tmp_path / "linux"))
    box = series_mbox(src.tree, tmp_path)
    gen = plan.steps(ground(Builder(cached=True)), options(tmp_path, series=str(box)), src)
    assert isinstance(next(gen), Build)
    step = gen.send("builds")
    assert isinstance(step, Build) and (src.tree / "mm" / "filemap.c").read_text() == PATCHED
    gen.close()
    assert (src.tree / "mm" / "filemap.c").read_text() == BASE
    assert git(src.tree, "branch", "--show-current").strip() == "base"


def test_a_followed_tree_puts_the_series_on_the_branch_it_was_written_for(tmp_path, ground):
    """--kernel git:TREE#mm-stable,mm-new: a series written on mm-new (it changes
    a line only mm-new has) is measured on mm-new's head, base and series, and
    the choice is recorded; one that applies nowhere is refused naming each try."""
    from foliofarm.intake import source
    tree = kernel_tree(tmp_path / "mm")
    git(tree, "checkout", "-q", "-b", "mm-stable")
    git(tree, "checkout", "-q", "-b", "mm-new")
    f = tree / "mm" / "filemap.c"
    f.write_text(f.read_text().replace("int a;", "int a_new;"))
    git(tree, "commit", "-q", "-am", "mm: a new change")
    new_head = git(tree, "rev-parse", "HEAD").strip()
    f.write_text(f.read_text().replace("int a_new;", "int a_newer;"))
    git(tree, "commit", "-q", "-am", "mm: build on it")
    (tmp_path / "box").mkdir()
    git(tree, "format-patch", "-q", "-1", "-o", str(tmp_path / "box"))
    git(tree, "reset", "-q", "--hard", "HEAD~1")
    git(tree, "checkout", "-q", "base")
    [box] = list((tmp_path / "box").iterdir())
    spec = f"git:{tree}#mm-stable,mm-new"
    g = ground(Builder())
    src = source.resolve(spec, g.cache)
    seen = drive(g, options(tmp_path, kernel=spec, series=str(box)), src)
    on_new = "int a_new;\nint b;\nint c;\n"
    assert [(s.role, s.tree) for s in seen] == [
        (Role.BASE, on_new), (Role.SERIES, "int a_newer;\nint b;\nint c;\n")]
    base = read.written(g.writer.doc)["series"]["base"]
    assert (base["branch"], base["commit"]) == ("mm-new", new_head)
    assert base["attempts"] and base["attempts"][0].startswith("mm-stable at ")
    # the same series against a tree with no such line anywhere
    other = kernel_tree(tmp_path / "other")
    git(other, "checkout", "-q", "-b", "mm-new")
    spec = f"git:{other}#mm-new"
    with pytest.raises(UsageError, match=r"applies to no followed branch: mm-new at \w+: patch 1"):
        drive(ground(Builder()), options(tmp_path, kernel=spec, series=str(box)),
              source.resolve(spec, g.cache))

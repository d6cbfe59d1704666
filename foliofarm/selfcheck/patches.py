"""The series `make bench` and `make faults` run: the example patches made
unique to each run, so that neither the artifact cache nor ccache can answer
for them and what they change is compiled for real."""

from __future__ import annotations

import difflib
import time
import tomllib
from pathlib import Path

from foliofarm.paths import ROOT

EXAMPLES = ROOT / "examples" / "series"
AREAS = ROOT / "tests" / "bench" / "areas.toml"


def base_file(tree: Path, name: str) -> str:
    """The file as the tree's first commit has it (Debian's source as shipped),
    not as a series run may have left the work tree meanwhile."""
    from foliofarm.intake import git
    root = git.out(tree, "rev-list", "--max-parents=0", "HEAD").split()[0]
    return git.out(tree, "show", f"{root}:{name}")


def rewritten(tree: Path, row: dict, extra: str = "") -> tuple[str, str]:
    """``row["file"]`` before and after its ``old`` text (found exactly once)
    is made ``new``; ``extra``, a line put before the new text."""
    text = base_file(tree, row["file"])
    n = text.count(row["old"])
    if n != 1:
        raise SystemExit(f"foliofarm: {row['name']}: the old text occurs {n} times in {row['file']}")
    return text, text.replace(row["old"], extra + row["new"], 1)


def mail(path: str, before: str, after: str, subject: str, body: str,
         author: str = "foliofarm mutants <mutants@foliofarm.invalid>") -> str:
    """One patch as `git format-patch` writes it: ``path`` from ``before`` to ``after``."""
    diff = list(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                     f"a/{path}", f"b/{path}", n=3))
    added = sum(1 for ln in diff[2:] if ln.startswith("+"))
    removed = sum(1 for ln in diff[2:] if ln.startswith("-"))
    return (f"From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n"
            f"From: {author}\n"
            f"Date: Mon, 23 Nov 2026 00:00:00 +0000\n"
            f"Subject: [PATCH] {subject}\n\n{body}---\n"
            f" {path} | {added + removed} {'+' * added}{'-' * removed}\n"
            f" 1 file changed, {added} insertions(+), {removed} deletions(-)\n\n"
            f"diff --git a/{path} b/{path}\n{''.join(diff)}-- \n2.39.5\n\n")


def areas() -> list[dict]:
    """The bench's series in one area each (tests/bench/areas.toml)."""
    return tomllib.loads(AREAS.read_text())["area"]


def unique_area_patch(tree: Path, row: dict, out: Path) -> Path:
    """The area series ``row`` (a change in one function that changes no
    behaviour) with a comment line unique to this run before its new text:
    the line shift changes the preprocessed source, so it compiles for real."""
    if row.get("series"):       # an example series made unique: benign.mbox alone knows how
        if row["series"] != "benign.mbox":
            raise SystemExit(f"foliofarm-bench: {AREAS}: {row['name']}: only benign.mbox can be made "
                             "unique; give the area as file/old/new")
        return unique_mm_patch(out)
    indent = row["new"][:len(row["new"]) - len(row["new"].lstrip("\t"))]
    before, after = rewritten(tree, row, f"{indent}/* bench {time.time_ns()} */\n")
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"0001-{row['name']}.patch"
    path.write_text(mail(row["file"], before, after, row["subject"], f"{row['why']}.\n",
                         author="foliofarm bench <bench@foliofarm.invalid>"))
    return path


def unique_mm_patch(out: Path, touching: bool = False) -> Path:
    """The benign example patch (mm/filemap.c) with one more comment line,
    unique to this run: the line shift changes the preprocessed source. With
    ``touching``, touch-thp.mbox's comment in mm/huge_memory.c after it, whose
    MAINTAINERS section names selftests (khugepaged, split_huge_page_test,
    transhuge-stress): the series' touched selftests run first and have their
    own milestone."""
    from foliofarm.intake import series
    patch = series.load(str(EXAMPLES / "benign.mbox")).patches[0]
    text = patch.raw.decode()
    anchor = "+ * lock by every fault on the file.\n"
    if anchor not in text:
        raise SystemExit("foliofarm-bench: examples/series/benign.mbox changed; update unique_mm_patch")
    text = text.replace(anchor, anchor + f"+ * (bench {time.time_ns()})\n", 1)
    head, _, hunk = text.partition("\n@@ ")
    old, new, tail = hunk.split(" ", 2)          # "-3444,6" "+3444,19" "@@ ..."
    start, count = new[1:].split(",")
    text = f"{head}\n@@ {old} +{start},{int(count) + 1} {tail}"
    out.mkdir(parents=True, exist_ok=True)
    if touching:          # two patches: each says its place
        text = text.replace("Subject: [PATCH 1/1]", "Subject: [PATCH 1/2]", 1)
        thp = series.load(str(EXAMPLES / "touch-thp.mbox")).patches[0].raw.decode()
        (out / "0002-mm-huge_memory-say-why-the-length-is-padded.patch").write_text(
            thp.replace("Subject: [PATCH] ", "Subject: [PATCH 2/2] ", 1))
    (out / "0001-mm-filemap-factor-out-the-mmap_miss-decrement.patch").write_text(text)
    return out

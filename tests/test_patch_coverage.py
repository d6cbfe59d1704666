"""Patch coverage (coverage/patch.py): a series' changed lines from its real
diff, which of them are code by the notes its build kept, and which its
tests ran by their counters, read by the toolchain's gcov; the recorded
run's record replayed into every report. The run itself, built and booted:
tests/test_coverage_runs.py."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

from foliofarm.coverage import patch
from test_coverage import SAMPLE, _git, _sample_tree

DATA = Path(__file__).resolve().parent / "data"
# Recorded on 7.3, 4K: tests/mutants/mremap-moved-unfolded.patch built with
# gcov (its build's kept notes: mm/mremap.gcno alone), and the counters of
# mm/mremap.c its contpte-mremap check left in the series' guest and in the
# base's; the tree the notes name (where the series was applied).
NOTES = DATA / "gcov/mremap-series-notes.tgz"
SERIES_CHECK = DATA / "gcov/mremap-series-contpte-mremap.tgz"
BASE_CHECK = DATA / "gcov/mremap-base-contpte-mremap.tgz"
TREE = Path("/root/.cache/foliofarm/src/linux-source-7.3_7.3.4-1~bpo13+1/linux")
RECORDED = DATA / "results/patch-series-7.3.json.gz"
BENIGN = DATA / "results/benign-coverage-7.3.json.gz"


def test_changed_lines_are_the_series_side_s_code_lines_not_comments_or_selftests(tmp_path):
    tree = _sample_tree(tmp_path, "base")
    base = _git(tree, "rev-parse", "HEAD").strip()
    (tree / "mm/sample.c").write_text(SAMPLE.replace(
        "\t\tstart += 1;\n", "\t\t/* one at a time */\n\n\t\tstart += 1;\n\t\tn++;\n"))
    (tree / "include/linux").mkdir(parents=True)
    (tree / "include/linux/sample.h").write_text("#define SAMPLE 1\n")
    (tree / "tools/testing/selftests/mm").mkdir(parents=True)
    (tree / "tools/testing/selftests/mm/sample.c").write_text("int main(void) { return 0; }\n")
    _git(tree, "add", ".")
    _git(tree, "commit", "-qm", "the series")
    got = patch.changed_lines(tree, base, "HEAD")
    text = (tree / "mm/sample.c").read_text().splitlines()
    assert [text[n - 1].strip() for n in sorted(got["mm/sample.c"])] == ["n++;"]
    assert got["include/linux/sample.h"] == {1}
    assert not any(f.startswith("tools/") for f in got)


def _run(tmp_path: Path) -> Path:
    """A run folder as boot/gcov.py writes it: the series' own-checks boot's
    archive, the base's, and a test whose counters the guest lost."""
    run = tmp_path / "run"
    for boot, archive, label in (("4k-ext4-7.3+series-coverage", SERIES_CHECK, "7.3+series-coverage"),
                                 ("4k-ext4-7.3-coverage", BASE_CHECK, "7.3-coverage")):
        d = run / "coverage" / boot / "1"
        d.mkdir(parents=True)
        shutil.copy(archive, d / "ck-4.tgz")
        (d / "index.tsv").write_text(f"ck-4\tcontpte-mremap\t4k-ext4-{label}\tcontpte-mremap\n"
                                     f"-\tmm-selftests\t4k-ext4-{label}\tlost: the guest's index\n")
    return run


def test_a_series_changed_lines_that_ran_are_told_by_its_own_guests_counters(tmp_path):
    """Lines 313-315 of the series' mm/mremap.c: the loop and its call are
    code (the call's continuation line is not); its contpte-mremap check ran
    both. The base's boot is not the series' side: never read. A file no
    recompiled object lists is named, not counted."""
    changed = {"mm/mremap.c": {313, 314, 315}, "fs/ext4/inode.c": {7, 8}}
    (pc,) = patch.measure(_run(tmp_path), "4k", "7.3+series-coverage", NOTES, TREE, changed)
    assert pc.page_size == "4k" and pc.cell == "4k-ext4"
    assert (pc.changed, pc.ran) == (2, 2)
    assert [(c.file, c.line, c.tests) for c in pc.lines] == [
        ("mm/mremap.c", 313, ["contpte-mremap"]), ("mm/mremap.c", 314, ["contpte-mremap"])]
    assert pc.unmeasured == ["fs/ext4/inode.c: 2 line(s)"]
    assert pc.lost == ["mm-selftests: the guest's index"]


def test_a_changed_line_no_test_ran_is_counted_and_named(tmp_path):
    """Line 1107 of mm/mremap.c is code in the series' object that its
    contpte-mremap check never ran: counted among the changed lines, run by
    no test."""
    from foliofarm.coverage import gcda
    work = tmp_path / "w"
    code = patch.code_lines(NOTES, TREE, {"mm/mremap.c": set(range(1, 3000))}, work)["mm/mremap.c"]
    ran = gcda.executed(tmp_path / "r", gcda.unpack(SERIES_CHECK, tmp_path / "r"), work / "notes", TREE,
                        {"mm/mremap.c"}).lines["mm/mremap.c"]
    idle = min(code - ran)
    (pc,) = patch.measure(_run(tmp_path / "m"), "4k", "7.3+series-coverage", NOTES, TREE,
                          {"mm/mremap.c": {313, idle}})
    assert (pc.changed, pc.ran) == (2, 1)
    assert [c.tests for c in pc.lines if c.line == idle] == [[]]


def test_the_recorded_run_s_patch_coverage_is_in_every_report():
    """The mremap mutant with --coverage on 4K/ext4 (contpte-mremap and the
    mremap selftests): both changed lines ran, by the check and both tests;
    report.txt (the reply) gives the count, report.md and .html each line."""
    from foliofarm.judge import compare
    from foliofarm.report import sections, text
    from foliofarm.report.render import to_html, to_markdown
    from foliofarm.results import read
    from foliofarm.results.schema import Results

    doc = Results.model_validate(read.upgrade(json.loads(gzip.decompress(RECORDED.read_bytes()))))
    (pc,) = doc.series.patch_coverage
    assert (pc.cell, pc.changed, pc.ran) == ("4k-ext4", 2, 2)
    assert all("mm-selftests: mremap_test" in c.tests and "contpte-mremap" in c.tests for c in pc.lines)
    judged = compare.judged(doc)
    assert "4k-ext4: changed lines run: 2 of 2." in text.render(judged)
    md = to_markdown(*sections.build(judged))
    assert ("| mm/mremap.c:313 | 4k-ext4 | contpte-mremap, mm-selftests: mremap_dontunmap, "
            "mm-selftests: mremap_test |") in md, md
    assert "mm/mremap.c:314" in to_html(*sections.build(judged))


def test_the_benign_series_on_three_page_sizes_names_the_line_64k_never_ran():
    """examples/series/benign.mbox with --coverage on 4k/16k/64k ext4 and the
    farm's twelve checks (recorded): all five changed lines ran on 4K and 16K;
    on 64K no check reached filemap_map_pages' VM_SEQ_READ|VM_EXEC test, and
    the reply says which line, the others each with the checks that ran it."""
    from foliofarm.judge import compare
    from foliofarm.report import text
    from foliofarm.results import read
    from foliofarm.results.schema import Results

    doc = Results.model_validate(read.upgrade(json.loads(gzip.decompress(BENIGN.read_bytes()))))
    by_cell = {pc.cell: pc for pc in doc.series.patch_coverage}
    assert {c: (pc.changed, pc.ran) for c, pc in by_cell.items()} == \
        {"4k-ext4": (5, 5), "16k-ext4": (5, 5), "64k-ext4": (5, 4)}
    assert [c.line for c in by_cell["64k-ext4"].lines if not c.tests] == [3994]
    assert all("mmap-miss" in c.tests for c in by_cell["64k-ext4"].lines if c.tests)
    said = text.render(compare.judged(doc))
    assert "64k-ext4: changed lines run: 4 of 5; not run: mm/filemap.c:3994." in said
    assert "16k-ext4: changed lines run: 5 of 5." in said

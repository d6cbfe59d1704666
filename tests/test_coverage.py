"""The coverage map's parts that need no kernel: a C file's functions in the
kernel's style, a diff read into the functions it changes, the selection
of selftests from a map, the guest's archives unpacked under caps."""

from __future__ import annotations

import io
import subprocess
import tarfile
from pathlib import Path

import pytest

from foliofarm.coverage import cmap, gcda, reach, select
from foliofarm.errors import GuestError

SAMPLE = """\
// SPDX-License-Identifier: GPL-2.0
#include <linux/mm.h>

#define STEP 4

static int counter;

/*
 * A helper, inlined where it is called.
 */
static inline int step(int x)
{
	return x + STEP;
}

static unsigned long
walk_range(unsigned long start,
	   unsigned long end)
{
	unsigned long n = 0;

	while (start < end) {
		n += step(start);
		start += 1;
	}
	return n;
}

SYSCALL_DEFINE2(sample, unsigned long, a, unsigned long, b)
{
	counter++;
	return walk_range(a, b);
}

static const struct vm_operations_struct sample_ops = {
	.fault = NULL,
};
"""


def test_functions_are_found_as_the_kernel_writes_them():
    fs = {f.name: (f.first, f.last) for f in reach.functions("mm/sample.c", SAMPLE)}
    assert fs == {"step": (11, 14), "walk_range": (16, 27), "sample": (29, 33)}


def _git(tree: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(tree), *args], check=True, capture_output=True, text=True,
                          env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                               "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"}).stdout


def _sample_tree(tmp_path: Path, message: str) -> Path:
    """A git tree holding SAMPLE as mm/sample.c, committed."""
    tree = tmp_path / "t"
    (tree / "mm").mkdir(parents=True)
    (tree / "mm/sample.c").write_text(SAMPLE)
    _git(tree, "init", "-q")
    _git(tree, "add", ".")
    _git(tree, "commit", "-qm", message)
    return tree


def _changed(tmp_path: Path, edit, extra: dict[str, str] | None = None) -> reach.Change:
    """The change a real `git diff` reads as, after ``edit`` of SAMPLE."""
    tree = _sample_tree(tmp_path, "base")
    (tree / "mm/sample.c").write_text(edit(SAMPLE))
    for p, text in (extra or {}).items():
        (tree / p).parent.mkdir(parents=True, exist_ok=True)
        (tree / p).write_text(text)
    _git(tree, "add", ".")
    diff = _git(tree, "diff", "--cached", "-U3", "HEAD")

    def base(p: str) -> str:
        try:
            return _git(tree, "show", f"HEAD:{p}")
        except subprocess.CalledProcessError:
            return ""
    return reach.change(reach.parse_diff(diff), base, lambda p: (tree / p).read_text())


def test_a_line_in_a_function_changes_that_function(tmp_path):
    ch = _changed(tmp_path, lambda s: s.replace("start += 1;", "start += 2;"))
    assert not ch.whole
    assert {f.name for f in ch.functions} == {"walk_range"}


def test_an_inserted_line_changes_the_function_it_lands_in(tmp_path):
    ch = _changed(tmp_path, lambda s: s.replace("\tcounter++;\n", "\tcounter++;\n\tcounter--;\n"))
    assert {f.name for f in ch.functions} == {"sample"}


def test_a_changed_signature_line_changes_its_function(tmp_path):
    ch = _changed(tmp_path, lambda s: s.replace("\t   unsigned long end)", "\t   unsigned long stop)"))
    assert {f.name for f in ch.functions} == {"walk_range"} and not ch.whole


def test_comments_and_blank_lines_change_nothing(tmp_path):
    ch = _changed(tmp_path, lambda s: s.replace(" * A helper, inlined", " * A small helper, inlined")
                  .replace("\tunsigned long n = 0;\n\n", "\tunsigned long n = 0;\n\n\n"))
    assert not ch.whole and not ch.functions


def test_a_global_a_macro_or_an_initialiser_is_unseen(tmp_path):
    for edit in (lambda s: s.replace("static int counter;", "static int counter = 1;"),
                 lambda s: s.replace("#define STEP 4", "#define STEP 8"),
                 lambda s: s.replace(".fault = NULL,", ".fault = NULL, .close = NULL,")):
        ch = _changed(tmp_path / str(id(edit)), edit)
        assert ch.whole and "outside any function" in ch.unseen[0], ch.unseen


def test_a_header_is_unseen_by_name(tmp_path):
    ch = _changed(tmp_path, lambda s: s, {"include/linux/sample.h": "#define X 1\n"})
    assert ch.whole and ch.unseen[0].startswith("include/linux/sample.h: not a C file")


def test_a_new_function_alone_changes_nothing_its_callers_do(tmp_path):
    new = "\nstatic int unused_helper(int v)\n{\n\treturn v * 2;\n}\n"
    ch = _changed(tmp_path, lambda s: s.replace("SYSCALL_DEFINE2", new.lstrip("\n") + "\nSYSCALL_DEFINE2"))
    assert not ch.whole and not ch.functions
    assert ch.new_functions == {"mm/sample.c: unused_helper"}


def test_a_selftest_source_is_named(tmp_path):
    ch = _changed(tmp_path, lambda s: s, {"tools/testing/selftests/mm/ksm_tests.c": "int main(void){}\n"})
    assert ch.selftest_sources == {"tools/testing/selftests/mm/ksm_tests.c"} and not ch.whole


def _map() -> cmap.CoverageMap:
    m = cmap.CoverageMap("7.3", "abc", "4k", seen={"mm/sample.c", "mm/other.c"})
    m.tests["mm-selftests: walker"] = cmap.Reach(gcda.Executed(lines={"mm/sample.c": {20, 22}}))
    m.tests["mm-selftests: caller -s 1"] = cmap.Reach(gcda.Executed(lines={"mm/sample.c": {31}},
                                                                     functions={"mm/sample.c": {"__do_sys_sample"}}))
    m.tests["mm-selftests: elsewhere"] = cmap.Reach(gcda.Executed(lines={"mm/other.c": {5}}))
    m.tests["exec-text"] = cmap.Reach(gcda.Executed(lines={"mm/sample.c": {12}}))
    return m


def test_selection_runs_what_reaches_the_change_and_says_why_not(tmp_path):
    ch = _changed(tmp_path, lambda s: s.replace("start += 1;", "start += 2;"))
    sel = select.select(_map(), ch, "4k")
    assert sel.run == {"mm-selftests: walker": "reaches mm/sample.c: walk_range"}
    assert set(sel.not_reached) == {"mm-selftests: caller -s 1", "mm-selftests: elsewhere"}
    assert "executed none of walk_range" in sel.not_reached["mm-selftests: elsewhere"]
    assert sel.said() == "4k: 1 of 3 selftests reach what the series changes"


def test_selection_runs_everything_when_the_map_cannot_answer(tmp_path):
    whole = _changed(tmp_path / "a", lambda s: s, {"include/linux/sample.h": "#define X 1\n"})
    assert select.select(_map(), whole, "4k").everything.startswith("include/linux/sample.h")
    ch = _changed(tmp_path / "b", lambda s: s.replace("start += 1;", "start += 2;"))
    assert "no coverage map" in select.select(None, ch, "16k").everything
    m = _map()
    m.seen = {"mm/other.c"}
    assert "holds no record" in select.select(m, ch, "4k").everything


def test_a_touched_selftest_runs_though_it_reaches_nothing(tmp_path):
    ch = _changed(tmp_path, lambda s: s.replace("start += 1;", "start += 2;"))
    sel = select.select(_map(), ch, "4k", touched_programs={"elsewhere"})
    assert sel.run["mm-selftests: elsewhere"] == "the series changes its source"


def test_ranges_round_trip():
    lines = {1, 2, 3, 5, 9, 10, 11, 40}
    assert cmap.ranges(lines) == "1-3,5,9-11,40"
    assert cmap.unranges(cmap.ranges(lines)) == lines


# -- the guest's archives ----------------------------------------------------------

def _archive(path: Path, members: list[tuple[tarfile.TarInfo, bytes]]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for info, data in members:
            info.size = len(data) if info.isreg() else 0
            tar.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return path


def _info(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    t = tarfile.TarInfo(name)
    t.type, t.linkname = kind, link
    return t


def test_an_archive_gives_its_gcda_files_alone(tmp_path):
    arc = _archive(tmp_path / "a.tgz", [
        (_info("./mm/filemap.gcda"), b"counts"),
        (_info("../../etc/evil.gcda"), b"x"),
        (_info("/abs/evil.gcda"), b"x"),
        (_info("mm/link.gcda", tarfile.SYMTYPE, "/etc/passwd"), b""),
        (_info("mm/hard.gcda", tarfile.LNKTYPE, "mm/filemap.gcda"), b""),
        (_info("mm/notes.txt"), b"x"),
    ])
    out = tmp_path / "out"
    out.mkdir()
    assert gcda.unpack(arc, out) == ["mm/filemap.gcda"]
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()) == ["mm/filemap.gcda"]
    assert not (tmp_path.parent / "etc").exists()


def test_an_archive_over_its_caps_or_not_an_archive_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(gcda, "MAX_MEMBER", 10)
    arc = _archive(tmp_path / "big.tgz", [(_info("mm/a.gcda"), b"x" * 11)])
    with pytest.raises(GuestError, match="over the caps"):
        gcda.unpack(arc, tmp_path)
    (tmp_path / "junk.tgz").write_bytes(b"\x1f\x8b not gzip")
    with pytest.raises(GuestError, match="not an archive"):
        gcda.unpack(tmp_path / "junk.tgz", tmp_path)


def test_gcov_paths_are_made_relative_to_the_tree():
    tree, build = Path("/src/linux"), Path("/cache/build/x")
    assert gcda.relative("/src/linux/mm/filemap.c", tree, build) == "mm/filemap.c"
    assert gcda.relative("/cache/build/x/lib/gen.c", tree, build) == "lib/gen.c"
    assert gcda.relative("/usr/include/stdio.h", tree, build) is None
    assert gcda.relative("../x.c", tree, build) is None


# -- recorded from a 7.3 4K coverage kernel: exec-text's counters -------------------

GCOV = Path(__file__).resolve().parent / "data" / "gcov"
# where the recording's tree and build were: gcov names sources by these paths
TREE_73 = Path("/root/.cache/foliofarm/src/linux-source-7.3_7.3.4-1~bpo13+1/linux")
BUILD_73 = Path("/root/.cache/foliofarm/build/7.3-4k-coverage-e862df89-2bff34d5e101518d-8cb639e0")


def test_counters_tell_an_object_that_ran_from_one_that_did_not():
    """exec-text maps and runs a program: arch/arm64/mm/contpte.c ran (its
    contpte folding), mm/mremap.c did not."""
    assert gcda.counted((GCOV / "exec-text-contpte.gcda").read_bytes())
    assert not gcda.counted((GCOV / "exec-text-mremap.gcda").read_bytes())
    data = bytearray((GCOV / "exec-text-mremap.gcda").read_bytes())
    assert gcda.counted(bytes(data[:-3]))          # cut short: not known empty, so gcov reads it
    assert gcda.counted(b"not a gcda at all")


def test_gcovs_json_is_read_into_lines_and_functions_of_the_tree():
    ex = gcda.read_json(GCOV / "exec-text-contpte.gcov.json.gz", TREE_73, BUILD_73)
    assert "arch/arm64/mm/contpte.c" in ex.seen and "include/linux/mm.h" in ex.seen
    assert len(ex.lines["arch/arm64/mm/contpte.c"]) == 38
    assert ex.functions["arch/arm64/mm/contpte.c"] == {
        "__contpte_try_fold", "contpte_get_and_clear_full_ptes", "contpte_ptep_get", "contpte_set_ptes",
        "contpte_try_unfold_partial"}
    assert not any(f.startswith("/") for f in ex.seen)


# -- a real series run with selection (recorded: tests/data/results) ---------------

RECORDED = Path(__file__).resolve().parent / "data" / "results" / "reached-series-7.3.json.gz"


def test_a_recorded_series_run_judges_what_it_did_not_reach_as_the_base():
    """mremap-moved-unfolded on 4K/ext4, the mremap and ksm selftests, a map
    of them: the two mremap tests ran on the series' side, the seven ksm tests
    were not reached (two of them fail on the base: 'Scan time limit
    exceeded' under TCG). The check is judged with the base's results
    standing for them: a failure on both sides, never 'fixed'."""
    import gzip as _gzip
    import json as _json

    from foliofarm.judge import compare
    from foliofarm.results import read
    from foliofarm.results.schema import Results

    doc = Results.model_validate(read.upgrade(_json.loads(_gzip.decompress(RECORDED.read_bytes()))))
    (reached,) = doc.series.reached
    assert sorted(reached.run) == ["mm-selftests: mremap_dontunmap", "mm-selftests: mremap_test"]
    assert len(reached.not_reached) == 7 and doc.series.changed_functions == ["mm/mremap.c: move_ptes"]
    rows = {r.check: r for r in compare.verdicts(doc)}
    assert {r.verdict for c, r in rows.items() if c.startswith("mm-selftests: ksm")} == {"not-reached"}
    assert rows["mm-selftests: mremap_test"].verdict == "pass"
    whole = rows["mm-selftests"]
    assert whole.verdict == "fail" and "not reached" in whole.series_reason
    figs = {f.metric: (f.base, f.series) for f in whole.figures}
    assert figs["pass"] == (7, 7) and figs["fail"] == (2, 2) and figs["skip"] == (0, 0)
    # each report says what ran and what was not reached, and why
    from foliofarm.report import text
    from foliofarm.report import sections
    from foliofarm.report.render import to_html, to_markdown
    judged = compare.judged(doc)
    txt = text.render(judged)
    assert "4k: 2 of 9 mapped selftests ran; 7 not reached kept the base's result." in txt
    md = to_markdown(*sections.build(judged))
    assert "| 4k | mm-selftests: ksm_tests -U | on the base (4k) it executed none of move_ptes |" in md, md
    assert "not reached" in to_html(*sections.build(judged))


# -- the counters brought home: a guest's index and archives, under caps -------------

class _Guest:
    """What boot/gcov.py asks of a guest, serving files from a dict: the
    stand-in for a coverage kernel's guest (the real one: test_coverage_runs)."""
    banner = {"gcov": "yes"}

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files

    def run(self, command: str, timeout: float):
        from types import SimpleNamespace
        if command.startswith("test -f "):
            return SimpleNamespace(status=0 if command.split()[-1] in self.files else 1, output="")
        if command.startswith("rm -f "):
            self.files.pop(command.split()[-1], None)
        return SimpleNamespace(status=0, output="")

    def read_bytes(self, path: str, limit: int) -> bytes:
        if len(self.files[path]) > limit:
            raise GuestError(f"{path} over its cap")
        return self.files[path]

    def read_file(self, path: str, limit: int) -> str:
        return self.read_bytes(path, limit).decode(errors="replace")


def test_a_guest_s_archives_come_home_named_and_capped(tmp_path, monkeypatch):
    from foliofarm import matrix
    from foliofarm.boot import gcov
    cell = matrix.cell_of("4k", "ext4", "7.3-coverage")
    g = _Guest({"/tmp/out/gcov/index": b"st-1\tmremap_test\nst-2\tksm -U\x1b[31m\tx\n../x\tevil\n",
                "/tmp/out/gcov/st-1.tgz": b"one", "/tmp/out/gcov/st-2.tgz": b"two"})
    assert gcov.fetch(g, tmp_path, cell, "mm-selftests") == ["st-1", "st-2"]
    assert (tmp_path / "st-1.tgz").read_bytes() == b"one"
    index = (tmp_path / gcov.INDEX).read_text().splitlines()
    assert index[0] == f"st-1\tmm-selftests\t{cell.id}\tmremap_test"
    assert "\x1b" not in index[1] and index[1].count("\t") == 3
    assert "/tmp/out/gcov/st-1.tgz" not in g.files          # the guest's copy deleted
    assert gcov.fetch(g, tmp_path, cell, "mm-selftests") == []      # nothing twice
    # a guest that saves without end: the boot's cap, said once
    monkeypatch.setattr(gcov, "PER_BOOT", 3)
    g.files.update({"/tmp/out/gcov/index": b"".join(b"st-%d\tt\n" % i for i in range(1, 9)),
                    **{f"/tmp/out/gcov/st-{i}.tgz": b"x" for i in range(3, 9)}})
    assert gcov.fetch(g, tmp_path, cell, "mm-selftests") == ["st-3"]
    assert "lost: over 3 archives" in (tmp_path / gcov.INDEX).read_text()


def test_a_run_s_counters_become_the_map_through_the_toolchain_s_gcov(tmp_path):
    """Recorded from the 4K coverage kernel: mremap_test's counters of
    mm/mremap.c and that object's .gcno. The map made of them, through the
    cross gcov in the sandbox, holds what mremap_test ran (move_ptes and
    move_page_tables); kept and read back, it answers the same."""
    import gzip as _gzip
    build = tmp_path / "build"
    (build / "mm").mkdir(parents=True)
    (build / "mm" / "mremap.gcno").write_bytes(_gzip.decompress((GCOV / "mremap.gcno.gz").read_bytes()))
    where = tmp_path / "run" / "coverage" / "4k-nofs-7.3-coverage" / "1"
    where.mkdir(parents=True)
    _archive(where / "st-1.tgz", [(_info("./mm/mremap.gcda"), (GCOV / "mremap_test-mremap.gcda").read_bytes()),
                                  (_info("./mm/link.gcda", tarfile.SYMTYPE, "/etc/passwd"), b"")])
    _archive(where / "st-2.tgz", [(_info("./mm/mremap.gcda"), (GCOV / "exec-text-mremap.gcda").read_bytes())])
    (where / "index.tsv").write_text("st-1\tmm-selftests\t4k-ext4-7.3-coverage\tmremap_test\n"
                                     "st-2\tmm-selftests\t4k-ext4-7.3-coverage\tmlock2-tests\n"
                                     "st-3\tmm-selftests\t4k-ext4-7.3-coverage\tlost: the guest's index\n")
    m = cmap.CoverageMap("7.3", "recorded", "4k")
    assert cmap.add_run(m, tmp_path / "run", build, TREE_73) == 2
    ran = m.tests["mm-selftests: mremap_test"].executed
    assert {"move_ptes", "move_page_tables"} <= ran.functions["mm/mremap.c"]
    assert "mm/mremap.c" in m.seen and len(m.lost) == 1
    assert not m.tests["mm-selftests: mlock2-tests"].executed.lines        # all zero: known, never run
    assert m.reaching("mm/mremap.c", "move_ptes") == ["mm-selftests: mremap_test"]
    cache = tmp_path / "cache"
    back = cmap.load(cmap.save(cache, m))
    assert back.reaching("mm/mremap.c", "move_ptes") == ["mm-selftests: mremap_test"]
    assert back.tests["mm-selftests: mremap_test"].executed.lines == ran.lines and back.seen == m.seen


def test_a_borrowed_map_answers_by_function_name(tmp_path):
    """Another base's map: its line numbers are not this base's, so only the
    names it entered count; a changed function it cannot name (inlined there)
    in a file some test ran leaves every test to run."""
    m = _map()
    m.defined = {"mm/sample.c": {"walk_range", "__do_sys_sample"}}
    m.tests["mm-selftests: walker"].executed.functions = {"mm/sample.c": {"walk_range"}}
    ch = _changed(tmp_path / "a", lambda s: s.replace("start += 1;", "start += 2;"))
    sel = select.select(m, ch, "4k", borrowed=True)
    assert set(sel.run) == {"mm-selftests: walker"}
    # by lines alone, a test that ran line 22 of this base but never entered walk_range there
    m.tests["mm-selftests: walker"].executed.functions = {}
    assert select.select(m, ch, "4k", borrowed=True).run == {}
    assert select.select(m, ch, "4k").run == {"mm-selftests: walker": "reaches mm/sample.c: walk_range"}
    inlined = _changed(tmp_path / "b", lambda s: s.replace("return x + STEP;", "return x + STEP + 1;"))
    assert "cannot name it" in select.select(m, inlined, "4k", borrowed=True).everything


def test_the_nearest_base_s_map_is_borrowed_and_said(tmp_path):
    """A followed tree moved on: its new base has no map yet; the map of the
    base one commit before it answers, by name, and the record says so."""
    from foliofarm.coverage import diffreach
    tree = _sample_tree(tmp_path, "old base")
    old = _git(tree, "rev-parse", "HEAD").strip()
    (tree / "mm/other.c").write_text("int other;\n")
    _git(tree, "add", ".")
    _git(tree, "commit", "-qm", "new base")
    new = _git(tree, "rev-parse", "HEAD").strip()
    (tree / "mm/sample.c").write_text(SAMPLE.replace("start += 1;", "start += 2;"))
    _git(tree, "commit", "-qam", "the series")
    tip = _git(tree, "rev-parse", "HEAD").strip()
    m = _map()
    m.state = old
    m.defined = {"mm/sample.c": {"walk_range"}}
    m.tests["mm-selftests: walker"].executed.functions = {"mm/sample.c": {"walk_range"}}
    cache = tmp_path / "cache"
    cmap.save(cache, m)
    (sel,), ch = diffreach.reached(cache, "7.3", new, tree, new, tip, ["4k"])
    assert set(sel.run) == {"mm-selftests: walker"}
    assert sel.map.startswith(f"borrowed from the base {old[:12]}, 1 commit(s) away")
    assert "(map borrowed from" in sel.said()
    (none,), _ = diffreach.reached(cache, "7.3", new, tree, new, tip, ["16k"])
    assert "no coverage map" in none.everything

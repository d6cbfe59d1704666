"""The mm selftests a series touches (intake/touched.py), on the 7.3 tree's own
MAINTAINERS (its sections that name anything under mm/ or the mm selftests,
names and file patterns as the tree has them), run_vmtests.sh and the
selftests folder's listing, recorded from linux-source-7.3."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from foliofarm.intake import touched as t

DATA = Path(__file__).parent / "data" / "touched"
SECS = t.sections((DATA / "MAINTAINERS-7.3-mm").read_text())
RUNS = t.programs((DATA / "run_vmtests-7.3.sh").read_text())
SOURCES = (DATA / "selftests-mm-7.3.txt").read_text().split()


def of(*changed: str) -> t.Touched:
    return t.touched_by(SECS, RUNS, SOURCES, list(changed))


def test_run_vmtests_programs_and_their_categories():
    assert RUNS["khugepaged"] == ["thp"] and RUNS["cow"] == ["cow"]
    assert RUNS["uffd-stress"] == ["userfaultfd"]          # run as ${uffd_stress_bin}
    assert RUNS["test_hmm.sh"] == ["hmm"]                   # run as bash ./test_hmm.sh
    assert RUNS["ksm_tests"] == ["ksm", "ksm_numa"]
    assert RUNS["on-fault-limit"] == ["mlock"]              # sudo -u nobody sh -c ./on-fault-limit
    assert "uffd-common" not in RUNS and len(RUNS) > 50


def test_the_thp_section_names_its_selftests():
    got = of("mm/huge_memory.c")
    assert list(got.programs) == ["khugepaged", "split_huge_page_test", "transhuge-stress"]
    assert got.categories == ["thp"]
    assert got.why["khugepaged"] == ["MEMORY MANAGEMENT - THP (TRANSPARENT HUGE PAGE)"]


def test_a_glob_names_the_programs_run_vmtests_runs_and_not_their_helpers():
    got = of("mm/userfaultfd.c")
    assert list(got.programs) == ["uffd-stress", "uffd-unit-tests", "uffd-wp-mremap"]
    assert got.categories == ["userfaultfd"]


def test_a_selftest_the_series_changes_is_touched_and_the_catch_all_sections_name_none():
    assert of("tools/testing/selftests/mm/cow.c").why == {"cow": ["changed by the series"]}
    # mm/filemap.c is in sections that name the whole folder (or no selftest): no test in particular
    assert of("mm/filemap.c").programs == {} and "no mm selftest" in of("mm/filemap.c").said()
    assert of("Documentation/mm/index.rst", "README").programs == {}


def test_several_files_add_up_once_each():
    got = of("mm/gup.c", "mm/userfaultfd.c", "mm/gup.c", "mm/khugepaged.c")
    assert got.categories == ["gup_test", "thp", "userfaultfd"]
    assert len(got.why["khugepaged"]) == 1


@pytest.mark.parametrize("pattern,path,hit", [
    ("mm/", "mm/filemap.c", True), ("mm/", "mm/damon/core.c", True), ("mm/", "mmx/a.c", False),
    ("mm/*.c", "mm/gup.c", True), ("mm/*.c", "mm/damon/core.c", False),
    ("tools/testing/selftests/mm/uffd-*.[ch]", "tools/testing/selftests/mm/uffd-common.h", True),
    ("tools/testing/selftests/mm/*hmm*", "tools/testing/selftests/mm/test_hmm.sh", True),
    ("*/mm/", "arch/arm64/mm/contpte.c", True), ("include/linux/mm.h", "include/linux/mm.h", True),
    ("include/linux/mm.h", "include/linux/mmzone.h", False), ("mm/gup.c", "mmXgup.c", False)])
def test_get_maintainers_pattern_rules(pattern, path, hit):
    assert t.matches(pattern, path) is hit


@settings(deadline=None)       # each example reads every section: slow on a busy host
@given(st.lists(st.sampled_from(["mm/huge_memory.c", "mm/gup.c", "mm/filemap.c", "mm/rmap.c",
                                 "tools/testing/selftests/mm/cow.c", "mm/hmm.c", "fs/ext4/inode.c"]),
                max_size=6))
def test_what_is_touched_is_always_a_test_run_vmtests_runs(changed):
    got = of(*changed)
    assert set(got.programs) <= set(RUNS) and set(got.programs) == set(got.why)
    assert all(got.programs[p] == RUNS[p] for p in got.programs)
    assert got.programs == of(*reversed(changed)).programs


def test_a_tree_without_maintainers_touches_nothing(tmp_path):
    assert t.touched(tmp_path, ["mm/huge_memory.c"]).programs == {}


def test_a_commit_of_a_git_tree_is_read_at_that_commit(tmp_path):
    import shutil
    import subprocess
    tree = tmp_path / "linux"
    st = tree / t.SELFTESTS
    st.mkdir(parents=True)
    shutil.copy(DATA / "MAINTAINERS-7.3-mm", tree / "MAINTAINERS")
    shutil.copy(DATA / "run_vmtests-7.3.sh", st / "run_vmtests.sh")
    for f in SOURCES:
        (tree / f).touch()
    git = ["git", "-C", str(tree), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "base"], check=True)
    ref = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    (tree / "MAINTAINERS").write_text("")             # the checkout moved on; the commit did not
    assert t.touched(tree, ["mm/huge_memory.c"]).programs == {}
    at_ref = t.touched(tree, ["mm/huge_memory.c"], ref)
    assert at_ref.programs == of("mm/huge_memory.c").programs != {}
    assert t.touched(tree, ["mm/huge_memory.c"], "0" * 40).programs == {}    # no such commit


def test_the_report_says_which_selftests_a_series_touches():
    from foliofarm.report import sections
    from foliofarm.results.read import read
    from foliofarm.results.schema import TouchedSelftest
    doc = read(Path(__file__).parent / "data" / "results" / "benign-4k.json")
    got = of("mm/huge_memory.c")
    doc.series.touched_selftests = [TouchedSelftest(program=k, categories=v, named_by=got.why[k])
                                    for k, v in got.programs.items()]
    (sec,) = sections.series(doc)
    said = [b[1] for b in sec.blocks if b[0] == "p" and "selftests it touches" in b[1]]
    assert said and "khugepaged (thp; MEMORY MANAGEMENT - THP" in said[0]

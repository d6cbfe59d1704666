"""tools/same_results.py --across-fs on a document a real 3x3 run wrote: which
checks the filesystem changed nothing of, measured cell against cell."""

from __future__ import annotations

import copy
import gzip
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import same_results  # noqa: E402

SCHEDULED = Path(__file__).parent / "data" / "results" / "scheduled-run-7.3.json"


def test_the_anonymous_checks_are_the_same_on_every_filesystem_and_the_folder_taking_selftests_not():
    per = same_results.across_fs(json.loads(SCHEDULED.read_text()))
    assert per["anon-mthp"] == [] and per["fork-contpte"] == []
    # EROFS is read-only: the selftests that take the cell's folder skip there, and
    # file-collapse cannot open its file for write
    selftests = per["mm-selftests"]
    assert selftests and all("/erofs" in d and "skip" in d.lower() for d in selftests)
    assert {d.split(":")[0] for d in selftests} == {f"{p} ext4/erofs mm-selftests" for p in ("4k", "16k", "64k")}
    assert any("write_opened 1 -> 0" in d for d in per["file-collapse"])


def test_a_figure_moved_in_one_filesystems_cell_is_said():
    doc = json.loads(SCHEDULED.read_text())
    moved = copy.deepcopy(doc)
    cell = next(c for c in moved["cells"] if c["page_size"] == "16k" and c["fs"] == "xfs")
    chk = next(c for c in cell["checks"] if c["name"] == "anon-mthp")
    chk["outcome"] = "fail"
    per = same_results.across_fs(moved)
    assert per["anon-mthp"] == ["16k ext4/xfs anon-mthp: outcome pass -> fail"]


def emulation_doc(name: str) -> dict:
    return json.loads(gzip.decompress((Path(__file__).parent / "data" / "results"
                                       / f"emulation-{name}-7.3.json.gz").read_bytes()))


def test_more_guests_than_cores_gives_the_defaults_results():
    """`make emulation`'s guests-6 run (six own and six tree guests on two
    cores) against the default's, both as the runs wrote them: the same but
    for tests the farm knows to move (split_huge_page_test on 4K XFS, measured
    flaky in the kernel's history, judged `flaky` in the loaded run; a known
    failure passing once), which a reader is not told as news."""
    default, six = emulation_doc("default"), emulation_doc("guests-6")
    shown: list[str] = []
    assert same_results.differences(default, six, shown) == []
    assert "4k-xfs mm-selftests: outcome pass -> flaky (known: no news)" in shown
    assert any("split_huge_page_test /tmp/mm-fs" in s and "known: no news" in s for s in shown)
    # the same test failing, not judged flaky, is a difference again
    failed = copy.deepcopy(six)
    cell = next(c for c in failed["cells"] if c["page_size"] == "4k" and c["fs"] == "xfs")
    chk = next(c for c in cell["checks"] if c["name"] == "mm-selftests")
    chk["outcome"] = "fail"
    for t in chk["subtests"]:
        if t["outcome"] == "flaky":
            t["outcome"], t["flaky"] = "fail", False
    said = same_results.differences(default, failed)
    assert "4k-xfs mm-selftests: outcome pass -> fail" in said
    assert any("split_huge_page_test /tmp/mm-fs" in s for s in said)

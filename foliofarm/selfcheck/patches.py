"""The series `make bench` and `make faults` run: the example patches made
unique to each run, so that neither the artifact cache nor ccache can answer
for them and what they change is compiled for real."""

from __future__ import annotations

import time
from pathlib import Path

from foliofarm.paths import ROOT

EXAMPLES = ROOT / "examples" / "series"


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

"""The thpmaps cross-check (foliofarm/judge/thpmaps.py) on dumps of real guests:
exec-text's mapping as the farm reads it and as the tree's tools/mm/thpmaps
read it in the same guest at the same moment (tests/data/dumps/*.thpmaps.dump,
one per page size). Each way the two can part is shown to be caught: a folio
the farm misreads, a counter thpmaps gives otherwise, thpmaps failing, output
the farm cannot read."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from foliofarm.matrix import cell_of
from foliofarm.results import read
from foliofarm.report import tables
from foliofarm.judge import catalogue, checks, smaps
from foliofarm.results.schema import CheckResult

DUMPS = Path(__file__).resolve().parent / "data" / "dumps"
CELLS = {"4k": ("xfs", 16), "16k": ("ext4", 128), "64k": ("erofs", 32)}   # fs, contpte pages


def recorded(page: str) -> str:
    return (DUMPS / f"{page}-{CELLS[page][0]}-7.3.thpmaps.dump").read_text()


def judge(text: str, page: str) -> CheckResult:
    return checks.evaluate(catalogue.by_name()["thpmaps"], text, cell_of(page, CELLS[page][0], "7.3"), "7.3")


def rows(outcome: CheckResult) -> dict[str, dict]:
    return {r.counter: r.model_dump() for r in outcome.rows}


@pytest.mark.parametrize("page", list(CELLS))
def test_thpmaps_and_the_farm_agree_on_real_guests(page):
    o = judge(recorded(page), page)
    assert o.outcome == "pass", o.reason
    assert o.metrics["disagreements"] == 0
    by = rows(o)
    # 64K folios of exec text: 4096 kB of the 32MB file's mapping in each cell
    if page == "64k":
        # a 64K folio is a base page here: thpmaps has no counter for it
        assert by["base-page-64kB"]["farm_kb"] == 4096 and by["base-page-64kB"]["thpmaps_kb"] is None
        assert by["base-page-64kB"]["note"]
        assert o.metrics["explained_differences"] == 1
    else:
        assert by["file-thp-pte-aligned-64kB"] == {"counter": "file-thp-pte-aligned-64kB", "farm_kb": 4096,
                                                   "thpmaps_kb": 4096, "agrees": True, "note": ""}
    cont_kb = CELLS[page][1] * {"4k": 4, "16k": 16, "64k": 64}[page]
    real = by[f"PTE_CONT (probe) vs file-cont-pte-aligned-{cont_kb}kB"]
    # 4K: every 64K folio is one contpte block, inferred and real alike; else none
    assert real["farm_kb"] == real["thpmaps_kb"] == (4096 if page == "4k" else 0)
    assert o.metrics["thpmaps_seconds"] > 0


def folio_pfns(text: str) -> list[int]:
    """The PFNs of the first large folio of the dump's text mapping."""
    d = smaps.parse_dump(text)
    first = d.mappings["text"].pages[0]
    head, nr = smaps.folio_of(first.pfn, d.kpf)
    assert nr > 1
    return list(range(head, head + nr))


def set_flags(text: str, pfns: list[int], clear: int) -> str:
    """``text`` with ``clear`` taken out of the kpageflags of ``pfns`` (P and K records)."""
    want = set(pfns)

    def fix(m: re.Match) -> str:
        kind, rest = m.group(1), m.group(2).split()
        pfn_at, flags_at = (1, 2) if kind == "P" else (0, 1)
        if int(rest[pfn_at]) in want:
            rest[flags_at] = format(int(rest[flags_at], 16) & ~clear, "x")
        return f"{kind} {' '.join(rest)}"
    return re.sub(r"^(P|K) (.*)$", fix, text, flags=re.M)


def test_a_folio_the_farm_misreads_is_a_disagreement():
    """The farm reading one 64K folio as four base pages (its compound bits
    lost) while thpmaps still counts it: the check fails, naming the counter."""
    text = recorded("16k")
    bad = set_flags(text, folio_pfns(text), smaps.KPF_COMPOUND_HEAD | smaps.KPF_COMPOUND_TAIL)
    o = judge(bad, "16k")
    assert o.outcome == "fail"
    assert o.metrics["disagreements"] == 1
    r = rows(o)["file-thp-pte-aligned-64kB"]
    assert (r["farm_kb"], r["thpmaps_kb"], r["agrees"]) == (4096 - 64, 4096, False)
    assert "disagreements" in o.reason


def test_a_counter_thpmaps_gives_otherwise_is_a_disagreement():
    text = recorded("4k")
    bad = re.sub(r"^(X thpmaps file-thp-pte-unaligned-64kB:\s+)0 kB", r"\g<1>64 kB", text, count=0,
                 flags=re.M)
    assert bad != text
    o = judge(bad, "4k")
    assert o.outcome == "fail" and o.metrics["disagreements"] >= 1
    assert rows(o)["file-thp-pte-unaligned-64kB"]["thpmaps_kb"] == 64


def test_pte_cont_missing_where_thpmaps_infers_a_block_is_explained():
    """thpmaps infers contpte blocks from PFNs; the probe reads the bit. A block
    without PTE_CONT is a difference explained, not a disagreement (exec-text's
    pte_cont_pct is what judges the kernel for it)."""
    text = recorded("4k")
    pfns = set(folio_pfns(text))
    bad = re.sub(r"^P (\d+) (\d+) (\S+) pc ", lambda m: (
        f"P {m.group(1)} {m.group(2)} {m.group(3)} p " if int(m.group(2)) in pfns else m.group(0)),
        text, flags=re.M)
    o = judge(bad, "4k")
    assert o.outcome == "pass", o.reason
    r = rows(o)["PTE_CONT (probe) vs file-cont-pte-aligned-64kB"]
    assert (r["farm_kb"], r["thpmaps_kb"]) == (4096 - 64, 4096) and "PTE_CONT" in r["note"]


def test_thpmaps_failing_is_an_error_naming_the_cause():
    text = recorded("16k")
    text = re.sub(r"^X thpmaps .*\n", "", text, flags=re.M)
    text = text.replace("W thpmaps status=0", "X thpmaps Traceback (most recent call last):\n"
                        "X thpmaps ImportError: libblas.so.3: cannot open shared object file\n"
                        "X thpmaps During handling of the above exception, another exception occurred:\n"
                        "X thpmaps ImportError: Error importing numpy\nW thpmaps status=1")
    text = text.replace("W hook status=0", "W hook status=1")
    o = judge(text, "16k")
    assert o.outcome == "error"
    assert "thpmaps exited 1: ImportError: libblas.so.3" in o.reason


def test_output_the_farm_cannot_read_is_an_error():
    text = recorded("64k")
    start = smaps.parse_dump(text).mappings["text"].start
    # a line of a new format inside the mapping's block
    at = re.search(rf"^X thpmaps \d+: {start:016x}-.*\n", text, flags=re.M).end()
    o = judge(text[:at] + "X thpmaps file-thp-pte-aligned-64kB 12 pages\n" + text[at:], "64k")
    assert o.outcome == "error" and "cannot read" in o.reason
    # the mapping's VMA missing from thpmaps' output
    gone = re.sub(rf"^X thpmaps \d+: {start:016x}-", "X thpmaps 0000000001: 0000000000000000-", text,
                  flags=re.M)
    o = judge(gone, "64k")
    assert o.outcome == "error" and f"no VMA at {start:#x}" in o.reason
    # counters it must print, not printed
    cut = re.sub(r"^X thpmaps file-cont-pte-aligned-\d+kB:.*\n", "", text, flags=re.M)
    o = judge(cut, "64k")
    assert o.outcome == "error" and "printed no file-cont-pte-aligned-2048kB" in o.reason


def test_report_shows_each_cell_rows_with_the_reason_for_differences():
    doc = {"cells": [], "run_id": "r", "command": ["foliofarm", "run"], "complete": True,
           "started": "2026-11-26T00:00:00Z"}
    for page in CELLS:
        o = judge(recorded(page), page)
        doc["cells"].append({"id": f"{page}-{CELLS[page][0]}-7.3", "page_size": page, "fs": CELLS[page][0],
                             "kernel": "7.3", "checks": [o.written()]})
    blocks = tables.crosscheck_tables(read.typed(doc), "thpmaps")
    text = repr(blocks)
    assert "64k erofs 7.3: 0 disagreement(s), 1 difference(s) explained." in text
    assert "thpmaps counts large folios only" in text
    assert "file-thp-pte-aligned-64kB" in text

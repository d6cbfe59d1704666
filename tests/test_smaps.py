"""Dump parsing and figures: synthetic dumps for each rule, and dumps recorded from
real guests on each page size, replayed through the real analysis code."""

import json
from dataclasses import replace
from pathlib import Path

import pytest

from foliofarm.matrix import cell_of
from foliofarm.judge import smaps
from foliofarm.judge.smaps import KPF_COMPOUND_HEAD as H, KPF_COMPOUND_TAIL as T

DUMPS = Path(__file__).resolve().parent / "data" / "dumps"
ROOT = Path(__file__).resolve().parent.parent


def dump_text(page_size: int, start: int, npages: int, pages, extra=()) -> str:
    lines = ["# foliofarm dump v1",
             f"meta check=exec-text fs=xfs page_size={page_size} pmd_size=2097152",
             "figure touches=4 faults=4 read_ahead_kb=128 file_size=1",
             f"map text {start:#x} {npages}"]
    for idx, pfn, flags, probe in pages:
        lines.append(f"P {idx} {pfn} {flags:x} {probe} {pfn}")
    for pfn, flags in extra:
        lines.append(f"K {pfn} {flags:x}")
    lines.append("endmap text")
    return "\n".join(lines) + "\n"


def folio(idx0: int, pfn0: int, nr: int, probe: str = "p"):
    return [(idx0 + i, pfn0 + i, H if i == 0 else T, probe) for i in range(nr)] if nr > 1 \
        else [(idx0, pfn0, 0, probe)]


def figures(text: str, cont_pages: int = 16) -> smaps.Figures:
    d = smaps.parse_dump(text)
    return smaps.analyse(d.mappings["text"], d.kpf, replace(d.page, cont_pte_pages=cont_pages))


def test_aligned_64k_folios_on_4k_all_cont():
    pages = folio(0, 0x1000, 16, "pc") + folio(16, 0x2000, 16, "pc")
    f = figures(dump_text(4096, 0x400000, 64, pages))
    assert f.mapped_pages == 32
    assert f.categories == {"thp-aligned-64kB": 32, "cont-aligned-64kB": 32}
    assert f.folio_kb_hist == {64: 32}
    assert f.aligned_pct(64) == 100.0
    assert f.pte_cont_pct == 100.0


def test_unaligned_folio_is_not_counted_as_aligned():
    # the folio starts at page index 8: VA not aligned to 64K
    f = figures(dump_text(4096, 0x400000, 64, folio(8, 0x1000, 16)))
    assert f.categories == {"thp-unaligned-64kB": 16}
    assert f.aligned_pct(64) == 0.0


def test_partially_mapped_folio_needs_its_unmapped_tail_from_K_lines():
    pages = folio(0, 0x1000, 16)[:8]
    extra = [(0x1000 + i, T) for i in range(8, 16)] + [(0x1010, 0)]
    f = figures(dump_text(4096, 0x400000, 64, pages, extra))
    assert f.categories == {"thp-partial": 8}
    assert f.folio_kb_hist == {64: 8}


def test_base_pages_and_mixed_sizes():
    pages = [(0, 0x500, 0, "p"), (1, 0x777, 0, "p")] + folio(4, 0x1004, 4)
    f = figures(dump_text(4096, 0x400000, 16, pages))
    assert f.categories == {"base-page-4kB": 2, "thp-aligned-16kB": 4}
    assert f.folio_kb_hist == {4: 2, 16: 4}


def test_unknown_folio_when_head_is_missing_from_dump():
    pages = [(0, 0x1005, T, "p")]
    f = figures(dump_text(4096, 0x400000, 4, pages))
    assert f.unknown_folio_pages == 1


def test_probe_disagreement_is_counted():
    text = dump_text(4096, 0x400000, 4, folio(0, 0x1000, 1)).replace("P 0 4096 0 p 4096",
                                                                       "P 0 4096 0 p 4097")
    assert figures(text).probe_mismatches == 1


def test_64k_pages_cont_block_is_32_pages():
    # 2M folio (order 5) on 64K pages, VA 2M-aligned: one 2M contpte block
    pages = folio(0, 0x2000, 32, "pc")
    f = figures(dump_text(65536, 0x20000000, 32, pages), cont_pages=32)
    assert f.categories == {"thp-aligned-2048kB": 32, "cont-aligned-2048kB": 32}
    assert f.pte_cont_pct == 100.0


@pytest.mark.parametrize("bad,msg", [
    ("meta check=x\n", "page_size"),
    ("meta page_size=4096\nmap text 0x0 4\nP 0 1 0 p 1\n", "no endmap"),
    ("meta page_size=4096\nP 0 1 0 p 1\n", "outside a map"),
    ("meta page_size=4096\nmap text 0x0 4\nP zero 1 0 p 1\nendmap text\n", "line 3"),
    ("meta page_size=4096\nbogus\n", "unknown record"),
])
def test_malformed_dumps_are_rejected_with_the_line(bad, msg):
    with pytest.raises(smaps.DumpError, match=msg):
        smaps.parse_dump(bad)


def recorded():
    return sorted(DUMPS.glob("*.dump")) if DUMPS.is_dir() else []


def test_there_are_recorded_dumps():
    assert recorded(), "tests/data/dumps holds dumps from real guests"


@pytest.mark.parametrize("path", recorded(), ids=lambda p: p.stem)
def test_recorded_dumps_are_judged_as_recorded(path):
    """Dumps from real guests (tools/record_dump.py), replayed through the real
    parsing, figures and judging code: same outcome, same metrics."""
    from foliofarm.judge import catalogue, checks
    want = json.loads(path.with_suffix(".json").read_text())
    got = checks.evaluate(catalogue.by_name()[want["check"]], path.read_text(),
                          cell_of(want["page_size"], want["fs"], want["kernel"]), want["kernel"])
    assert (got.outcome, got.reason) == (want["outcome"], want["reason"])
    assert got.metrics == want["metrics"]
    assert [r.model_dump() for r in got.rows] == want.get("rows", [])


def test_smaps_check_cli_on_a_dump(tmp_path, capsys):
    import sys
    sys.path.insert(0, str(ROOT / "tools"))
    import smaps_check
    p = tmp_path / "d.dump"
    p.write_text(dump_text(4096, 0x400000, 64, folio(0, 0x1000, 16, "pc")))
    assert smaps_check.main(["--dump", str(p), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["mappings"]["text"]["aligned_pct"] == 100.0
    assert smaps_check.main(["--dump", str(tmp_path / "missing")]) == 1
    assert "smaps_check:" in capsys.readouterr().err


def test_a_dump_of_another_page_size_than_its_cells_is_an_error():
    """A real 4K dump judged as a 16K cell's (a guest booted with the wrong
    kernel, a dump mixed up between cells): never a verdict on the figures."""
    from foliofarm.judge import catalogue, checks
    text = (DUMPS / "4k-xfs-7.3.exec-text.dump").read_text()
    assert checks.evaluate(catalogue.by_name()["exec-text"], text, cell_of("4k", "xfs", "7.3"), "7.3").outcome == "pass"
    out = checks.evaluate(catalogue.by_name()["exec-text"], text, cell_of("16k", "xfs", "7.3"), "7.3")
    assert out.outcome == "error"
    assert "the dump is of a 4k page size, the cell 16k-xfs-7.3 of 16k" in out.reason


def test_a_dump_says_its_page_size_once_as_the_matrix_knows_it():
    for path in sorted(DUMPS.glob("*.dump")):
        d = smaps.parse_dump(path.read_text())
        assert d.page.name == path.name.split("-")[0], path.name

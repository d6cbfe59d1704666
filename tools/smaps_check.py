#!/usr/bin/env python3
"""smaps_check: figures from a foliofarm mapping dump.

Reads a dump written by a guest program (pagemap PFNs, kpageflags and the
page-table probe's PTE_CONT bit per mapped page) and prints, per mapping, the
folio-size distribution of the mapped pages in thpmaps' categories, the share
in naturally aligned folios and the share whose PTE has PTE_CONT.

    tools/smaps_check.py --dump results/latest/cells/4k-ext4-7.3/exec-text.dump
    tools/smaps_check.py --dump FILE --json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from foliofarm.judge import smaps  # noqa: E402


def figures_json(dump: smaps.Dump, folio_kb: int | None) -> dict:
    out: dict = {"meta": dump.meta, "figures": dump.figures, "mappings": {}}
    for label, m in dump.mappings.items():
        f = smaps.analyse(m, dump.kpf, dump.page)
        out["mappings"][label] = {
            "mapped_pages": f.mapped_pages,
            "folio_kb_hist": f.folio_kb_hist,
            "categories_pct": f.category_pct(),
            "aligned_pct": f.aligned_pct(folio_kb) if folio_kb else None,
            "pte_cont_pct": f.pte_cont_pct,
            "pmd_mapped_pct": f.pmd_mapped_pct,
            "probe_mismatches": f.probe_mismatches,
            "unknown_folio_pages": f.unknown_folio_pages,
        }
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="smaps_check", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dump", required=True, type=Path, help="a dump file written by a guest program")
    ap.add_argument("--folio-kb", type=int, default=64,
                    help="folio size whose natural alignment aligned_pct reports (default 64)")
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = ap.parse_args(argv)
    try:
        dump = smaps.parse_dump(args.dump.read_text())
        out = figures_json(dump, args.folio_kb)
    except (OSError, smaps.DumpError) as exc:
        print(f"smaps_check: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(" ".join(f"{k}={v}" for k, v in {**dump.meta, **dump.figures}.items()))
    for label, f in out["mappings"].items():
        print(f"\nmapping {label}: {f['mapped_pages']} mapped pages")
        for name in smaps.sort_categories(list(f["categories_pct"])):
            print(f"  {name:<24} {f['categories_pct'][name]:6.1f}%")
        print(f"  {'aligned-' + str(args.folio_kb) + 'kB folios':<24} {f['aligned_pct']:6.1f}%")
        print(f"  {'PTE_CONT (probe)':<24} {f['pte_cont_pct']:6.1f}%")
        print(f"  {'PMD-mapped (probe)':<24} {f['pmd_mapped_pct']:6.1f}%")
        if f["probe_mismatches"]:
            print(f"  probe and pagemap disagree on {f['probe_mismatches']} pages")
    return 0


if __name__ == "__main__":
    sys.exit(main())

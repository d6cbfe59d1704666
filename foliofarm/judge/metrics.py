"""Each check's figures from its dump (smaps, pagemap, kpageflags and the
probe's page-table walk, parsed by smaps.py): what the checks' expectations
and the comparison of base and series are made of. A cross-check (thpmaps)
also gives its rows."""

from __future__ import annotations

from typing import Any, Callable

from foliofarm.judge import printed, smaps, thpmaps


def mapping_metrics(dump: smaps.Dump, mapping: str, row: dict[str, Any] | None) -> dict[str, Any]:
    """Folio-size distribution, natural alignment and PTE_CONT of the check's mapping."""
    if mapping not in dump.mappings:
        raise smaps.DumpError(f"dump has no mapping {mapping!r}")
    f = smaps.analyse(dump.mappings[mapping], dump.kpf, dump.page)
    folio_kb = int(row.get("folio_kb", 64)) if row else 64
    return {
        "mapped_pages": f.mapped_pages,
        "folio_kb_hist": {str(k): v for k, v in f.folio_kb_hist.items()},
        "max_folio_kb": max(f.folio_kb_hist, default=0),
        "categories_pct": {k: f.category_pct()[k] for k in smaps.sort_categories(list(f.categories))},
        "folio_kb": folio_kb,
        "aligned_pct": f.aligned_pct(folio_kb),
        "pte_cont_pct": f.pte_cont_pct,
        "pmd_mapped_pct": f.pmd_mapped_pct,
        "probe_mismatches": f.probe_mismatches,
        "unknown_folio_pages": f.unknown_folio_pages,
    }


def trace_orders(dump: smaps.Dump, label: str | None = None) -> dict[str, int]:
    """Folio orders the page cache added (mm_filemap_add_to_page_cache), for the
    trace records of pass ``label`` or all of them."""
    orders: dict[str, int] = {}
    for ev in smaps.parse_trace([t for lab, t in dump.trace if label in (None, lab)]):
        if ev["event"] == "mm_filemap_add_to_page_cache" and "order" in ev:
            orders[ev["order"]] = orders.get(ev["order"], 0) + 1
    return dict(sorted(orders.items(), key=lambda kv: int(kv[0])))


def force_thp_metrics(dump: smaps.Dump, mapping: str, row: dict[str, Any] | None) -> dict[str, Any]:
    out = mapping_metrics(dump, mapping, row)
    brought = [n for _, n in dump.series.get("brought", [])]
    if not brought:
        raise smaps.DumpError("dump has no per-touch 'brought' records")
    out["touches"] = len(brought)
    out["brought_kb_per_touch"] = [n * dump.page.kb for n in brought]
    out["min_brought_kb"] = min(out["brought_kb_per_touch"])
    out["trace_add_orders"] = trace_orders(dump)
    return out


def anon_mthp_metrics(dump: smaps.Dump, mapping: str, row: dict[str, Any] | None) -> dict[str, Any]:
    out = mapping_metrics(dump, mapping, row)
    out["mthp_kb"] = int(dump.figures["mthp_kb"])
    out["anon_fault_alloc"] = int(dump.figures["anon_fault_alloc"])
    out["anon_fault_fallback"] = int(dump.figures["anon_fault_fallback"])
    return out


def exec_text_metrics(dump: smaps.Dump, mapping: str, row: dict[str, Any] | None) -> dict[str, Any]:
    out = mapping_metrics(dump, mapping, row)
    out.update(touches=int(dump.figures.get("touches", 0)), faults=int(dump.figures.get("faults", 0)),
               read_ahead_kb=int(dump.figures.get("read_ahead_kb", 0)),
               trace_add_orders=trace_orders(dump))
    return out


def thpmaps_metrics(dump: smaps.Dump, mapping: str, row: dict[str, Any] | None
                    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The cross-check's figures, and its rows (a field of their own, not figures)."""
    return thpmaps.metrics(dump)


def elf_text_metrics(dump: smaps.Dump, mapping: str, row: dict[str, Any] | None) -> dict[str, Any]:
    """exec-text's figures for a real executable's text, plus its p_align and the
    size of the folio under the first text page (the loader read() that one)."""
    out = mapping_metrics(dump, mapping, row)
    m = dump.mappings[mapping]
    first = min(m.pages, key=lambda p: p.index, default=None)
    folio = smaps.folio_of(first.pfn, dump.kpf) if first else None
    out.update(touches=int(dump.figures["touches"]), faults=int(dump.figures["faults"]),
               p_align=int(dump.figures["p_align"]),
               text_vaddr=dump.figures["text_vaddr"],
               first_folio_kb=folio[1] * dump.page.kb if folio else None)
    return out


def file_collapse_metrics(dump: smaps.Dump, mapping: str, row: dict[str, Any] | None) -> dict[str, Any]:
    """MADV_COLLAPSE's result, FilePmdMapped and the probe's PMD mappings, before
    and after the file is opened for write."""
    f = dump.figures
    out: dict[str, Any] = {
        "map_kb": int(f["map_bytes"]) // 1024,
        "collapse_errno": int(f["collapse_errno"]),
        "file_pmd_mapped_kb": int(f["file_pmd_mapped_kb"]),
        "write_opened": int(f["write_opened"]),
    }
    for label, key in (("collapsed", "pmd_mapped_pct"), ("after_write_open", "pmd_mapped_pct_after_write_open")):
        if label in dump.mappings:
            fig = smaps.analyse(dump.mappings[label], dump.kpf, dump.page)
            out[key] = fig.pmd_mapped_pct
            if label == "collapsed":
                out["folio_kb_hist"] = {str(k): v for k, v in fig.folio_kb_hist.items()}
                out["probe_mismatches"] = fig.probe_mismatches
    if out["write_opened"]:
        out["file_pmd_mapped_kb_after_write_open"] = int(f["file_pmd_mapped_kb_after_write_open"])
    return out


def mmap_miss_metrics(dump: smaps.Dump, mapping: str, row: dict[str, Any] | None) -> dict[str, Any]:
    """Touches that got readahead, per mapping, and the mmap_miss the tracepoints saw."""
    out: dict[str, Any] = {"touches": int(dump.figures["touches"]),
                           "read_ahead_kb": int(dump.figures.get("read_ahead_kb", 0))}
    labels = ("exec", "control", "balanced") if "balanced" in dump.series else ("exec", "control")
    for label in labels:
        series = dump.series.get(label)
        if not series or len(series) != out["touches"]:
            raise smaps.DumpError(f"dump has {len(series or [])} {label} touches, "
                                  f"expected {out['touches']}")
        with_ra = [i for i, resident in series if resident > 1]
        without = [i for i, resident in series if resident <= 1]
        out[f"{label}_ra_touches"] = len(with_ra)
        out[f"{label}_ra_pct"] = round(100.0 * len(with_ra) / len(series), 2)
        out[f"{label}_first_without_ra"] = without[0] if without else None
        out[f"{label}_last_with_ra"] = with_ra[-1] if with_ra else None
        # mmap_miss as the readahead tracepoints saw it (7.x; 6.12 lacks the field)
        events = smaps.parse_trace([t for lab, t in dump.trace if lab == label])
        misses = [int(e["mmap_miss"]) for e in events if "mmap_miss" in e]
        out[f"{label}_trace_events"] = len(events)
        out[f"{label}_max_mmap_miss"] = max(misses) if misses else None
    return out


SPARSE_PASSES = ("plain", "plain_nofa", "huge", "huge_nofa")


def sparse_read_metrics(dump: smaps.Dump, mapping: str, row: dict[str, Any] | None) -> dict[str, Any]:
    """Per pass: regions whose read brought in more than the faulting page (got
    readahead), the first that did not (the mmap_miss boundary), the memory each
    read brought in, and the folio orders added."""
    kb = dump.page.kb
    out: dict[str, Any] = {"region_kb": int(dump.figures["region_kb"]),
                           "read_ahead_kb": int(dump.figures.get("read_ahead_kb", 0)),
                           "fault_around_default": int(dump.figures["fault_around_default"])}
    for label in SPARSE_PASSES:
        series = dump.series.get(label)
        if not series:
            raise smaps.DumpError(f"dump has no {label!r} pass")
        ra = [r for _, r in series if r > 1]
        out[f"{label}_regions"] = len(series)
        out[f"{label}_ra_regions"] = len(ra)
        # None: every region got readahead (the throttle never engaged)
        out[f"{label}_first_without_ra"] = next((i for i, r in series if r <= 1), None)
        out[f"{label}_brought_kb_per_ra_region"] = round(sum(ra) * kb / len(ra)) if ra else 0
        out[f"{label}_fault_around_bytes"] = int(dump.figures[f"{label}_fault_around_bytes"])
        orders = trace_orders(dump, label)
        out[f"{label}_add_orders"] = orders
        out[f"{label}_max_order"] = max((int(o) for o in orders), default=None)
    return out


RA_WINDOW_KINDS = ("exec", "data")
RA_WINDOW_HINTS = ("none", "random", "sequential", "hugepage", "nohugepage")


def ra_window_metrics(dump: smaps.Dump, mapping: str, row: dict[str, Any] | None) -> dict[str, Any]:
    """Per mapping kind and hint: per fault, the pages it read and where the new
    run starts and ends relative to the fault; pages read outside the mapping;
    pages that arrived by asynchronous readahead; PTEs one warm read fault
    installed; the readahead calls the tracepoints saw. Then the promises as
    single figures: exec windows aligned to exec_folio_order() and inside the
    VMA, no async readahead for exec, the read-around size of data mappings."""
    page = dump.page
    out: dict[str, Any] = {"faults": int(dump.figures["faults"]), "seed": int(dump.figures["seed"]),
                           "read_ahead_kb": int(dump.figures["read_ahead_kb"])}
    ra_pages = out["read_ahead_kb"] * 1024 // dump.page.bytes
    exec_pages = max(1, 64 // page.kb)          # exec_folio_order(): 64K folios, or base pages
    for kind in RA_WINDOW_KINDS:
        for hint in RA_WINDOW_HINTS:
            label = f"{kind}-{hint}"
            recs = dump.records.get(label)
            if not recs:
                raise smaps.DumpError(f"dump has no {label!r} pass")
            faults = [r for r in recs if "fault" in r]
            if len(faults) != out["faults"]:
                raise smaps.DumpError(f"{label}: {len(faults)} faults recorded, expected {out['faults']}")
            extra = {k: v for r in recs if "fault" not in r for k, v in r.items()}
            key = label.replace("-", "_")
            new = [int(r["new"]) for r in faults]
            out[f"{key}_read_pages"] = new
            out[f"{key}_start"] = [int(r["first"]) if int(r["new"]) else None for r in faults]
            out[f"{key}_end"] = [int(r["last"]) if int(r["new"]) else None for r in faults]
            out[f"{key}_outside_vma"] = sum(int(r["outside"]) for r in faults)
            out[f"{key}_async_pages"] = int(extra.get("async", 0))
            out[f"{key}_mapped_per_fault"] = int(extra.get("mapped", -1))
            events = smaps.parse_trace([t for lab, t in dump.trace if lab == label])
            out[f"{key}_sync_ra"] = sum(e["event"] == "page_cache_sync_ra" for e in events)
            out[f"{key}_async_ra"] = sum(e["event"] == "page_cache_async_ra" for e in events)
            orders = [int(e["order"]) for e in events if e["event"] == "page_cache_ra_order" and "order" in e]
            out[f"{key}_max_ra_order"] = max(orders, default=None)
            drawn = faults[1:-1]       # the first and last fault sit on the VMA's edges
            out[f"{key}_drawn_read_pages_min"] = min(int(r["new"]) for r in drawn)
            out[f"{key}_drawn_read_pages_max"] = max(int(r["new"]) for r in drawn)
    # exec_folio_order() placement: the window starts on a folio boundary of the
    # file (or at the VMA's start), for every drawn fault
    vma_first = int(dump.figures["vma_first"])
    misaligned = 0
    for r in dump.records["exec-none"]:
        if "fault" in r and int(r["new"]) and r["fault"] not in ("0",):
            start = vma_first + int(r["page"]) + int(r["first"])
            if start % exec_pages and start != vma_first:
                misaligned += 1
    out["exec_window_misaligned"] = misaligned
    out["exec_folio_pages"] = exec_pages
    out["ra_pages"] = ra_pages
    # do_sync_mmap_readahead() clamps the exec window to the VMA; MADV_HUGEPAGE
    # (force-THP) and MADV_SEQUENTIAL (page_cache_sync_ra) take other paths first
    out["exec_outside_vma"] = sum(out[f"exec_{h}_outside_vma"] for h in ("none", "random", "nohugepage"))
    return out


def printed_metrics(dump: smaps.Dump, mapping: str, row: dict[str, Any] | None) -> dict[str, Any]:
    """A reproducer's run (tests/vmtests/repro-run.sh): its exit status and
    seconds, whether its output was cut, the figures it printed as
    ``key: number`` lines (judge/printed.py) and its last lines of output."""
    out: dict[str, Any] = {"exit_status": int(dump.figures["exit_status"]),
                           "repro_seconds": float(dump.figures["repro_seconds"])}
    for flag in ("output_cut", "timed_out"):        # over the output cap; killed at its time limit
        if flag in dump.figures:
            out[flag] = int(dump.figures[flag])
    lines = dump.tool_output.get("repro", [])
    for key, value in printed.figures("\n".join(lines)).items():
        out.setdefault(key, value)        # its own words never hide the farm's
    # its last lines, as the report shows them (text: shown, never judged)
    out["output_tail"] = "\n".join(line[:200] for line in lines[-printed.TAIL_LINES:])
    return out


# A check's figures from its dump (of the mapping its row names); a
# cross-check also gives its rows. A check's row in tests/vmtests/checks.toml
# names its function here (metrics = "..."); the catalogue refuses a name
# that is not one of these when it loads.
Measured = Any   # dict[str, Any] | tuple[dict[str, Any], list[dict[str, Any]]]
Metric = Callable[[smaps.Dump, str, dict[str, Any] | None], Measured]
METRICS: dict[str, Metric] = {
    "exec-text": exec_text_metrics,
    "mmap-miss": mmap_miss_metrics,
    "force-thp-ra": force_thp_metrics,
    "anon-mthp": anon_mthp_metrics,
    "sparse-read": sparse_read_metrics,
    "elf-text": elf_text_metrics,
    "file-collapse": file_collapse_metrics,
    "ra-window": ra_window_metrics,
    "thpmaps": thpmaps_metrics,
    "printed": printed_metrics,
}

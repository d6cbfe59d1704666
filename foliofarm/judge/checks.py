"""The check catalogue (tests/vmtests/checks.toml), expectations matching and
judging. The guest measures and dumps; this module turns a dump into metrics and
an outcome, using only the expectations in data."""

from __future__ import annotations

import dataclasses
import fnmatch
import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Callable

from foliofarm import datafiles, matrix
from foliofarm.judge import selftests, smaps, thpmaps
from foliofarm.errors import UsageError
from foliofarm.paths import VMTESTS



@dataclass(frozen=True)
class Check:
    name: str
    program: str
    args: tuple[str, ...]
    timeout: float
    description: str
    options: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)


@dataclass
class Outcome:
    name: str
    outcome: str
    reason: str = ""
    metrics: dict[str, Any] = field(default_factory=dict)
    subtests: list[dict[str, Any]] = field(default_factory=list)   # a selftests run's tests
    rows: list[dict[str, Any]] = field(default_factory=list)       # a cross-check's rows
    boot_failed: bool = False      # not measured: the kernel died or hung while booting

    def as_dict(self) -> dict[str, Any]:
        d = {"name": self.name, "outcome": self.outcome, "reason": self.reason,
             "metrics": self.metrics}
        if self.subtests:
            d["subtests"] = self.subtests
        if self.rows:
            d["rows"] = self.rows
        if self.boot_failed:
            d["boot_failed"] = True
        return d


@cache
def catalogue() -> dict[str, Check]:
    table = datafiles.load(VMTESTS / "checks.toml", datafiles.CHECKS_FILE)
    out = {}
    for name, row in table.items():
        row = dict(row)
        out[name] = Check(name=name, program=row.pop("program"), args=tuple(row.pop("args")),
                          timeout=float(row.pop("timeout")),
                          description=row.pop("description", ""), options=row)
    return out


def select(requested: str | None) -> list[Check]:
    cat = catalogue()
    if not requested:
        return list(cat.values())
    names = [n.strip() for n in requested.split(",") if n.strip()]
    bad = [n for n in names if n not in cat]
    if bad:
        raise UsageError(f"unknown check {', '.join(bad)}; valid: {', '.join(cat)}")
    return [cat[n] for n in names]


def own() -> str:
    """The farm's own checks of the kernel, as --checks takes them: every one
    but the kernel's selftests and the thpmaps cross-check (of the farm's own
    reading, not of the kernel); what the speed targets and the mutants measure."""
    return ",".join(n for n, c in catalogue().items()
                    if c.options.get("kind") not in ("selftests", "thpmaps"))


def with_categories(selected: list[Check], categories: str | None) -> list[Check]:
    """``selected`` with the selftests checks running ``categories`` (their
    run_vmtests.sh -t list, or "all") instead of the catalogue's."""
    if categories is None:
        return selected
    words = categories.split()
    if not words or not all(re.fullmatch(r"[a-z0-9_-]+", w) for w in words):
        raise UsageError(f"--mm-selftests {categories!r}: give run_vmtests.sh categories separated "
                         "by spaces (e.g. \"cow thp\"), or all")
    return [dataclasses.replace(c, options={**c.options, "categories": " ".join(words), "left_out": "-"})
            if c.options.get("kind") == "selftests" else c for c in selected]


@cache
def expectations(check: str) -> list[dict[str, Any]]:
    path = VMTESTS / "expectations" / f"{check}.toml"
    return datafiles.load(path, datafiles.ExpectationsFile).get("expect", [])


def expectation_for(check: str, kernel: str, page: str, fs: str) -> dict[str, Any] | None:
    """First row matching the kernel's "X.Y", the page size and the filesystem."""
    for row in expectations(check):
        if (fnmatch.fnmatch(kernel, row.get("kernel", "*"))
                and fnmatch.fnmatch(page, row.get("page_size", "*"))
                and fnmatch.fnmatch(fs, row.get("fs", "*"))):
            return row
    return None


def bounds_failures(metrics: dict[str, Any], row: dict[str, Any]) -> list[str]:
    """Every min_/max_ bound of ``row`` that ``metrics`` breaks, as readable text."""
    failures = []
    for key, bound in row.items():
        for prefix, ok, sign in (("min_", lambda v, b: v >= b, ">="), ("max_", lambda v, b: v <= b, "<=")):
            if key.startswith(prefix):
                metric = key[len(prefix):]
                if metric not in metrics:
                    failures.append(f"{metric} missing (wanted {sign} {bound})")
                elif metrics[metric] is None:    # e.g. readahead never stopped
                    failures.append(f"{metric} none (wanted {sign} {bound})")
                elif not ok(metrics[metric], bound):
                    failures.append(f"{metric} {metrics[metric]} (wanted {sign} {bound})")
    return failures


def judge(check: str, metrics: dict[str, Any], kernel: str, page: str, fs: str) -> Outcome:
    row = expectation_for(check, kernel, page, fs)
    if row is None:
        return Outcome(check, "skip", f"no expectation for {page}/{fs}/{kernel} in "
                       f"expectations/{check}.toml", metrics)
    failures = bounds_failures(metrics, row)
    xfail = row.get("xfail")
    if xfail and fnmatch.fnmatch(kernel, xfail.get("kernel", "*")):
        if failures:
            return Outcome(check, "xfail", f"{xfail['reason']} ({'; '.join(failures)})", metrics)
        return Outcome(check, "xpass", f"expected to fail ({xfail['reason']}) but passed", metrics)
    if failures:
        return Outcome(check, "fail", "; ".join(failures), metrics)
    return Outcome(check, "pass", "", metrics)


# -- metrics from dumps -----------------------------------------------------------

def mapping_metrics(dump: smaps.Dump, check: Check, row: dict[str, Any] | None) -> dict[str, Any]:
    """Folio-size distribution, natural alignment and PTE_CONT of the check's mapping."""
    page = next(p for p in matrix.page_sizes().values() if p.bytes == dump.page_size)
    label = check.options.get("mapping", "text")
    if label not in dump.mappings:
        raise smaps.DumpError(f"dump has no mapping {label!r}")
    f = smaps.analyse(dump.mappings[label], dump.kpf, dump.page_size, page.cont_pte_pages)
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


def force_thp_metrics(dump: smaps.Dump, check: Check, row: dict[str, Any] | None) -> dict[str, Any]:
    out = mapping_metrics(dump, check, row)
    brought = [n for _, n in dump.series.get("brought", [])]
    if not brought:
        raise smaps.DumpError("dump has no per-touch 'brought' records")
    out["touches"] = len(brought)
    out["brought_kb_per_touch"] = [n * dump.page_size // 1024 for n in brought]
    out["min_brought_kb"] = min(out["brought_kb_per_touch"])
    out["trace_add_orders"] = trace_orders(dump)
    return out


def anon_mthp_metrics(dump: smaps.Dump, check: Check, row: dict[str, Any] | None) -> dict[str, Any]:
    out = mapping_metrics(dump, check, row)
    out["mthp_kb"] = int(dump.figures["mthp_kb"])
    out["anon_fault_alloc"] = int(dump.figures["anon_fault_alloc"])
    out["anon_fault_fallback"] = int(dump.figures["anon_fault_fallback"])
    return out


def exec_text_metrics(dump: smaps.Dump, check: Check, row: dict[str, Any] | None) -> dict[str, Any]:
    out = mapping_metrics(dump, check, row)
    out.update(touches=int(dump.figures.get("touches", 0)), faults=int(dump.figures.get("faults", 0)),
               read_ahead_kb=int(dump.figures.get("read_ahead_kb", 0)),
               trace_add_orders=trace_orders(dump))
    return out


def thpmaps_metrics(dump: smaps.Dump, check: Check, row: dict[str, Any] | None
                    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The cross-check's figures, and its rows (a field of their own, not figures)."""
    page = next(p for p in matrix.page_sizes().values() if p.bytes == dump.page_size)
    return thpmaps.metrics(dump, page.cont_pte_pages)


def elf_text_metrics(dump: smaps.Dump, check: Check, row: dict[str, Any] | None) -> dict[str, Any]:
    """exec-text's figures for a real executable's text, plus its p_align and the
    size of the folio under the first text page (the loader read() that one)."""
    out = mapping_metrics(dump, check, row)
    m = dump.mappings[check.options.get("mapping", "text")]
    first = min(m.pages, key=lambda p: p.index, default=None)
    folio = smaps.folio_of(first.pfn, dump.kpf) if first else None
    out.update(touches=int(dump.figures["touches"]), faults=int(dump.figures["faults"]),
               p_align=int(dump.figures["p_align"]),
               text_vaddr=dump.figures["text_vaddr"],
               first_folio_kb=folio[1] * dump.page_size // 1024 if folio else None)
    return out


def file_collapse_metrics(dump: smaps.Dump, check: Check, row: dict[str, Any] | None) -> dict[str, Any]:
    """MADV_COLLAPSE's result, FilePmdMapped and the probe's PMD mappings, before
    and after the file is opened for write."""
    page = next(p for p in matrix.page_sizes().values() if p.bytes == dump.page_size)
    f = dump.figures
    out: dict[str, Any] = {
        "map_kb": int(f["map_bytes"]) // 1024,
        "collapse_errno": int(f["collapse_errno"]),
        "file_pmd_mapped_kb": int(f["file_pmd_mapped_kb"]),
        "write_opened": int(f["write_opened"]),
    }
    for label, key in (("collapsed", "pmd_mapped_pct"), ("after_write_open", "pmd_mapped_pct_after_write_open")):
        if label in dump.mappings:
            fig = smaps.analyse(dump.mappings[label], dump.kpf, dump.page_size, page.cont_pte_pages)
            out[key] = fig.pmd_mapped_pct
            if label == "collapsed":
                out["folio_kb_hist"] = {str(k): v for k, v in fig.folio_kb_hist.items()}
                out["probe_mismatches"] = fig.probe_mismatches
    if out["write_opened"]:
        out["file_pmd_mapped_kb_after_write_open"] = int(f["file_pmd_mapped_kb_after_write_open"])
    return out


def mmap_miss_metrics(dump: smaps.Dump, check: Check, row: dict[str, Any] | None) -> dict[str, Any]:
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


def sparse_read_metrics(dump: smaps.Dump, check: Check, row: dict[str, Any] | None) -> dict[str, Any]:
    """Per pass: regions whose read brought in more than the faulting page (got
    readahead), the first that did not (the mmap_miss boundary), the memory each
    read brought in, and the folio orders added."""
    kb = dump.page_size // 1024
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


def ra_window_metrics(dump: smaps.Dump, check: Check, row: dict[str, Any] | None) -> dict[str, Any]:
    """Per mapping kind and hint: per fault, the pages it read and where the new
    run starts and ends relative to the fault; pages read outside the mapping;
    pages that arrived by asynchronous readahead; PTEs one warm read fault
    installed; the readahead calls the tracepoints saw. Then the promises as
    single figures: exec windows aligned to exec_folio_order() and inside the
    VMA, no async readahead for exec, the read-around size of data mappings."""
    page = next(p for p in matrix.page_sizes().values() if p.bytes == dump.page_size)
    out: dict[str, Any] = {"faults": int(dump.figures["faults"]), "seed": int(dump.figures["seed"]),
                           "read_ahead_kb": int(dump.figures["read_ahead_kb"])}
    ra_pages = out["read_ahead_kb"] * 1024 // dump.page_size
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


# A check's figures from its dump; a cross-check also gives its rows.
Measured = Any   # dict[str, Any] | tuple[dict[str, Any], list[dict[str, Any]]]
METRICS: dict[str, Callable[[smaps.Dump, Check, dict[str, Any] | None], Measured]] = {
    "exec-text": exec_text_metrics,
    "mmap-miss": mmap_miss_metrics,
    "force-thp-ra": force_thp_metrics,
    "anon-mthp": anon_mthp_metrics,
    "sparse-read": sparse_read_metrics,
    "elf-text": elf_text_metrics,
    "file-collapse": file_collapse_metrics,
    "elf-text-2m": elf_text_metrics,
    "ra-window": ra_window_metrics,
    "thpmaps": thpmaps_metrics,
}


def evaluate(check: Check, dump_text: str, kernel: str, page: str, fs: str) -> Outcome:
    """Dump text -> metrics -> outcome. A dump that cannot be trusted is an error."""
    try:
        dump = smaps.parse_dump(dump_text)
        row = expectation_for(check.name, kernel, page, fs)
        measured = METRICS[check.name](dump, check, row)
        metrics, rows = measured if isinstance(measured, tuple) else (measured, [])
    except (smaps.DumpError, KeyError, StopIteration, ValueError, TypeError, ArithmeticError,
            IndexError) as exc:
        # a damaged dump (a figure that is not a number, a record cut short):
        # an error to measure again, never a verdict
        return Outcome(check.name, "error", f"unusable dump: {type(exc).__name__}: {exc}")
    if metrics.get("probe_mismatches"):
        return Outcome(check.name, "error", f"the probe and pagemap disagree on "
                       f"{metrics['probe_mismatches']} pages: measurement not trusted", metrics)
    if "mapped_pages" in metrics and metrics["mapped_pages"] == 0:
        return Outcome(check.name, "error", "nothing mapped: the guest program touched no page", metrics)
    outcome = judge(check.name, metrics, kernel, page, fs)
    outcome.rows = rows
    return outcome


def evaluate_tests(check: Check, m: dict[str, Any], kernel: str, page: str, fs: str) -> Outcome:
    """A selftests run (kind "ktap", or a crash with what it printed before):
    one subtest per test, known failures xfail, the counts bounded by the
    expectations' rows."""
    parsed = m.get("tests")
    if not isinstance(parsed, dict) or not isinstance(parsed.get("results"), list):
        return Outcome(check.name, "error", "the run's KTAP output was not parsed")
    outcome, reason, metrics, subs = selftests.judge_tests(
        check.name, parsed["results"], kernel, page, fs, bool(parsed.get("complete")))
    if outcome != "pass":
        return Outcome(check.name, outcome, reason, metrics, subs)
    judged = judge(check.name, metrics, kernel, page, fs)
    judged.subtests = subs
    return judged


def kernel_trouble(m: dict[str, Any]) -> str:
    """What the kernel reported while a measurement ran, as one line: new taint
    letters and the reports' first lines; "" when it reported nothing."""
    parts = []
    if m.get("taint"):
        parts.append(f"kernel tainted {m['taint']}")
    parts += m.get("splats", [])[:4]
    return "; ".join(parts)


def judge_measurement(check: Check, m: dict[str, Any], kernel: str, page: str, fs: str) -> Outcome:
    """The host's judgement of one measurement (guest/session.measure). A check
    during which the kernel tainted itself or printed a report fails, whatever
    its figures say, naming the taint and the report; one that hung or crashed
    the kernel fails too. An error of the farm stays an error."""
    kind = m["kind"]
    if kind == "dump":
        outcome = evaluate(check, m["dump"], kernel, page, fs)
    elif kind == "ktap":
        outcome = evaluate_tests(check, m, kernel, page, fs)
    elif kind == "crash":
        outcome = Outcome(check.name, "fail", f"kernel hung or crashed: {m['reason']}")
        if m.get("tests"):      # the tests that finished before it, and the one it ended in
            done = evaluate_tests(check, m, kernel, page, fs)
            outcome.metrics, outcome.subtests = done.metrics, done.subtests
    else:
        outcome = Outcome(check.name, kind, m["reason"])
    if m.get("seconds") is not None:
        outcome.metrics["guest_seconds"] = m["seconds"]
    if m.get("transfer_seconds") is not None:
        outcome.metrics["transfer_seconds"] = m["transfer_seconds"]
    trouble = kernel_trouble(m)
    if trouble and outcome.outcome != "error":
        reason = f"{trouble} (while {check.name} ran)"
        if outcome.reason and kind != "crash":
            reason += f"; also: {outcome.reason}"
        elif kind == "crash":
            # what the crash's own reason quotes already (a boot death's first report) once
            rest = "; ".join(p for p in trouble.split("; ") if p not in outcome.reason)
            reason = outcome.reason + (f"; {rest}" if rest else "")
        outcome = Outcome(check.name, "fail", reason, outcome.metrics, outcome.subtests, outcome.rows)
    outcome.boot_failed = bool(m.get("boot_failed"))
    return outcome

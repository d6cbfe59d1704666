"""The thpmaps cross-check: the farm's reading of a mapping against the tree's
own tools/mm/thpmaps run on the same mapping at the same moment (exec-text's
hook, tests/vmtests/thpmaps-run.sh; its output comes home in the dump as
"X thpmaps <line>" records).

Both read /proc/<pid>/pagemap and /proc/kpageflags; the farm also has the
probe's walk of the page table. Each thpmaps counter of the mapping's VMA is
set against the farm's category of the same meaning (judge/smaps.py names them
after thpmaps); where the two count different things by design, the row says
why and the difference is explained, not a disagreement."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from foliofarm.judge import smaps

VMA_LINE = re.compile(r"^\s*\d+: ([0-9a-f]+)-([0-9a-f]+) (\S{4}) ")
STAT_LINE = re.compile(r"^([a-z]+-[A-Za-z0-9-]+):\s+(\d+) kB")
COUNTER = re.compile(r"^(anon|file)-(thp-pte-aligned|thp-pte-unaligned|thp-pmd-aligned|"
                     r"cont-pte-aligned|cont-pmd-aligned)-(\d+)kB$|^(anon|file)-thp-pte-partial$")


class ThpmapsError(ValueError):
    """thpmaps did not run, or printed nothing for the mapping; the message says what it printed."""


@dataclass
class Row:
    counter: str        # thpmaps' name, or the farm's for what thpmaps does not count
    farm_kb: int | None
    thpmaps_kb: int | None
    note: str = ""      # why the two differ by design ("" where they must agree)

    @property
    def agrees(self) -> bool:
        return self.farm_kb == self.thpmaps_kb

    def as_dict(self) -> dict[str, Any]:
        return {"counter": self.counter, "farm_kb": self.farm_kb, "thpmaps_kb": self.thpmaps_kb,
                "agrees": self.agrees, "note": self.note}


def last_words(lines: list[str]) -> str:
    """What a failed run said: the first exception line of a traceback (the
    cause; what follows is Python handling it), else its last lines."""
    errors = [ln.strip() for ln in lines if re.match(r"^\w+(Error|Exception)\b.*:", ln)]
    return errors[0] if errors else (" | ".join(ln.strip() for ln in lines[-3:] if ln.strip())
                                     or "it printed nothing")


def vma_stats(lines: list[str], start: int, need: tuple[str, ...] = ()) -> dict[str, int]:
    """thpmaps' counters (kB) for the VMA that begins at ``start``, which must
    include ``need`` (run with --inc-empty, it prints every counter)."""
    found: dict[str, int] | None = None
    cur: dict[str, int] | None = None
    for line in lines:
        if m := VMA_LINE.match(line):
            cur = {} if int(m.group(1), 16) == start else None
            if cur is not None:
                found = cur
        elif cur is not None and (m := STAT_LINE.match(line)):
            cur[m.group(1)] = int(m.group(2))
        elif cur is not None and line.strip():
            raise ThpmapsError(f"thpmaps printed a line this farm cannot read: {line.strip()!r}")
    if found is None:
        raise ThpmapsError(f"thpmaps printed no VMA at {start:#x}: "
                           + (" | ".join(lines[-3:]) or "nothing"))
    missing = [c for c in need if c not in found]
    if missing:
        raise ThpmapsError(f"thpmaps printed no {', '.join(missing)} for the VMA at {start:#x}")
    return found


def farm_counter(counter: str, fig: smaps.Figures, cont_kb: int) -> tuple[int, str]:
    """The farm's figure (kB) for thpmaps' ``counter`` and, where they differ by
    design, why."""
    kb = fig.page.kb
    cats = fig.categories
    m = COUNTER.match(counter)
    if m is None:
        raise ThpmapsError(f"thpmaps printed a counter this farm does not know: {counter}")
    if (m.group(1) or m.group(4)) == "anon":
        # exec text of a file, mapped private and never written: no anonymous pages
        return 0, ""
    if m.group(4):
        return cats.get("thp-partial", 0) * kb, ""
    kind, size = m.group(2), int(m.group(3))
    if kind == "thp-pte-aligned":
        return cats.get(f"thp-aligned-{size}kB", 0) * kb, ""
    if kind == "thp-pte-unaligned":
        return cats.get(f"thp-unaligned-{size}kB", 0) * kb, ""
    if kind in ("thp-pmd-aligned", "cont-pmd-aligned"):
        # thpmaps: smaps' FilePmdMapped; the farm: the probe's PMD-level entries
        return fig.pmd_mapped_pages * kb, ""
    # cont-pte-aligned: blocks inferred from PFNs, as the farm infers them, less
    # what is PMD-mapped (thpmaps takes that from smaps)
    if size != cont_kb:
        raise ThpmapsError(f"thpmaps counted {size}kB blocks; the cell's contpte block is {cont_kb}kB")
    return max(0, cats.get(f"cont-aligned-{size}kB", 0) - fig.pmd_mapped_pages) * kb, ""


def compare(fig: smaps.Figures, stats: dict[str, int], cont_kb: int) -> list[Row]:
    """One row per thpmaps counter, then the farm's categories thpmaps does not
    count, then the probe's real PTE_CONT bit against thpmaps' inferred blocks."""
    kb = fig.page.kb
    rows = [Row(c, farm_counter(c, fig, cont_kb)[0], v) for c, v in stats.items()]
    for cat, pages in fig.categories.items():
        size = re.search(r"(\d+)kB$", cat)
        if cat.startswith("base-page"):
            rows.append(Row(cat, pages * kb, None, "thpmaps counts large folios only: base "
                                                   "pages are in its Rss, under no counter"))
        elif size and cat.startswith("thp-") and int(size.group(1)) == 2 * kb:
            rows.append(Row(cat, pages * kb, None, "thpmaps prints folio sizes of order 2 and up: "
                                                   "order-1 folios are under no counter"))
        elif cat == "unknown":
            rows.append(Row(cat, pages * kb, None))   # the farm could not tell their folio
    inferred = next((v for c, v in stats.items() if c == f"file-cont-pte-aligned-{cont_kb}kB"), None)
    if inferred is not None:
        real = fig.pte_cont_pages * kb
        note = ""
        if real < inferred:
            note = ("thpmaps infers a block from contiguous, aligned PFNs of one folio; the probe "
                    "reads the PTE_CONT bit: these blocks could be contpte-mapped but are not")
        rows.append(Row(f"PTE_CONT (probe) vs file-cont-pte-aligned-{cont_kb}kB", real, inferred, note))
    return rows


def metrics(dump: smaps.Dump) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The cross-check of the dump's "text" mapping: its figures (the number of
    disagreements, rows that differ with no reason by design; how long thpmaps
    ran) and its rows."""
    hook = (dump.records.get("hook") or [{}])[-1]
    run = (dump.records.get("thpmaps") or [{}])[-1]
    lines = dump.tool_output.get("thpmaps", [])
    if hook.get("status") != "0" or run.get("status") != "0":
        raise ThpmapsError(f"thpmaps exited {run.get('status', hook.get('status', '?'))}: "
                           + last_words(lines))
    m = dump.mappings["text"]
    fig = smaps.analyse(m, dump.kpf, dump.page)
    cont_kb = dump.page.cont_pte_pages * dump.page.kb
    need = ("file-thp-pte-partial", f"file-cont-pte-aligned-{cont_kb}kB")
    rows = compare(fig, vma_stats(lines, m.start, need), cont_kb)
    out: dict[str, Any] = {
        "disagreements": sum(1 for r in rows if not r.agrees and not r.note),
        "explained_differences": sum(1 for r in rows if not r.agrees and r.note),
        "mapped_pages": fig.mapped_pages,
        "folio_kb_hist": {str(k): v for k, v in fig.folio_kb_hist.items()},
        "probe_mismatches": fig.probe_mismatches,
    }
    if "seconds" in run:
        out["thpmaps_seconds"] = float(run["seconds"])
    return out, [r.as_dict() for r in rows]

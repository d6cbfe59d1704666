"""Analysis of guest mapping dumps: folio orders from /proc/self/pagemap +
/proc/kpageflags, natural alignment, and PTE_CONT from the page-table probe.

Pure functions over the dump text, so recorded dumps replay on any host. Category
names follow tools/mm/thpmaps (without its anon-/file- prefix, as in the seeds'
tables): base-page-<K>kB, thp-aligned-<N>kB, thp-unaligned-<N>kB, thp-partial,
thp-pmd-aligned-<N>kB, and cont-aligned-<C>kB for blocks that look contpte-mappable
from the folio data. thpmaps infers "cont" blocks; the probe reads the real bit,
reported as pte_cont_pct."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from foliofarm import matrix

KPF_COMPOUND_HEAD = 1 << 15
KPF_COMPOUND_TAIL = 1 << 16
KPF_THP = 1 << 22
MAX_FOLIO_PAGES = 1 << 13


class DumpError(ValueError):
    """The dump is malformed; the message says where."""


@dataclass
class Page:
    index: int         # page index within the mapping
    pfn: int
    flags: int         # kpageflags
    probe: str         # "-" not present in the probe walk, else p[c][m]
    probe_pfn: int


@dataclass
class Mapping:
    label: str
    start: int
    npages: int
    pages: list[Page] = field(default_factory=list)


@dataclass
class Dump:
    meta: dict[str, str]
    figures: dict[str, str]
    mappings: dict[str, Mapping]
    kpf: dict[int, int]            # pfn -> kpageflags, for mapped pages and folio ends
    series: dict[str, list[tuple[int, int]]] = field(default_factory=dict)  # label -> (i, value)
    trace: list[tuple[str, str]] = field(default_factory=list)  # (label, line as the kernel printed it)
    records: dict[str, list[dict[str, str]]] = field(default_factory=dict)  # "W label k=v ..." lines
    tool_output: dict[str, list[str]] = field(default_factory=dict)  # "X tool line": a tool's output

    @property
    def page(self) -> matrix.PageSize:
        """The guest's page size, as its meta line says it (parse_dump knows it is one)."""
        return matrix.page_of(int(self.meta["page_size"]))



def _kv(words: list[str], lineno: int) -> dict[str, str]:
    out = {}
    for w in words:
        if "=" not in w:
            raise DumpError(f"line {lineno}: expected key=value, got {w!r}")
        k, v = w.split("=", 1)
        out[k] = v
    return out


def parse_dump(text: str) -> Dump:
    meta: dict[str, str] = {}
    figures: dict[str, str] = {}
    mappings: dict[str, Mapping] = {}
    kpf: dict[int, int] = {}
    series: dict[str, list[tuple[int, int]]] = {}
    trace: list[tuple[str, str]] = []
    records: dict[str, list[dict[str, str]]] = {}
    tool_output: dict[str, list[str]] = {}
    cur: Mapping | None = None
    for n, line in enumerate(text.splitlines(), 1):
        w = line.split()
        if not w or w[0].startswith("#"):
            continue
        if w[0] == "T":
            if len(w) < 3:
                raise DumpError(f"line {n}: trace record without label and text")
            trace.append((w[1], line.split(None, 2)[2]))
            continue
        if w[0] == "X":     # a tool's line as it printed it, spaces kept
            if len(w) < 2:
                raise DumpError(f"line {n}: tool output without the tool's name")
            rest = line.split(None, 1)[1]
            tool_output.setdefault(w[1], []).append(rest[len(w[1]) + 1:])
            continue
        try:
            if w[0] == "meta":
                meta.update(_kv(w[1:], n))
            elif w[0] == "figure":
                figures.update(_kv(w[1:], n))
            elif w[0] == "map":
                cur = Mapping(w[1], int(w[2], 16), int(w[3]))
                mappings[cur.label] = cur
            elif w[0] == "endmap":
                cur = None
            elif w[0] == "P":
                if cur is None:
                    raise DumpError(f"line {n}: page line outside a map")
                page = Page(int(w[1]), int(w[2]), int(w[3], 16), w[4], int(w[5]))
                cur.pages.append(page)
                kpf[page.pfn] = page.flags
            elif w[0] == "K":
                kpf[int(w[1])] = int(w[2], 16)
            elif w[0] == "R":
                series.setdefault(w[1], []).append((int(w[2]), int(w[3])))
            elif w[0] == "W":
                records.setdefault(w[1], []).append(_kv(w[2:], n))
            else:
                raise DumpError(f"line {n}: unknown record {w[0]!r}")
        except (IndexError, ValueError) as exc:
            if isinstance(exc, DumpError):
                raise
            raise DumpError(f"line {n}: malformed {line!r}: {exc}") from exc
    _whole(meta, cur)
    return Dump(meta, figures, mappings, kpf, series, trace, records, tool_output)


def _whole(meta: dict[str, str], cur: Mapping | None) -> None:
    """A dump of the farm's, not cut short: a page size it knows, every map ended."""
    if "page_size" not in meta:
        raise DumpError("no meta line with page_size: not a foliofarm dump")
    sizes = sorted(p.bytes for p in matrix.page_sizes().values())
    if not meta["page_size"].isdigit() or int(meta["page_size"]) not in sizes:
        raise DumpError(f"meta page_size {meta['page_size']!r} is not a page size "
                        f"({', '.join(map(str, sizes))})")
    if cur is not None:
        raise DumpError(f"map {cur.label!r} has no endmap: the dump was cut short")


def folio_of(pfn: int, kpf: dict[int, int],
             memo: dict[int, tuple[int, int] | None] | None = None) -> tuple[int, int] | None:
    """(head pfn, number of pages) of ``pfn``'s folio, or None if the dump lacks
    the pages needed to tell. ``memo``, kept by a caller that asks about many
    pages of one dump, remembers each folio for all its pages: a PMD folio's
    512 pages then cost one walk, not 512."""
    if memo is not None and pfn in memo:
        return memo[pfn]
    flags = kpf.get(pfn)
    if flags is None:
        return None
    if not flags & (KPF_COMPOUND_HEAD | KPF_COMPOUND_TAIL):
        return pfn, 1
    head = pfn
    while kpf.get(head, 0) & KPF_COMPOUND_TAIL:
        head -= 1
        if pfn - head > MAX_FOLIO_PAGES or head not in kpf:
            return None
    if not kpf[head] & KPF_COMPOUND_HEAD:
        return None
    nr = 1
    while kpf.get(head + nr, 0) & KPF_COMPOUND_TAIL:
        nr += 1
    if memo is not None:
        for q in range(head, min(head + nr, head + MAX_FOLIO_PAGES + 1)):
            memo[q] = (head, nr)
    return head, nr


@dataclass
class Figures:
    page: matrix.PageSize
    mapped_pages: int
    categories: dict[str, int]          # category -> mapped pages
    folio_kb_hist: dict[int, int]       # folio size in kB -> mapped pages
    aligned_pages_by_kb: dict[int, int]  # folio kB -> mapped pages in naturally aligned folios
    pte_cont_pages: int
    pmd_mapped_pages: int
    probe_mismatches: int
    unknown_folio_pages: int

    def pct(self, pages: int) -> float:
        return round(100.0 * pages / self.mapped_pages, 2) if self.mapped_pages else 0.0

    def aligned_pct(self, folio_kb: int) -> float:
        return self.pct(self.aligned_pages_by_kb.get(folio_kb, 0))

    @property
    def pte_cont_pct(self) -> float:
        return self.pct(self.pte_cont_pages)

    @property
    def pmd_mapped_pct(self) -> float:
        return self.pct(self.pmd_mapped_pages)

    def category_pct(self) -> dict[str, float]:
        return {k: self.pct(v) for k, v in self.categories.items()}


def analyse(m: Mapping, kpf: dict[int, int], page: matrix.PageSize) -> Figures:
    """The mapping's folios (sizes, natural alignment, how each is mapped) on
    a guest of page size ``page``."""
    page_size, cont_pte_pages, kb = page.bytes, page.cont_pte_pages, page.kb
    cats: Counter[str] = Counter()
    hist: Counter[int] = Counter()
    aligned: Counter[int] = Counter()
    by_folio: dict[tuple[int, int], list[Page]] = defaultdict(list)
    unknown = mismatches = cont = pmd = 0
    memo: dict[int, tuple[int, int] | None] = {}
    for p in m.pages:
        if p.probe == "-" or p.probe_pfn != p.pfn:
            mismatches += 1
        if "c" in p.probe:
            cont += 1
        if "m" in p.probe:
            pmd += 1
        f = folio_of(p.pfn, kpf, memo)
        if f is None:
            unknown += 1
            cats["unknown"] += 1
            continue
        by_folio[f].append(p)

    for (head, nr), pages in by_folio.items():
        size_kb = nr * kb
        hist[size_kb] += len(pages)
        if nr == 1:
            cats[f"base-page-{kb}kB"] += 1
            aligned[size_kb] += 1
            continue
        # One mapping of the whole folio: every page at the same (index - pfn) offset.
        offsets = {p.index - (p.pfn - head) for p in pages}
        if len(pages) < nr or len(offsets) != 1:
            cats["thp-partial"] += len(pages)
            continue
        head_index = offsets.pop()
        va = m.start + head_index * page_size
        if all("m" in p.probe for p in pages):
            cats[f"thp-pmd-aligned-{size_kb}kB"] += nr
        elif va % (nr * page_size) == 0:
            cats[f"thp-aligned-{size_kb}kB"] += nr
            aligned[size_kb] += nr
        else:
            cats[f"thp-unaligned-{size_kb}kB"] += nr

    inferred = inferred_contpte(m, kpf, page_size, cont_pte_pages, memo)
    cont_kb = cont_pte_pages * kb
    if inferred:
        cats[f"cont-aligned-{cont_kb}kB"] = inferred
    return Figures(page, len(m.pages), dict(cats), dict(sorted(hist.items())),
                   dict(aligned), cont, pmd, mismatches, unknown)



def inferred_contpte(m: Mapping, kpf: dict[int, int], page_size: int, block: int,
                     memo: dict[int, tuple[int, int] | None]) -> int:
    """Pages in thpmaps-style inferred contpte blocks: ``block`` pages, VA- and
    PA-aligned to the block, all mapped, physically contiguous and inside one folio."""
    by_index = {p.index: p for p in m.pages}
    first = -(-(m.start // page_size) // block) * block - m.start // page_size
    inferred = 0
    for i in range(max(0, first), m.npages - block + 1, block):
        p0 = by_index.get(i)
        if p0 is None or p0.pfn % block:
            continue
        f0 = folio_of(p0.pfn, kpf, memo)
        if f0 is None:
            continue
        ok = all((q := by_index.get(i + j)) is not None and q.pfn == p0.pfn + j
                 and folio_of(q.pfn, kpf, memo) == f0 for j in range(block))
        if ok:
            inferred += block
    return inferred


def sort_categories(names: list[str]) -> list[str]:
    """Order rows like the seeds' tables: base pages, aligned by size, unaligned,
    partial, pmd, then cont rows."""
    def key(name: str) -> tuple[int, int, str]:
        m = re.search(r"(\d+)kB$", name)
        size = int(m.group(1)) if m else 0
        order = ["base-page", "thp-aligned", "thp-unaligned", "thp-partial", "thp-pmd-aligned",
                 "cont-aligned", "unknown"]
        group = next((i for i, g in enumerate(order) if name.startswith(g)), len(order))
        return group, size, name
    return sorted(names, key=key)


TRACE_FIELD = re.compile(r"\b(\w+)=(-?\w+)")
TRACE_EVENT = re.compile(r"\s(\w+):\s")


def parse_trace(lines: list[str]) -> list[dict[str, str]]:
    """Tracepoint lines -> [{"event": name, field: value, ...}]."""
    out = []
    for line in lines:
        m = TRACE_EVENT.search(line)
        if not m:
            continue
        ev = {"event": m.group(1)}
        ev.update(TRACE_FIELD.findall(line[m.end():]))
        out.append(ev)
    return out

"""The terminal tables of a run: cells x checks with key figures, and the
verdicts of a two-sided run with every figure that changed."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

# Figures shown in the cells table, per check.
SUMMARY = {
    "exec-text": (("aligned_pct", "aligned {}%"), ("pte_cont_pct", "cont {}%"),
                  ("folio_kb_hist", "{}")),
    "mmap-miss": (("exec_ra_touches", "exec {}"), ("control_ra_touches", "ctrl {}")),
    "force-thp-ra": (("folio_kb_hist", "{}"), ("pte_cont_pct", "cont {}%"),
                     ("pmd_mapped_pct", "pmd {}%")),
    "anon-mthp": (("folio_kb_hist", "{}"), ("pte_cont_pct", "cont {}%")),
    "elf-text": (("aligned_pct", "aligned {}%"), ("pte_cont_pct", "cont {}%"),
                 ("first_folio_kb", "first {}K")),
    "elf-text-2m": (("aligned_pct", "aligned {}%"), ("pte_cont_pct", "cont {}%"),
                    ("first_folio_kb", "first {}K")),
    "file-collapse": (("file_pmd_mapped_kb", "pmd {}K"),
                      ("file_pmd_mapped_kb_after_write_open", "after write-open {}K"),
                      ("collapse_errno", "errno {}")),
    "ra-window": (("exec_none_drawn_read_pages_max", "exec {}p"), ("data_none_drawn_read_pages_max", "data {}p"),
                  ("data_none_mapped_per_fault", "mapped {}"), ("exec_outside_vma", "outside {}")),
    "sparse-read": (("plain_first_without_ra", "stop@{}"), ("huge_first_without_ra", "huge stop@{}"),
                    ("huge_max_order", "huge order {}")),
}


OUTCOME_COLOUR = {"pass": "green", "fail": "red", "error": "red", "xfail": "yellow",
                  "xpass": "magenta", "skip": "dim"}
VERDICT_COLOUR = {"pass": "green", "regression": "bold red", "build-broken": "bold red",
                  "changed": "yellow", "fixed": "cyan", "fail": "red", "xfail": "yellow",
                  "error": "red", "skip": "dim", "incomplete": "red"}


def short(v: Any) -> str:
    if isinstance(v, dict):   # folio size histogram: "64K:100%"
        total = sum(v.values()) or 1
        return ",".join(f"{k}K:{100 * n // total}%" for k, n in v.items())
    return str(v)


def print_table(doc: dict[str, Any], names: list[str]) -> None:
    names = [*names, "console"]
    table = Table(title=f"foliofarm {doc['run_id']}")
    table.add_column("cell", no_wrap=True)
    for n in names:
        table.add_column(n)
    for cell in doc["cells"]:
        row = [cell["id"]]
        by_name = {c["name"]: c for c in cell["checks"]}
        for n in names:
            c = by_name.get(n)
            if c is None:
                row.append("-")
                continue
            figs = " ".join(fmt.format(short(c["metrics"][k])) for k, fmt in SUMMARY.get(n, ())
                            if k in c["metrics"])
            row.append(f"[{OUTCOME_COLOUR.get(c['outcome'], 'white')}]{c['outcome']}[/] {figs}".strip())
        table.add_row(*row)
    Console().print(table)


def changed_text(r: dict[str, Any], limit: int = 6) -> str:
    moved = r.get("changed") or []
    parts = [f"{'!' if f['regression'] else ''}{f['metric']} {f['base']}->{f['series']}"
             for f in moved[:limit]]
    if len(moved) > limit:
        parts.append(f"... {len(moved) - limit} more")
    return ", ".join(parts)


def print_verdicts(doc: dict[str, Any]) -> None:
    sides = doc["sides"]
    table = Table(title=f"{sides['base']['kernel']} -> {sides['series']['kernel']}: verdicts "
                        "(! marks a figure that moved the wrong way)")
    for col in ("cell", "check", "verdict", "figures that moved (base -> series)"):
        table.add_column(col, no_wrap=col != "figures that moved (base -> series)")
    for r in doc.get("verdicts", []):
        detail = changed_text(r) or ("same" if r["verdict"] == "pass" else r["series_reason"][:120])
        table.add_row(f"{r['page_size']}-{r['fs']}", r["check"],
                      f"[{VERDICT_COLOUR.get(r['verdict'], 'white')}]{r['verdict']}[/]", detail)
    Console().print(table)

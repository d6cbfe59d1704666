"""`foliofarm list` (the matrix and the checks) and `foliofarm figures` (every
figure judged base against series)."""

from __future__ import annotations

from typing import Any

from foliofarm import matrix
from foliofarm.intake import source
from foliofarm.judge import catalogue


def add_parser(sub: Any, d: dict[str, Any]) -> None:
    sub.add_parser("list", help="list page sizes, filesystems, kernels, variants and checks"
                   ).set_defaults(func=lambda args, argv: cmd_list())
    sub.add_parser("figures", help="the figures judged base against series, as a Markdown table"
                   ).set_defaults(func=lambda args, argv: print(figures_table(), end="") or 0)


def cmd_list() -> int:
    print("page sizes: ", ", ".join(matrix.page_sizes()))
    print("filesystems:", ", ".join(matrix.filesystems()))
    print("kernels:    ", ", ".join(source.valid_specs()))
    print("variants:   ", ", ".join(matrix.variants()))
    print("checks:")
    for c in catalogue.by_name().values():
        print(f"  {c.name:<14} {c.description}")
    return 0


def figures_table() -> str:
    """Every declared figure of every check: how a move is judged, and the code it guards."""
    from foliofarm.judge import figures
    rows = ["| check | figure | a move is wrong when | guards |", "|---|---|---|---|"]
    for c in catalogue.by_name():
        for s in figures.specs(c):
            how = {"higher": f"it falls by more than {s.tolerance:g}",
                   "lower": f"it rises by more than {s.tolerance:g}",
                   "exact": "it moves at all" if not s.tolerance else f"it moves by more than {s.tolerance:g}"
                   }[s.better]
            rows.append(f"| `{c}` | `{s.pattern}` | {how} | {s.guards} |")
    rows += ["", "Shown beside the verdicts, never judged (timing, what the guest program was "
             "asked to do, counts over parts judged one by one):", "",
             "| check | figure | kind | why |", "|---|---|---|---|"]
    for name, kind in figures.COMMON_KINDS.items():
        rows.append(f"| every check | `{name}` | {kind} | "
                    + ("how long the guest took, under TCG: the host's load, not the kernel"
                       if kind == "timing" else "what the guest program was asked to do, or what the farm derives from the page size") + " |")
    rows.append("| every check | `*_seconds` | timing | a time, whoever reports it |")
    for c in catalogue.by_name():
        for pattern, kind, why in figures.declared(c):
            rows.append(f"| `{c}` | `{pattern}` | {kind} | {why} |")
    return "\n".join(rows) + "\n"

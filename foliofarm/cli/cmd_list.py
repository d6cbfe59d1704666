"""`foliofarm list` (the matrix and the checks) and `foliofarm figures` (every
figure judged base against series)."""

from __future__ import annotations

from typing import Any

from foliofarm import matrix
from foliofarm.shown import terminal
from foliofarm.intake import source
from foliofarm.judge import catalogue


def add_parser(sub: Any, d: dict[str, Any]) -> None:
    sub.add_parser("list", help="list page sizes, filesystems, kernels, variants and checks"
                   ).set_defaults(func=lambda args, argv: cmd_list())
    sub.add_parser("figures", help="the figures judged base against series, as a Markdown table"
                   ).set_defaults(func=lambda args, argv: print(figures_table(), end="") or 0)
    fl = sub.add_parser("flaky", help="the results each kernel in the cache passed in some boots and "
                        "failed in others, with their counts and when first and last seen")
    fl.add_argument("--page-size", help="only this page size (4k, 16k, 64k)")
    fl.add_argument("--kernel", help="only kernels whose label starts with this (7.3, 7.3+series)")
    fl.add_argument("--toml", action="store_true", help="print each as a known row for "
                    "tests/vmtests/expectations/<check>.toml, its reason to write")
    fl.set_defaults(func=lambda args, argv: cmd_flaky(args))


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


def cmd_flaky(args: Any) -> int:
    """Every kernel's measured flaky results (measure/history.py), per kernel
    and page size, newest kernel first."""
    from foliofarm.measure import history
    from foliofarm.paths import cache_dir
    shown = 0
    for path, doc in history.histories(cache_dir()):
        rows = [r for r in history.flaky_rows(doc)
                if (not args.page_size or r["page_size"] == args.page_size)
                and (not args.kernel or str(r["kernel"]).startswith(args.kernel))]
        if not rows:
            continue
        boots = max((c.get("boots", 0) for c in doc["cells"].values()), default=0)
        print_(f"{doc.get('kernel')} {doc.get('page_size')}  ({doc.get('artifacts')}; up to {boots} "
              f"boots per cell, {len(doc.get('runs', []))} runs; {path.name})")
        for r in rows:
            if args.toml:
                check, _, rest = r["result"].partition(": ")
                test, _, inner = rest.partition(": ")
                fs = r["fs"]
                print_(f"# {check}.toml: failed {r['failed']} of {r['passed'] + r['failed']} boots "
                      f"(first seen {r['first'][:10]}, last failed {(r['last_failed'] or '-')[:10]})")
                print_(f'[[known]]\nkernel = "{doc.get("kernel_xy", "*")}"\npage_size = "{r["page_size"]}"\n'
                      f'fs = "{fs}"\ntest = "{test}"' + (f'\ninner = "{inner}"' if inner else "")
                      + '\nflaky = true\nreason = "WHAT IT PRINTS WHEN IT FAILS, AND WHY"\n')
            else:
                print_(f"  {r['fs']:<6} {r['result']}: failed {r['failed']} of "
                      f"{r['passed'] + r['failed']} boots, first seen {r['first'][:16]}, last "
                      f"{r['last'][:16]}, last failed {(r['last_failed'] or '-')[:16]}")
            shown += 1
    if not shown:
        print("no flaky result measured yet: each boot of a kernel adds to its history "
              "(`foliofarm run --noise` boots each kernel twice)")
    return 0


def print_(text: str) -> None:
    """A line of what guests reported (a test's name from KTAP): its escapes shown."""
    print(terminal(text))

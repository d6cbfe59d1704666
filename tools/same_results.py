#!/usr/bin/env python3
"""Do two runs of the same kernel say the same thing? Compares two results.json
cell by cell and check by check: every outcome, every behaviour figure (timing
figures are left out: they are the host's, not the kernel's), every selftest's
outcome and count of results. A figure that differs is shown with the range
the base's clean boots gave it where the second document kept one (its noise),
so a move inside the noise is told apart from a change in behaviour.

    tools/same_results.py BEFORE/results.json AFTER/results.json
    tools/same_results.py --across-fs RUN/results.json

Exit 0 when every outcome and figure is the same (or moved within the noise
the documents recorded), 1 otherwise. Used to show that a change of the farm's
code (a refactoring) changed nothing it measures or judges.

With --across-fs one run's cells are compared with each other: for each check
and page size, every filesystem's cell against the first's. A check whose
outcome, figures and tests are the same on ext4, XFS and EROFS in every page
size is one the filesystem did not change (measured, not assumed: a part that
could run once per page size). Exit 0; it lists those first, then the others
with what differs."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from foliofarm.results import read                    # noqa: E402
from foliofarm.judge import compare, figures   # noqa: E402
from foliofarm.results.schema import Subtest  # noqa: E402


def table(doc: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, Any]]:
    """(page size, fs, check) -> what a reader is told: outcome, behaviour
    figures, each test's outcome and count of results."""
    out = {}
    for cell in doc["cells"]:
        for c in cell["checks"]:
            figs = {k: v for k, v in figures.flatten(c["metrics"], c["name"]).items()
                    if figures.kind_of(c["name"], k) == "behaviour"}
            tests = {t["name"]: (t["outcome"], compare.results_of(Subtest.model_validate(t)), t.get("flaky", False))
                     for t in c.get("subtests", [])}
            out[(cell["page_size"], cell["fs"], c["name"])] = {"outcome": c["outcome"], "figures": figs,
                                                               "tests": tests}
    return out


def known(x: tuple | None, y: tuple | None) -> bool:
    """A test's outcome that moves between clean boots by what the farm knows
    of it (judge/compare.py judges it no news): a known failure that passed in
    one (xfail, xpass), a known flaky test passing in one and failing the
    known way in the other, a test the farm judged `flaky` (it failed where
    the kernel's history has it fail in some boots) passing in the other;
    with the same count of results."""
    if x is None or y is None or x[1] != y[1]:
        return False
    outcomes = {x[0], y[0]}
    return outcomes <= {"xfail", "xpass"} or (
        (x[2] or y[2] or "flaky" in outcomes) and outcomes <= {"pass", "xfail", "flaky"})


def known_outcome(x: str, y: str) -> bool:
    """A check's outcome that moves by what the farm knows: passing in one run
    and `flaky` in the other (only tests known or measured flaky failed)."""
    return {x, y} == {"pass", "flaky"}


def differences(a: dict[str, Any], b: dict[str, Any], shown: list[str] | None = None) -> list[str]:
    """What differs; ``shown`` gets the moves the farm knows as no news."""
    ta, tb = table(a), table(b)
    noise = {**(a.get("noise") or {}), **(b.get("noise") or {})}
    out = []
    for key in sorted(set(ta) | set(tb)):
        where = "-".join(key[:2]) + f" {key[2]}"
        if key not in ta or key not in tb:
            out.append(f"{where}: only in {'the second' if key not in ta else 'the first'}")
            continue
        within = noise.get(f"{key[0]}-{key[1]}", {}).get(key[2], {})
        out += entry_differences(where, ta[key], tb[key], within, shown)
    return out


def entry_differences(where: str, x: dict[str, Any], y: dict[str, Any], within: dict[str, Any],
                      shown: list[str] | None = None) -> list[str]:
    """What differs between two of table()'s entries, figures moved ``within``
    their noise left out."""
    out = []
    if x["outcome"] != y["outcome"]:
        line = f"{where}: outcome {x['outcome']} -> {y['outcome']}"
        if not known_outcome(x["outcome"], y["outcome"]):
            out.append(line)
        elif shown is not None:
            shown.append(line + " (known: no news)")
    for name in sorted(set(x["figures"]) | set(y["figures"])):
        u, v = x["figures"].get(name), y["figures"].get(name)
        if u == v:
            continue
        n = within.get(name)
        if n is not None and isinstance(u, (int, float)) and isinstance(v, (int, float)) \
                and abs(v - u) <= n:
            continue
        out.append(f"{where}: {name} {u} -> {v}" + (f" (noise {n})" if n is not None else ""))
    for name in sorted(set(x["tests"]) | set(y["tests"])):
        u, v = x["tests"].get(name), y["tests"].get(name)
        if u == v:
            continue
        line = f"{where}: test {name} {u and u[:2]} -> {v and v[:2]}"
        if known(u, v):
            if shown is not None:
                shown.append(line + " (known: no news)")
        else:
            out.append(line)
    return out


def across_fs(doc: dict[str, Any]) -> dict[str, list[str]]:
    """check -> what differs between the filesystems' cells of each page size,
    each against the page size's first (nothing: the filesystem changed none
    of its outcome, figures or tests, beyond the noise either cell recorded)."""
    t = table(doc)
    noise = doc.get("noise") or {}
    out: dict[str, list[str]] = {}
    for (page, fs, name), entry in t.items():
        first = next(f for (p, f, n) in t if p == page and n == name)
        out.setdefault(name, [])
        if fs != first:
            a, b = (noise.get(f"{page}-{f}", {}).get(name, {}) for f in (first, fs))
            within = {k: max(a.get(k, 0), b.get(k, 0)) for k in set(a) | set(b)}
            out[name] += entry_differences(f"{page} {first}/{fs} {name}", t[(page, first, name)], entry,
                                           within)
    return out


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "--across-fs":
        try:
            per = across_fs(read.load(Path(argv[1])))
        except read.ResultsError as exc:
            print(f"same_results: {exc}", file=sys.stderr)
            return 2
        for name, diffs in sorted(per.items(), key=lambda kv: (bool(kv[1]), kv[0])):
            print(f"{name}: " + ("the same on every filesystem, in every page size" if not diffs
                                 else f"{len(diffs)} difference(s): " + "; ".join(diffs[:3])
                                 + (" ..." if len(diffs) > 3 else "")))
        return 0
    if len(argv) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    try:
        a, b = (read.load(Path(p)) for p in argv)
    except read.ResultsError as exc:
        print(f"same_results: {exc}", file=sys.stderr)
        return 2
    noted: list[str] = []
    diffs = differences(a, b, noted)
    n = len(table(a))
    for d in diffs + noted:
        print(d)
    print(f"{n} checks compared: {len(diffs)} difference(s)"
          + (f"; {len(noted)} known flaky or known-failing test(s) moved the known way" if noted else ""))
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

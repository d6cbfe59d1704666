"""make mutants: does the farm catch the regressions it exists to catch?

Each mutant of tests/mutants/ (one-behaviour patches of 7.3, with the cells each
should affect) runs as a series against the warm base on the matrix, like a
developer's `foliofarm run --series`. A mutant is caught when every cell it
names has a regression (or a build break) and no other cell reports anything
(changed, regression, error). The benign series run the same way and must
report nothing at all. Prints caught/total, the cells and checks that caught
each, and any cell that reported what it should not have; writes mutants.json.

    python -m foliofarm.selfcheck.mutants [--only NAME,...] [--sample] [--benign-runs K]
"""

from __future__ import annotations

import argparse
import fnmatch
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from foliofarm import shown
from foliofarm.judge import catalogue
from foliofarm.paths import ROOT
from foliofarm.results.schema import CheckResult, Results, VerdictRow
from foliofarm.run import child
from foliofarm.util import write_json
from foliofarm.results.outcome import Verdict

MUTANTS = ROOT / "tests" / "mutants"
BENIGN = (ROOT / "examples" / "series" / "benign.mbox",
          ROOT / "examples" / "series" / "benign-offpath.mbox")
CAUGHT = {Verdict.REGRESSION, Verdict.BUILD_BROKEN}
# Verdicts that say "this cell changed": wrong in a cell the mutant does not name.
REPORTED = {Verdict.REGRESSION, Verdict.BUILD_BROKEN, Verdict.CHANGED, Verdict.ERROR, Verdict.INCOMPLETE}
# A sample for `make test`: one mutant per kind of catch (a figure inside the
# bounds, a taint, a hang, a boot crash), cheap to rebuild.
SAMPLE = ("exec-window-past-vma-end", "warn-exec-order-zero", "hang-64k-xfs-exec")


@dataclass
class Mutant:
    name: str
    patch: Path
    cells: list[str]
    why: str
    subject: str = ""
    checks: list[str] | None = None     # the checks to run (default: the farm's own)
    run_args: list[str] = field(default_factory=list)   # more `foliofarm run` options

    def names(self, cell: str) -> bool:
        return any(fnmatch.fnmatchcase(cell, g) for g in self.cells)


@dataclass
class MutantRun:
    name: str
    expected: list[str]
    exit_status: int
    seconds: float
    caught: dict[str, list[str]] = field(default_factory=dict)      # cell -> checks
    missed: list[str] = field(default_factory=list)
    elsewhere: dict[str, list[str]] = field(default_factory=dict)   # cell -> "check: verdict"
    hang_report: list[dict[str, Any]] = field(default_factory=list)
    results: str = ""
    error: str = ""

    @property
    def ok(self) -> bool:
        return not self.error and not self.missed and not self.elsewhere

    def as_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "ok": self.ok}


def load() -> list[Mutant]:
    rows = tomllib.loads((MUTANTS / "mutants.toml").read_text())["mutant"]
    return [Mutant(r["name"], MUTANTS / f"{r['name']}.patch", r["cells"], r["why"], r["subject"],
                   r.get("checks"), r.get("run_args", []))
            for r in rows]


def judge(doc: Results, exit_status: int, mutant: Mutant | None, all_cells: list[str]) -> MutantRun:
    """Compare a series run's verdicts with what the mutant names (None: a
    benign series, which names nothing)."""
    name = mutant.name if mutant else "benign"
    out = MutantRun(name, mutant.cells if mutant else [], exit_status, 0.0)
    by_cell: dict[str, list[VerdictRow]] = {}
    for r in doc.verdicts:
        by_cell.setdefault(r.cell, []).append(r)
    for cell in all_cells:
        rows = by_cell.get(cell, [])
        hits = [r.check for r in rows if r.verdict in CAUGHT]
        if mutant and mutant.names(cell):
            if hits:
                out.caught[cell] = hits
            else:
                out.missed.append(cell)
        else:
            noise = [f"{r.check}: {r.verdict}" for r in rows if r.verdict in REPORTED]
            if noise:
                out.elsewhere[cell] = noise
    out.hang_report = hang_reports(doc)
    return out


def hang_reports(doc: Results) -> list[dict[str, Any]]:
    """For each check that hung or crashed the series kernel: how long it took
    to be reported, against the base's time for the same cell and check."""
    if doc.sides is None:
        return []
    times: dict[tuple[str, str, str, str], CheckResult] = {}
    for cell in doc.cells:
        for c in cell.checks:
            times[(cell.kernel, cell.page_size, cell.fs, c.name)] = c
    out = []
    for (kernel, page, fs, name), c in times.items():
        if kernel != doc.sides.series.kernel or "hung or crashed" not in c.reason:
            continue
        base = times.get((doc.sides.base.kernel, page, fs, name))
        out.append({"cell": f"{page}-{fs}", "check": name,
                    "reported_after_s": c.metrics.get("guest_seconds"),
                    "base_s": base.metrics.get("guest_seconds") if base else None,
                    "reason": c.reason[:200]})
    return out


def run_series(series: Path, results: Path, args: list[str]) -> tuple[Results | None, int, float, str]:
    """One series' run: what it recorded, its exit status, how long it took,
    and what went wrong where it left no results."""
    t0 = time.monotonic()
    log = results / "foliofarm.log"
    log.unlink(missing_ok=True)
    rc, doc = child.run_to_end(["--series", str(series), *args], results, log=log)
    seconds = time.monotonic() - t0
    if doc is None:
        return None, -1, seconds, f"no results (exit {rc}); see {log}"
    return doc, -1 if rc is None else rc, seconds, ""


def cells_of(args: list[str]) -> list[str]:
    from foliofarm import matrix
    pages, fss = matrix.defaults()["page_sizes"], matrix.defaults()["filesystems"]
    globs = None
    for i, a in enumerate(args):
        if a == "--page-sizes":
            pages = args[i + 1].split(",")
        if a == "--fs":
            fss = args[i + 1].split(",")
        if a == "--cells":
            globs = args[i + 1]
    cells = [f"{p}-{f}" for p in pages for f in fss]
    if globs is not None:
        _, _, chosen = matrix.select_cells(globs, matrix.select_page_sizes(pages),
                                           matrix.select_filesystems(fss))
        cells = [c for c in cells if c in chosen]
    return cells


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="foliofarm selfcheck mutants", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", type=Path, default=ROOT / "results" / "mutants")
    ap.add_argument("--only", default="", help="comma-separated mutant names")
    ap.add_argument("--sample", action="store_true", help=f"only {', '.join(SAMPLE)}")
    ap.add_argument("--benign-runs", type=int, default=1, help="runs of each benign series")
    ap.add_argument("--no-benign", action="store_true")
    ap.add_argument("run_args", nargs="*", help="passed to foliofarm run (after --)")
    a = ap.parse_args(argv)
    mutants = load()
    if a.only or a.sample:
        names = set(SAMPLE) if a.sample else set(a.only.split(","))
        unknown = names - {m.name for m in mutants}
        if unknown:
            print(f"foliofarm-mutants: unknown mutant {', '.join(sorted(unknown))}", file=sys.stderr)
            return 2
        mutants = [m for m in mutants if m.name in names]
    cells = cells_of(a.run_args)
    ui = Console(stderr=True)
    outcomes: list[MutantRun] = []
    report = a.results / "mutants.json"

    def save() -> None:
        write_json(report, {"outcomes": [o.as_dict() for o in outcomes],
                            "caught": sum(o.ok for o in outcomes if m_named(o)),
                            "total": sum(m_named(o) for o in outcomes),
                            "benign_clean": sum(o.ok for o in outcomes if not m_named(o)),
                            "benign_runs": sum(not m_named(o) for o in outcomes)})

    jobs: list[tuple[Mutant | None, Path, str]] = [(m, m.patch, m.name) for m in mutants]
    if not a.no_benign:
        jobs += [(None, b, f"{b.stem}-{k}") for b in BENIGN for k in range(1, a.benign_runs + 1)]
    for i, (m, series, label) in enumerate(jobs, 1):
        with ui.status(f"[{i}/{len(jobs)}] {label}"):
            scope = ["--checks", ",".join(m.checks) if m and m.checks else catalogue.own(),
                     *(m.run_args if m else [])]
            doc, rc, seconds, err = run_series(series, a.results / label, [*scope, *a.run_args])
        o = judge(doc, rc, m, cells) if doc else MutantRun(label, m.cells if m else [], rc, seconds)
        o.name, o.seconds, o.error, o.results = label, round(seconds, 1), err, str(a.results / label)
        outcomes.append(o)
        save()
        ui.log(shown.rich_text(f"{label}: {'ok' if o.ok else 'NOT OK'} in {o.seconds}s "
               f"(caught {sorted(o.caught)}, missed {o.missed}, elsewhere {sorted(o.elsewhere)})"))
    print_table(outcomes)
    caught = sum(o.ok for o in outcomes if m_named(o))
    total = sum(m_named(o) for o in outcomes)
    benign = [o for o in outcomes if not m_named(o)]
    print(f"mutants caught: {caught}/{total}" +
          (f"; benign runs clean: {sum(o.ok for o in benign)}/{len(benign)}" if benign else ""))
    print(f"details: {report}")
    return 0 if all(o.ok for o in outcomes) else 1


def m_named(o: MutantRun) -> bool:
    return bool(o.expected)


def print_table(outcomes: list[MutantRun]) -> None:
    t = Table(title="mutants")
    for col in ("mutant", "expected", "caught in (checks)", "missed", "reported elsewhere", "s"):
        t.add_column(col, overflow="fold")
    for o in outcomes:
        caught = "; ".join(f"{c}: {','.join(sorted(set(k)))}" for c, k in o.caught.items())
        t.add_row(o.name, ",".join(o.expected) or "(benign)", caught or ("-" if not o.error else o.error),
                  shown.rich_text(",".join(o.missed)), shown.rich_text("; ".join(f"{c}: {', '.join(v)}" for c, v in o.elsewhere.items())),
                  str(o.seconds))
    Console().print(t)


if __name__ == "__main__":
    sys.exit(main())

"""make emulation: each way to make a TCG guest cheaper, measured A/B on the
matrix with every default check, against the farm's default emulation.

Each variant is one `foliofarm run --fresh` of the same kernels (every guest
booted again) with one thing changed: pointer authentication off instead of
QEMU's cheap implementation-defined algorithm, SVE off, a named CPU model with
every granule (neoverse-n1: no pointer authentication, SVE or MTE) instead of
`max`, a host thread per vCPU (multi-threaded TCG), one vCPU per guest (the
race part keeps two), more guests at once than cores, a kernel config item
(CONFIG_NO_HZ_IDLE: its kernels are built by an untimed run first). For each: its wall
time, the guests' wall and CPU seconds, the median time to a guest's shell
(its start-up work), and whether its verdicts and behaviour figures are those
of the default's run (tools/same_results.py, whose differences it keeps). A
variant pays only where it is cheaper and the same; docs/performance.md keeps
the table this prints.

The host's own speed drifts over hours by more than most variants differ, so
with --interleave the default runs again after each variant (default, variant,
default, variant, ..., default) and each variant is measured against the mean
of the default's runs either side of it, which the table shows beside it.

Results go to RESULTS/emulation.json, written after each variant (a killed
run keeps the variants it finished), and a table on the terminal;
--table prints a saved one as markdown."""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from rich.console import Console
from rich.table import Table

from foliofarm import shown
from foliofarm.boot.qemu import TCG_CPU
from foliofarm.kept import read_kept
from foliofarm.paths import ROOT
from foliofarm.results.schema import Results
from foliofarm.run import child
from foliofarm.util import write_json

VERSION = 1
BASE = "default"


@dataclass(frozen=True)
class Variant:
    name: str
    what: str
    args: tuple[str, ...]
    builds: bool = False     # a kernel of its own: built by an untimed run first


# The kernel config items tried (-K, merged after the fragments and verified in
# the final .config like them): the tick stopped on an idle vCPU. With two
# vCPUs in turns on one host thread, an idle vCPU's 250 Hz tick is a wake-up
# of the TCG thread each time; no check measures the tick.
CONFIG_ITEMS = ("CONFIG_NO_HZ_IDLE=y",)


VARIANTS = (      # the order they run in: the most telling first
    Variant(BASE, f"-cpu {TCG_CPU}, 2 vCPUs in turns on one host thread, the default guests", ()),
    Variant("guests-6", "six guests of each kind at once", ("--guests", "6", "--tree-guests", "6")),
    Variant("pauth-off", "pointer authentication off", ("--tcg-cpu", "max,pauth=off")),
    Variant("neoverse-n1", "a CPU with every granule and no pauth, SVE or MTE",
            ("--tcg-cpu", "neoverse-n1")),
    Variant("mttcg", "a host thread per vCPU", ("--tcg-threads", "multi")),
    Variant("sve-off", "SVE off", ("--tcg-cpu", f"{TCG_CPU},sve=off")),
    Variant("one-vcpu", "one vCPU a guest (the race part keeps two)", ("--cpus", "1")),
    Variant("nohz-idle", "the kernel's tick stopped on idle vCPUs (CONFIG_NO_HZ_IDLE)",
            tuple(a for item in CONFIG_ITEMS for a in ("-K", item)), builds=True),
)


@dataclass
class Measured:
    """One variant's run, as emulation.json keeps it."""
    name: str
    what: str
    args: list[str]
    exit_status: int | None = None
    wall_s: float = 0.0
    guests: int = 0
    guest_s: float = 0.0          # the guests' wall seconds, summed
    cpu_s: float = 0.0            # and the host CPU seconds they used
    shell_s: float | None = None  # the median seconds from QEMU's start to the guest's shell
    part_cpu_s: dict[str, float] = field(default_factory=dict)
    outcomes: dict[str, int] = field(default_factory=dict)   # outcome -> the cells' checks
    same: bool | None = None      # as the default's run says (None: the default itself, or no run)
    differences: list[str] = field(default_factory=list)
    compared: str = ""            # same_results' last line: how many checks, how many differ
    results: str = ""             # the run's own folder
    error: str = ""
    started: str = ""             # when it ran (the host's speed drifts: compare runs made close together)
    beside: list[dict] = field(default_factory=list)   # the default's run(s) it is measured against:
                                                        # with --interleave, those just before and after it


def measured(doc: Results, into: Measured) -> Measured:
    """A run's guests and its checks' outcomes, from its results document."""
    boots = [b for b in doc.boots if b.reused is None and b.guest_seconds is not None]
    into.guests = len(boots)
    into.guest_s = round(sum(float(b.guest_seconds or 0) for b in boots), 1)
    into.cpu_s = round(sum(float(b.cpu_seconds or 0) for b in boots), 1)
    shells = [float(b.boot_seconds) for b in boots if b.boot_seconds is not None]
    into.shell_s = round(statistics.median(shells), 1) if shells else None
    parts: dict[str, float] = {}
    for b in boots:
        parts[b.part or "?"] = parts.get(b.part or "?", 0.0) + float(b.cpu_seconds or 0)
    into.part_cpu_s = {k: round(v, 1) for k, v in sorted(parts.items())}
    counts: dict[str, int] = {}
    for c in (c for cell in doc.cells for c in cell.checks):
        counts[c.outcome.value] = counts.get(c.outcome.value, 0) + 1
    into.outcomes = dict(sorted(counts.items()))
    return into


def compare(base: Path, other: Path, into: Measured) -> None:
    """tools/same_results.py's answer for two results.json: the same or not,
    what differs (the known flaky moves left out) and its summary line."""
    p = subprocess.run([sys.executable, str(ROOT / "tools" / "same_results.py"), str(base), str(other)],
                       capture_output=True, text=True)
    if p.returncode not in (0, 1):
        into.same, into.compared = False, f"same_results could not compare: {p.stderr.strip()}"
        return
    lines = [x for x in p.stdout.splitlines() if x]
    into.same = p.returncode == 0
    into.compared = lines[-1] if lines else ""
    into.differences = [x for x in lines[:-1] if "(known: no news)" not in x]


def build_first(v: Variant, results: Path, run_args: list[str]) -> None:
    """A variant's own kernels built and their cache warm (untimed), so that its timed run only boots."""
    out = results / v.name / "build"
    child.run_to_end([*v.args, "--checks", "exec-text", *run_args], out, log=out / "foliofarm.log")


def run_variant(v: Variant, results: Path, run_args: list[str], base_doc: Path | None,
                built: bool = False) -> Measured:
    m = Measured(v.name, v.what, list(v.args))
    out = results / v.name
    if v.builds and not built:
        build_first(v, results, run_args)
    t0 = time.monotonic()
    rc, doc = child.run_to_end(["--fresh", *v.args, *run_args], out, log=out / "foliofarm.log")
    m.wall_s, m.exit_status = round(time.monotonic() - t0, 1), rc
    if doc is None:
        m.error = f"no results (exit {rc}); see {out / 'foliofarm.log'}"
        return m
    m.results, m.started = str(out / (out / "latest").resolve().name), doc.started
    measured(doc, m)
    if base_doc is not None and v.name != BASE:
        compare(base_doc, Path(m.results) / "results.json", m)
    return m


def load(path: Path) -> list[Measured]:
    """A saved emulation.json, read back."""
    doc = read_kept(path, VERSION, {"variants": []})
    try:
        return [Measured(**m) for m in doc["variants"]]
    except TypeError as exc:
        raise SystemExit(f"foliofarm-emulation: {path}: not this farm's emulation results ({exc}): "
                         "move it away and run `make emulation` again")


def save(path: Path, done: list[Measured]) -> None:
    write_json(path, {"version": VERSION, "variants": [asdict(m) for m in done]})


def ratio(x: float, base: float) -> str:
    return f"{x / base:.2f}" if base else "-"


def beside(done: Measured) -> dict:
    """A run as a row's ``beside`` names it."""
    return {"started": done.started, "wall_s": done.wall_s, "cpu_s": done.cpu_s, "results": done.results}


def reference(m: Measured, base: Measured | None) -> tuple[float, float, str]:
    """What a row is measured against: the default's runs its row names (with
    --interleave, the runs either side of it: their mean), else the default's
    saved run; (wall s, CPU s, the default's CPU s in those runs)."""
    runs = m.beside or ([asdict(base)] if base is not None and m.name != BASE else [])
    if not runs:
        return (base.wall_s, base.cpu_s, "") if base else (0.0, 0.0, "")
    walls, cpus = [float(b["wall_s"]) for b in runs], [float(b["cpu_s"]) for b in runs]
    return sum(walls) / len(walls), sum(cpus) / len(cpus), " / ".join(f"{c:.0f}" for c in cpus)


def rows(done: list[Measured]) -> list[list[str]]:
    """The table: each variant beside the default's runs."""
    base = next((m for m in done if m.name == BASE), None)
    out = []
    for m in done:
        if m.error:
            out.append([m.name, m.what, m.error, "", "", "", "", "", "", ""])
            continue
        same = "(the default)" if m.name == BASE else (
            "yes" if m.same else f"no: {len(m.differences)} difference(s)" if m.same is False else "not compared")
        wall, cpu, against = reference(m, base)
        out.append([m.name, m.what, f"{m.wall_s:.0f}", ratio(m.wall_s, wall),
                    f"{m.guest_s:.0f}", f"{m.cpu_s:.0f}", ratio(m.cpu_s, cpu), against,
                    "-" if m.shell_s is None else f"{m.shell_s:.1f}", same])
    return out


HEADER = ["variant", "what changes", "wall s", "x default", "guest s", "CPU s", "x default",
          "default's CPU s (before / after)", "to shell s (median)", "verdicts and figures the same"]


def markdown(done: list[Measured]) -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(r) + " |" for r in rows(done)]
    return "\n".join(lines)


def show(done: list[Measured]) -> None:
    t = Table(title="emulation A/B (every guest booted again; x default: the ratio to the default's run)")
    for col in HEADER:
        t.add_column(col, overflow="fold")
    for r in rows(done):
        t.add_row(*r)
    Console().print(t)
    for m in done:
        for d in m.differences[:10]:
            print(f"{m.name}: {d}")


def with_kept(done: list[Measured], kept: list[Measured]) -> list[Measured]:
    """The rows run now, and the saved rows not (yet) run again: a row run
    again stays as it was until its new run ends, so a stopped run loses none."""
    return in_order([*done, *(k for k in kept if k.name not in {d.name for d in done})])


def in_order(done: list[Measured]) -> list[Measured]:
    rank = {v.name: i for i, v in enumerate(VARIANTS)}
    return sorted(done, key=lambda m: rank.get(m.name, len(rank)))


def compare_again(report: Path) -> int:
    """Each saved variant's run compared with the default's again (after
    tools/same_results.py learned more of what is no news), saved."""
    done = load(report)
    base = next((m for m in done if m.name == BASE and not m.error), None)
    if base is None:
        print(f"foliofarm-emulation: {report}: no default run to compare with", file=sys.stderr)
        return 2
    for m in done:       # (a run whose folder was pruned since keeps its saved answer)
        if m.name != BASE and not m.error and (Path(m.results) / "results.json").exists():
            m.differences = []
            compare(Path(base.results) / "results.json", Path(m.results) / "results.json", m)
    save(report, done)
    print(markdown(done))
    return 0 if all(m.same is not False for m in done) else 1


def timed(ui: Console, v: Variant, a: argparse.Namespace, base: Measured | None,
          built: bool = False) -> Measured:
    """One variant's run, said on the terminal as it ends."""
    base_doc = Path(base.results) / "results.json" if base and base.results else None
    with ui.status(f"{v.name}: foliofarm run --fresh {' '.join(v.args)}"):
        m = run_variant(v, a.results, a.run_args, base_doc, built)
    ui.log(shown.rich_text(f"{v.name}: {m.error or f'{m.wall_s:.0f} s, guests {m.cpu_s:.0f} CPU s'}"
           + ("" if m.same is None else f", same as the default: {m.same}")))
    return m


def one_by_one(ui: Console, names: set[str], a: argparse.Namespace, kept: list[Measured]) -> list[Measured]:
    """Each variant named once, against the default's saved run (made first
    if there is none; named in --only, it is run again); the rows not run now
    kept as they were measured."""
    report = a.results / "emulation.json"
    again = bool(a.only) and BASE in names
    done = [m for m in kept if not m.error and (m.name == BASE and not again or m.name not in names)]
    for v in VARIANTS:
        if v.name == BASE and any(m.name == BASE for m in done):
            continue                  # the default's run, kept from before
        if v.name != BASE and v.name not in names:
            continue
        base = next((m for m in done if m.name == BASE), None)
        m = timed(ui, v, a, base)
        m.beside = [beside(base)] if base is not None and v.name != BASE else []
        done = in_order([*done, m])
        save(report, with_kept(done, kept))
    return done


def interleaved(ui: Console, names: set[str], a: argparse.Namespace, kept: list[Measured]) -> list[Measured]:
    """The default, a variant, the default again, the next variant, ...: the
    host's speed drifts more over hours than most variants differ, so each
    variant is measured against the default's runs either side of it. Kernels
    a variant needs are built first, untimed, so the runs follow each other."""
    report = a.results / "emulation.json"
    chosen = [v for v in VARIANTS if v.name in names and v.name != BASE]
    for v in (v for v in chosen if v.builds):
        with ui.status(f"{v.name}: its kernels built first (untimed)"):
            build_first(v, a.results, a.run_args)
    before = timed(ui, VARIANTS[0], a, None)
    done = [m for m in kept if m.name not in names | {BASE}]
    if before.error:
        return in_order([*done, before])
    for v in chosen:
        m = timed(ui, v, a, before, built=True)
        after = timed(ui, VARIANTS[0], a, None)
        m.beside = [beside(before), beside(after)]
        done = in_order([*(x for x in done if x.name not in (BASE, v.name)), m, after])
        save(report, with_kept(done, kept))
        if after.error:
            break
        before = after
    return done


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="foliofarm selfcheck emulation", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", type=Path, default=ROOT / "results" / "emulation")
    ap.add_argument("--only", default="", help="comma-separated variants (the default's run is "
                    f"made or reused first; named, it is run again): {', '.join(v.name for v in VARIANTS)}")
    ap.add_argument("--table", action="store_true", help="print the saved table as markdown, run nothing")
    ap.add_argument("--compare-again", action="store_true",
                    help="compare each saved variant's run with the default's again (tools/same_results.py), run nothing")
    ap.add_argument("--interleave", action="store_true",
                    help="the default's run again after each variant (default, variant, default, ...), each "
                    "variant measured against the mean of the default's runs either side of it")
    ap.add_argument("run_args", nargs="*", help="passed to foliofarm run (after --)")
    a = ap.parse_args(argv)
    report = a.results / "emulation.json"
    if a.table:
        print(markdown(load(report)))
        return 0
    if a.compare_again:
        return compare_again(report)
    names = set(a.only.split(",")) - {""} if a.only else {v.name for v in VARIANTS}
    unknown = names - {v.name for v in VARIANTS}
    if unknown:
        print(f"foliofarm-emulation: no variant {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    kept = load(report) if report.exists() else []
    ui = Console(stderr=True)
    done = (interleaved if a.interleave else one_by_one)(ui, names, a, kept)
    show(done)
    print(f"details: {report}")
    return 0 if all(m.exit_status == 0 and m.same is not False for m in done) else 1


if __name__ == "__main__":
    sys.exit(main())

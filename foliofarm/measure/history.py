"""Each kernel's history of results, kept in the cache: every boot of one
kernel (the same artifacts, guest programs, disks and machine: the key the
saved measurements use, less the checks asked for) adds each of its results
(judge/flaky.py results_of) per cell, with when it was first and last seen
and last failed. What one kernel passed in some boots and failed in others
is flaky by measurement (`foliofarm flaky` lists them).

CACHE/history/<artifacts>-<key>.json, one file per kernel, written whole
under a lock (runs at once share it), read back by every later run."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from foliofarm.judge import flaky
from foliofarm.judge.catalogue import Check
from foliofarm.judge.checks import judge_measurement
from foliofarm.judge.measurement import Measurement
from foliofarm.measure.cells import BOOT_LAYOUT, Context, Kernel, boot_append, cpu_key
from foliofarm.results import schema
from foliofarm.results.schema import CheckResult
from foliofarm.results.schema import Role
from foliofarm.kept import locked_beside, read_kept
from foliofarm.util import sha256_text, write_json
from foliofarm.results.outcome import Outcome

VERSION = 1
# the run ids a history keeps (the last of them)
MAX_RUNS = 50


def path_of(ctx: Context, k: Kernel) -> Path:
    key = sha256_text(k.arts.dir.name, k.initrd.name,
                      repr(sorted((c.fs.name, str(k.disks[c.fs.name])) for c in k.cells)),
                      ctx.accel, f"tcg thread={ctx.tcg_threads}", BOOT_LAYOUT, boot_append(ctx, k),
                      k.selftests.name if k.selftests else "", k.thpmaps.name if k.thpmaps else "",
                      f"{ctx.cpus} cpus {ctx.memory_mb} MB {ctx.numa_nodes} nodes runner {ctx.booter.name}"
                      + cpu_key(ctx),
                      # a reproducer's results are its own: another one's never make it flaky
                      *[f"reproducer {c.options['reproducer']}" for c in ctx.checks if "reproducer" in c.options])[:20]
    return ctx.cache / "history" / f"{k.arts.dir.name[:60]}-{key}.json"


def read(path: Path) -> dict[str, Any]:
    """A history as kept (kept.read_kept: a damaged one is started again)."""
    return read_kept(path, VERSION, {"cells": {}, "runs": []})


def boot_results(k: Kernel, checks: list[Check], measured: dict[str, Measurement]) -> dict[str, dict[str, bool]]:
    """One pass's results per cell id (flaky.results_of of each measurement)."""
    out: dict[str, dict[str, bool]] = {}
    for cell in k.cells:
        for chk in checks:
            m = measured.get(f"{cell.fs.name}/{chk.name}")
            if not m:
                continue
            o = judge_measurement(chk, m, cell, k.kernel_xy)
            out.setdefault(cell.id, {}).update(flaky.results_of(chk.name, o, m))
    return out


def add(path: Path, k: Kernel, run_id: str, results: dict[str, dict[str, bool]]) -> None:
    """Add one boot's results per cell to the history at ``path``."""
    if not any(results.values()):
        return
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    with locked_beside(path):
        doc = read(path)
        doc.update(kernel=k.cells[0].kernel, kernel_xy=k.kernel_xy, page_size=k.cells[0].page.name,
                   artifacts=k.arts.dir.name)
        for cell_id, got in results.items():
            cell = doc["cells"].setdefault(cell_id, {"boots": 0, "results": {}})
            cell["boots"] += 1
            for name, ok in got.items():
                # [passed, failed, first seen, last seen, last failed]
                r = cell["results"].setdefault(name, [0, 0, now, now, None])
                r[0 if ok else 1] += 1
                r[3] = now
                if not ok:
                    r[4] = now
        if run_id not in doc["runs"]:
            doc["runs"] = [*doc["runs"], run_id][-MAX_RUNS:]
        write_json(path, doc, durable=False)


def counts(hist: dict[str, Any], cell_id: str) -> dict[str, flaky.Count]:
    """Every result of ``cell_id`` the history ``hist`` holds, as counts."""
    rs = hist["cells"].get(cell_id, {}).get("results", {})
    return {name: flaky.Count(r[0], r[1]) for name, r in rs.items()}


def flaky_rows(hist: dict[str, Any]) -> list[dict[str, Any]]:
    """The flaky results a history holds, one row each (for `foliofarm flaky`)."""
    rows = []
    for cell_id, cell in sorted(hist["cells"].items()):
        for name, (p, f, first, last, last_failed) in sorted(cell["results"].items()):
            if p and f:
                rows.append({"kernel": hist.get("kernel", "?"), "page_size": hist.get("page_size", "?"),
                             "cell": cell_id, "fs": cell_id.split("-")[1], "result": name, "passed": p, "failed": f,
                             "first": first, "last": last, "last_failed": last_failed})
    return rows


def histories(cache: Path) -> list[tuple[Path, dict[str, Any]]]:
    """Every kernel's history in the cache, newest first."""
    paths = sorted((cache / "history").glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
    return [(p, read(p)) for p in paths]


# -- judging a run with what its kernel's boots told -----------------------------

def known(ctx: Context, k: Kernel) -> dict[str, dict[str, flaky.Count]]:
    """Per cell id, the results the kernel's history marks flaky. A series
    side has none: its failures are judged against its base (confirm.py)."""
    if k.side == Role.SERIES:
        return {}
    doc = read(path_of(ctx, k))
    return {c.id: flaky.flaky_of(counts(doc, c.id)) for c in k.cells}


def judged(o: CheckResult, cell_id: str, known_flaky: dict[str, dict[str, flaky.Count]]) -> CheckResult:
    """A first boot's outcome with the history's flaky results applied."""
    return flaky.apply(o, known_flaky.get(cell_id, {}), "this kernel's boots in the cache")


def after_pass(ctx: Context, k: Kernel, measured: dict[str, Measurement]) -> None:
    """A pass's boots added to the kernel's history (a failure to keep it is
    said, and the run goes on: the history informs, it never decides alone)."""
    try:
        add(path_of(ctx, k), k, ctx.writer.run_id, boot_results(k, ctx.checks, measured))
    except OSError as exc:
        ctx.log(f"the history of {k.cells[0].page.name} {k.cells[0].kernel} was not kept: {exc}", "yellow")


def judge_run(ctx: Context, k: Kernel, boots: list[dict[str, Measurement]]) -> None:
    """A plain run that booted its kernel more than once (--noise) judges all
    its boots: a result that passed in one and failed in another is flaky,
    with this run's counts; only a result failing in every boot fails the
    run. Each check is judged again from the first boot's measurement."""
    per_boot = [boot_results(k, ctx.checks, m) for m in boots]
    for cell in k.cells:
        run = flaky.flaky_of(flaky.tally([b.get(cell.id, {}) for b in per_boot]))
        for chk in ctx.checks:
            m = boots[0].get(f"{cell.fs.name}/{chk.name}")
            if not m:
                continue
            o = judge_measurement(chk, m, cell, k.kernel_xy)
            ctx.writer.rerecord(cell, flaky.apply(o, run, f"this run's {len(boots)} boots"), flush=False)
    record_flaky(ctx, k, per_boot)       # (and the document written)


def record_flaky(ctx: Context, k: Kernel, per_boot: list[dict[str, dict[str, bool]]] | None = None) -> None:
    """The flaky results of ``k``'s cells for the run's checks into results.json:
    those this run's boots found (``per_boot``), else the history's, each
    marked where a failure of it in this run was judged flaky."""
    doc = read(path_of(ctx, k))
    names = {chk.name for chk in ctx.checks}
    recorded = {(c.id, x.name): x for c in ctx.writer.results().cells if c.kernel == k.cells[0].kernel
                for x in c.checks}
    found = []
    for cell in k.cells:
        hist = counts(doc, cell.id)
        run = flaky.tally([b.get(cell.id, {}) for b in per_boot or []])
        mine = {**flaky.flaky_of(hist), **flaky.flaky_of(run)}
        for name in sorted(mine):
            check = name.split(flaky.SEP, 1)[0]
            if check not in names:
                continue
            c, here = hist.get(name, mine[name]), run.get(name)
            r = doc["cells"].get(cell.id, {}).get("results", {}).get(name)
            got = recorded.get((cell.id, check))
            found.append(schema.FlakyResult(
                kernel=k.cells[0].kernel, page_size=cell.page.name, fs=cell.fs.name, check=check,
                result=name, passed=c.passed, failed=c.failed,
                run_passed=here.passed if here else None, run_failed=here.failed if here else None,
                measured_in="this run" if here and here.flaky else "the kernel's history",
                first=r[2] if r else None, last_failed=r[4] if r else None,
                judged=bool(got and _judged_flaky(got, name))))
    ctx.writer.set_flaky(k.cells[0].kernel, k.cells[0].page.name, found)


def _judged_flaky(got: schema.CheckResult, name: str) -> bool:
    """A failure of result ``name`` was judged flaky in ``got`` (its check)."""
    if got.name == name:
        return got.outcome == Outcome.FLAKY
    return any(s.outcome == Outcome.FLAKY and (name == f"{got.name}{flaky.SEP}{s.name}"
                                         or name.startswith(f"{got.name}{flaky.SEP}{s.name}{flaky.SEP}"))
               for s in got.subtests)

"""Measuring one built kernel on its cells: boot it (as often as hangs and
crashes make necessary), judge each measurement as it arrives, record it, and
keep a clean boot's raw measurements as a base that later series runs reuse.

A base that a series will be judged against is measured twice: the second
boot's figures give the noise of each figure, kept in the results, so that a
series' figure counts as changed only when it moves beyond it."""

from __future__ import annotations

import heapq
import json
import shlex
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from foliofarm.kernel.build import Artifacts
from foliofarm.guest import ktap
from foliofarm.guest.qemu import OUTBOX_BYTES, SELFTESTS, SWAP, THPMAPS, Machine
from foliofarm.guest.session import BootPlan, check_timeout, run_boots
from foliofarm.judge import compare, figures
from foliofarm.judge.checks import Check, Outcome, judge_measurement
from foliofarm.matrix import Cell
from foliofarm.report.results import ResultsWriter
from foliofarm.util import sha256_text, tmp_dir, write_json


# How cells share boots: part of what a boot's figures depend on (the page
# cache and memory a cell's checks find), so part of the saved measurements' key.
BOOT_LAYOUT = "one boot per cell, a swap disk"


class GuestSlots:
    """At most ``n`` guests at once across a run's page sizes, each free slot
    given to the waiting cell of lowest rank (page size, then filesystem): the
    next page size's cells boot as soon as this one's last cell leaves a core
    free, and never ahead of a cell of this one."""

    def __init__(self, n: int) -> None:
        self.free = max(1, n)
        self.waiting: list[tuple[Any, ...]] = []
        self.cond = threading.Condition()

    @contextmanager
    def slot(self, rank: tuple[Any, ...]) -> Iterator[None]:
        with self.cond:
            heapq.heappush(self.waiting, rank)
            while self.free == 0 or self.waiting[0] != rank:
                self.cond.wait()
            heapq.heappop(self.waiting)
            self.free -= 1
            self.cond.notify_all()     # the next in line may take another free slot
        try:
            yield
        finally:
            with self.cond:
                self.free += 1
                self.cond.notify_all()


@dataclass
class Context:
    """What measuring needs from a run: no more, so it can be driven alone."""
    writer: ResultsWriter
    cache: Path
    checks: list[Check]
    accel: str
    boot_timeout: float
    log: Callable[[str, str | None], None]
    status: Callable[[str], Any]
    guests: int = 1          # cells booted at once (one TCG guest keeps about one core busy)
    cpus: int = 1            # each guest's vCPUs
    memory_mb: int = 2048    # and memory
    numa_nodes: int = 1      # and NUMA nodes
    slots: GuestSlots | None = None   # shared by the page sizes measured at once
    ktap_parser: Path | None = None   # the kernel's KTAP parser (guest/ktap.py), for selftests


@dataclass
class Kernel:
    arts: Artifacts
    initrd: Path
    cells: list[Cell]
    disks: dict[str, Path]
    kernel_xy: str           # "X.Y", for expectations
    side: str | None         # "base", "series" or None (a plain run)
    swap: Path | None = None             # the empty image behind each guest's swap disk
    selftests: Path | None = None        # the selftests disk of this tree
    mm_scratch: dict[str, Path] = field(default_factory=dict)   # fs -> the selftests' empty fs
    selftests_error: str | None = None   # why there is none, where a check wanted it
    thpmaps: Path | None = None          # the thpmaps disk of this tree (pyroot.py)
    thpmaps_error: str | None = None


def wants(checks: list[Check], kind: str) -> bool:
    """A check of ``kind`` ("selftests", "thpmaps") is among ``checks``: its tree's disk is needed."""
    return any(c.options.get("kind") == kind for c in checks)


def wants_selftests(checks: list[Check]) -> bool:
    return wants(checks, "selftests")


def tree_disk(k: Kernel, chk: Check) -> tuple[bool, str]:
    """Whether the disk of ``k``'s tree that ``chk`` runs from is there, and why not."""
    kind = chk.options.get("kind")
    if kind == "selftests" and k.selftests is None:
        return False, f"the mm selftests of this tree are not there: {k.selftests_error or 'not built'}"
    if kind == "thpmaps" and k.thpmaps is None:
        return False, f"the thpmaps disk of this tree is not there: {k.thpmaps_error or 'not made'}"
    return True, ""


def boot_hugepages(checks: list[Check], page_bytes: int) -> int:
    """How many hugetlb pages of the default size (a PMD's: 2M, 32M, 512M on
    4K, 16K, 64K pages) the boot reserves on its command line for the
    selftests' ``hugetlb_mb``, at least one; 0 without selftests. Reserved at
    boot, as on the machines hugetlb is tested on: a 512M page is a block of
    the buddy allocator's highest order, which memory in use for minutes no
    longer has free (at run time one was reserved in one 64K cell of three;
    at boot, in 5 of 8 boots, and in 8 of 8 without the bounce buffer)."""
    mb = max((int(c.options.get("hugetlb_mb", 0)) for c in checks
              if c.options.get("kind") == "selftests"), default=0)
    if mb <= 0:
        return 0
    pmd = page_bytes * (page_bytes // 8)
    return max(1, mb * 1024 * 1024 // pmd)


def boot_append(ctx: Context, k: Kernel) -> str:
    """What the boot of ``k``'s cells adds to the kernel command line: the
    selftests' hugetlb pages, where they run."""
    if k.selftests is None or not wants_selftests(ctx.checks):
        return ""
    n = boot_hugepages(ctx.checks, k.cells[0].page.bytes)
    # swiotlb=noforce: the guest's virtio devices bounce nothing, and the
    # 64M bounce buffer would sit in one of the few 512M blocks a 64K
    # guest's boot leaves whole (with it, 5 of 8 boots got the page;
    # without, 8 of 8)
    return f"hugepages={n} swiotlb=noforce" if n else ""


def machine(ctx: Context, k: Kernel, cells: list[Cell], outbox: Path | None = None) -> Machine:
    """The guest for ``cells`` of ``k``: their disks, and the outbox."""
    disks = {c.fs.name: k.disks[c.fs.name] for c in cells}
    scratch = {f"{c.fs.name}-rw": k.disks[c.fs.name] for c in cells if c.fs.rw_mount_options}
    if k.swap is not None:
        scratch[SWAP] = k.swap
    if k.selftests is not None and wants_selftests(ctx.checks):
        disks[SELFTESTS] = k.selftests
        scratch.update({f"{c.fs.name}-mm": k.mm_scratch[c.fs.name] for c in cells
                        if c.fs.name in k.mm_scratch})
    if k.thpmaps is not None and wants(ctx.checks, "thpmaps"):
        disks[THPMAPS] = k.thpmaps
    return Machine(kernel=k.arts.image, initrd=k.initrd, disks=disks,
                   scratch=scratch,
                   accel=ctx.accel, outbox=outbox, cpus=ctx.cpus, memory_mb=ctx.memory_mb,
                   numa_nodes=ctx.numa_nodes, extra_append=boot_append(ctx, k))


def parse_tests(ctx: Context, m: dict[str, Any]) -> dict[str, Any] | None:
    """A selftests run's KTAP (or, where the kernel cut it short, the console
    since it began) read with the kernel's parser: its tests, whether it
    finished, and what the parser found wrong."""
    if ctx.ktap_parser is None:
        return None
    run = ktap.parse(m.get("ktap") or m.get("console") or "", ktap.load_parser(ctx.ktap_parser))
    return {"results": [r.as_dict() for r in run.results], "planned": run.planned,
            "complete": run.complete, "parser_errors": run.errors[:20],
            "parser": ctx.ktap_parser.name}


def baseline_path(ctx: Context, k: Kernel) -> Path:
    """Where a boot's measurements are kept, keyed by everything that makes them:
    the kernel artifacts, the initramfs (guest programs), the disk images, the
    checks' definitions and the accelerator. Judging is redone from the dumps."""
    defs = [(c.name, c.program, c.args, c.timeout, sorted(c.options.items(), key=str))
            for c in ctx.checks]
    key = sha256_text(k.arts.dir.name, k.initrd.name,
                      repr(sorted((c.fs.name, str(k.disks[c.fs.name])) for c in k.cells)),
                      repr(defs), ctx.accel, str(ctx.boot_timeout), BOOT_LAYOUT,
                      boot_append(ctx, k),
                      repr((k.selftests.name, sorted(str(p) for p in k.mm_scratch.values())))
                      if k.selftests and wants_selftests(ctx.checks) else "",
                      k.thpmaps.name if k.thpmaps and wants(ctx.checks, "thpmaps") else "",
                      f"{ctx.cpus} cpus {ctx.memory_mb} MB"
                      + (f" {ctx.numa_nodes} nodes" if ctx.numa_nodes > 1 else ""))[:20]
    return ctx.cache / "baseline" / f"{k.arts.dir.name[:60]}-{key}.json"


def console_outcome(splats: list[str]) -> Outcome:
    if splats:
        return Outcome("console", "fail", f"{len(splats)} report(s): " + " | ".join(splats[:3]),
                       {"splats": len(splats)})
    return Outcome("console", "pass", "", {"splats": 0})


def judge(ctx: Context, k: Kernel, cell: Cell, chk: Check, m: dict[str, Any]) -> Outcome:
    """Judge one measurement and keep its KTAP output and dump beside the results."""
    cdir = ctx.writer.cell_dir(cell)
    if "ktap" in m:
        (cdir / f"{chk.name}.ktap").write_text(m["ktap"])
    if m.get("dump") is not None:
        (cdir / f"{chk.name}.dump").write_text(m["dump"])
    if m.get("kernel_log"):
        (cdir / f"{chk.name}.kernel.log").write_text(m["kernel_log"])
    t0 = time.monotonic()
    out = judge_measurement(chk, m, k.kernel_xy, cell.page.name, cell.fs.name)
    with ctx.writer.lock:
        stages = ctx.writer.doc.setdefault("stages", {})
        stages["judge_s"] = round(stages.get("judge_s", 0.0) + time.monotonic() - t0, 3)
    return out


def base_timeouts(ctx: Context, k: Kernel) -> dict[tuple[str, str], float]:
    """Per (fs, check): a deadline from the base run's time for the same cell,
    where this is the series side and the base measured it."""
    if k.side != "series":
        return {}
    sides = ctx.writer.doc.get("sides") or {}
    base = (sides.get("base") or {}).get("kernel")
    out = {}
    with ctx.writer.lock:
        for cell in ctx.writer.doc["cells"]:
            if cell["kernel"] != base or cell["page_size"] != k.cells[0].page.name:
                continue
            for c in cell["checks"]:
                secs = c["metrics"].get("guest_seconds")
                chk = next((x for x in ctx.checks if x.name == c["name"]), None)
                if chk is not None and isinstance(secs, (int, float)) and c["outcome"] != "error":
                    out[(cell["fs"], chk.name)] = check_timeout(chk, secs)
    return out


def boot_and_measure(ctx: Context, k: Kernel, label: str = "",
                     pairs: list[tuple[Cell, Check]] | None = None) -> tuple[dict[str, Any], bool]:
    """Measure every (cell, check) of ``k`` (or just ``pairs``), recording outcomes
    as they arrive unless ``label`` is set (a repeat, kept only for its figures).
    Each cell gets boots of its own (with just its disks): what one check does
    to the page cache or to memory can move another cell's figures only within
    its own cell, a hang costs that cell alone, and ``ctx.guests`` cells boot at
    once. Returns the raw measurements by "fs/check" and whether every boot was
    clean."""
    w = ctx.writer
    page = k.cells[0].page
    kernel = k.cells[0].kernel
    by_cell: dict[str, list[tuple[Cell, Check]]] = {}
    unavailable = []
    for cell, chk in pairs or [(c, chk) for c in k.cells for chk in ctx.checks]:
        if not tree_disk(k, chk)[0]:
            unavailable.append((cell, chk))   # nothing to run them from: no boot for them
            continue
        by_cell.setdefault(cell.id, []).append((cell, chk))
    measured: dict[str, dict[str, Any]] = {}
    splats: dict[str, list[str]] = {c.id: [] for c in k.cells}
    boot_splats: list[str] = []
    boots: list[Any] = []
    lock = threading.Lock()      # the cells' threads share the writer and these
    timeouts = base_timeouts(ctx, k)

    def on_measured(cell: Cell, chk: Check, m: dict[str, Any]) -> None:
        if chk.options.get("kind") == "selftests" and m["kind"] in ("ktap", "crash"):
            m["tests"] = parse_tests(ctx, m)
        with lock:
            measured[f"{cell.fs.name}/{chk.name}"] = m
            splats[cell.id] += [f"{s} (during {chk.name})" for s in m.get("splats", [])]
            if label:
                return
            outcome = judge(ctx, k, cell, chk, m)
            w.record(cell, outcome, excerpt=m.get("excerpt", ""))
            ctx.log(f"{cell.id} {chk.name}: {outcome.outcome} {outcome.reason}", None)

    def on_boot(boot: Any) -> None:
        with lock:
            boots.append(boot)
            boot_splats.extend(b for b in boot.boot_splats if b not in boot_splats)
            if not label:
                w.add("boots", boot.as_dict())
        what = f"boot {boot.attempt} of {page.name} {kernel}{label} for {boot.fs}"
        if boot.error:
            ctx.log(f"{what}: {boot.error}", "red")
        else:
            ctx.log(f"{what}: {boot.boot_seconds}s to the shell, console {boot.console_log}", None)

    def cell_boots(cell_pairs: list[tuple[Cell, Check]], status: Callable[[str], Any] | None) -> None:
        cell = cell_pairs[0][0]
        with tmp_dir("outbox") as tmp:
            outbox = Path(tmp) / "outbox.img"
            with open(outbox, "wb") as f:      # sparse: costs only what the dumps write
                f.truncate(OUTBOX_BYTES)
            argv = machine(ctx, k, [cell], outbox).argv()
            plan = BootPlan(argv=argv, log_stem=w.dir / "boots" / f"{page.name}-{cell.fs.name}-{kernel}{label}",
                            page=page, kernel=kernel, pairs=cell_pairs, boot_timeout=ctx.boot_timeout,
                            timeouts=timeouts, qemu=shlex.join(argv), outbox=outbox)
            for _ in run_boots(plan, on_measured, on_boot, status):
                pass

    for cell, chk in unavailable:
        on_measured(cell, chk, {"kind": "error", "reason": tree_disk(k, chk)[1]})
    groups = list(by_cell.values())
    slots = ctx.slots or GuestSlots(ctx.guests)
    fs_rank = {c.fs.name: i for i, c in enumerate(k.cells)}

    def in_slot(g: list[tuple[Cell, Check]], status: Callable[[str], Any] | None) -> None:
        cell = g[0][0]
        with slots.slot((cell.page.bytes, label, fs_rank[cell.fs.name])):
            cell_boots(g, status)

    ctx.log(f"booting {page.name} {kernel}{label}: {len(groups)} cell(s), "
            f"{min(ctx.guests, len(groups))} guest(s) at a time", None)
    if ctx.guests == 1 and ctx.slots is None:
        for g in groups:
            cell_boots(g, ctx.status)
    else:
        with ctx.status(f"{page.name} {kernel}{label}: {len(groups)} cells, {ctx.guests} guests at a time"), \
                ThreadPoolExecutor(max_workers=len(groups), thread_name_prefix="guest") as pool:
            for f in [pool.submit(in_slot, g, None) for g in groups]:
                f.result()
    if not label:
        order = [chk.name for chk in ctx.checks]
        for cell in k.cells:
            w.record(cell, console_outcome(boot_splats + splats[cell.id]), flush=False)
            w.order_checks(cell, order)     # as the catalogue lists them, whichever finished first
        w.flush()
    clean = (not boot_splats and all(not b.error for b in boots)
             and all(m["kind"] in ("dump", "skip", "ktap") and not m.get("splats") and not m.get("taint")
                     for m in measured.values()))
    return measured, clean


def measure_kernel(ctx: Context, k: Kernel, reuse_base: bool, want_noise: bool) -> bool:
    """Measure ``k`` (or reuse its clean base measurements), and where it is the
    base of a comparison, its figures' noise. Returns False if anything could
    not be measured."""
    w = ctx.writer
    path = baseline_path(ctx, k)
    saved = load_saved(ctx, path, k) if reuse_base else None
    if saved is not None:
        for cell in k.cells:
            for chk in ctx.checks:
                m = saved["measurements"][f"{cell.fs.name}/{chk.name}"]
                w.record(cell, judge(ctx, k, cell, chk, m), flush=False)
            w.record(cell, console_outcome([]), flush=False)
        w.add("boots", {"page_size": k.cells[0].page.name, "kernel": k.cells[0].kernel,
                        "reused": str(path), "measured_by": saved.get("run_id"),
                        "console_log": saved.get("console_log")})
        ctx.log(f"{k.cells[0].page.name} {k.cells[0].kernel}: measurements reused from run "
                f"{saved.get('run_id')} ({path.name}); --fresh measures again", None)
        measured, clean = saved["measurements"], True
    else:
        earlier = load_saved(ctx, path, k, quiet=True)   # --fresh: what it replaces
        measured, clean = boot_and_measure(ctx, k)
        if k.side == "series":
            confirm_moves(ctx, k)
        saved = new_saved(w.run_id, str(w.dir / "boots"), measured, earlier)
        if clean:
            # what it replaces stays a sample of the noise
            ranges = ranges_of(ctx, k, earlier) if earlier is not None else {}
            saved["ranges"] = fold(ranges, sample_figures(ctx, k, measured))
    if want_noise and clean:
        if "repeat" not in saved:
            ctx.log(f"{k.cells[0].page.name}: measuring the base again for the noise of each figure",
                    None)
            saved["repeat"], clean = boot_and_measure(ctx, k, label="-repeat")
            if clean:
                saved["ranges"] = fold(saved.get("ranges") or {}, sample_figures(ctx, k, saved["repeat"]))
        saved["ranges"] = ranges = ranges_of(ctx, k, saved)
        n = min((r["samples"] for by in ranges.values() for r in by.values()), default=0)
        ctx.log(f"{k.cells[0].page.name}: the noise of each figure from {n} clean boots of the base "
                f"(runs {saved.get('run_id')} and {saved.get('repeat_run_id') or saved.get('run_id')}"
                + (" and earlier" if n > 2 else "") + ")", None)
        record_noise(ctx, ranges)
    if clean:   # only a clean boot's measurements can serve as a base later
        saved["sha256"] = _digest(saved)
        write_json(path, saved)
    return all(m["kind"] != "error" for m in measured.values())


def new_saved(run_id: str, console_log: str, measured: dict[str, Any],
              earlier: dict[str, Any] | None) -> dict[str, Any]:
    """What a boot's measurements are kept as. An earlier clean boot of the same
    kernel, guest programs and disks (what --fresh replaces) is as good a second
    sample of each figure as a boot made for it: it becomes the repeat, and a
    series run later needs no second base boot for the noise."""
    saved = {"run_id": run_id, "console_log": console_log, "measurements": measured}
    if earlier is not None:
        saved["repeat"] = earlier["measurements"]
        saved["repeat_run_id"] = earlier.get("run_id")
    return saved


def _digest(saved: dict[str, Any]) -> str:
    parts = [saved.get("measurements"), saved.get("repeat")]
    if "ranges" in saved:      # files of a farm that kept no ranges keep their digest
        parts.append(saved["ranges"])
    return sha256_text(json.dumps(parts, sort_keys=True))


def load_saved(ctx: Context, path: Path, k: Kernel, quiet: bool = False) -> dict[str, Any] | None:
    """A clean boot's saved measurements, if they are there, whole and cover
    every (cell, check) asked for; else None, and they are measured again (a
    damaged file is removed: it never gives a verdict). ``quiet``: an
    incomplete file is no news (a --fresh run replaces it anyway)."""
    if not path.is_file():
        return None
    try:
        saved = json.loads(path.read_text())
        ok = (isinstance(saved, dict) and saved.get("sha256") == _digest(saved)
              and all(f"{c.fs.name}/{chk.name}" in saved["measurements"]
                      for c in k.cells for chk in ctx.checks))
    except (OSError, ValueError, KeyError, TypeError):
        ok = False
    if not ok:
        if not quiet:
            ctx.log(f"saved measurements {path} are damaged or incomplete: measuring again", "yellow")
        path.unlink(missing_ok=True)
        return None
    return saved


def sample_figures(ctx: Context, k: Kernel, measured: dict[str, Any]
                   ) -> dict[str, dict[str, dict[str, float | int | None]]]:
    """One boot's figures (behaviour only), per cell and check, and for a
    selftests run each test's count of results."""
    out: dict[str, dict[str, dict[str, float | int | None]]] = {}
    for cell in k.cells:
        for chk in ctx.checks:
            m = measured.get(f"{cell.fs.name}/{chk.name}")
            if not m:
                continue
            o = judge_measurement(chk, m, k.kernel_xy, cell.page.name, cell.fs.name)
            figs: dict[str, float | int | None] = dict(figures.flatten(o.metrics, chk.name))
            figs.update(compare.test_counts(o.subtests))
            out.setdefault(f"{cell.page.name}-{cell.fs.name}", {})[chk.name] = figs
    return out


def fold(ranges: dict[str, Any], sample: dict[str, dict[str, dict[str, Any]]]) -> dict[str, Any]:
    """Every clean boot of a base folded into the range of each figure (lowest,
    highest, how many boots had it and how many gave None), kept with the
    saved measurements: the noise is learnt from every clean boot of the same
    base the farm made (the first, each repeat, each --fresh), not one pair."""
    for key, by_check in sample.items():
        for check, figs in by_check.items():
            r = ranges.setdefault(key, {}).setdefault(check, {"samples": 0, "figures": {}})
            r["samples"] += 1
            for name, v in figs.items():
                lo, hi, nones, seen = r["figures"].get(name, [None, None, 0, 0])
                if v is None:
                    nones += 1
                else:
                    lo, hi = (v, v) if lo is None else (min(lo, v), max(hi, v))
                r["figures"][name] = [lo, hi, nones, seen + 1]
    return ranges


def ranges_of(ctx: Context, k: Kernel, saved: dict[str, Any]) -> dict[str, Any]:
    """The ranges kept with saved measurements; for a file of a farm that
    kept none, its own samples (the measurements and the repeat) folded."""
    ranges = saved.get("ranges") or {}
    for sample in ([] if ranges else [saved["measurements"], saved.get("repeat")]):
        if sample:
            ranges = fold(ranges, sample_figures(ctx, k, sample))
    return ranges


def noise_of(ranges: dict[str, Any]) -> dict[str, dict[str, dict[str, float]]]:
    """Per cell, check and figure: how far it moved across the base's clean
    boots; infinity where it was None in some and a number in others, or
    missing from some."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for key, by_check in ranges.items():
        for check, r in by_check.items():
            n = out.setdefault(key, {}).setdefault(check, {})
            for name, (lo, hi, nones, seen) in r["figures"].items():
                if seen < r["samples"] or 0 < nones < seen:
                    n[name] = float("inf")
                else:
                    n[name] = 0.0 if lo is None else round(abs(float(hi) - float(lo)), 4)
    return out


def record_noise(ctx: Context, ranges: dict[str, Any]) -> None:
    """Per cell and check: how far each figure moved across the clean boots of
    the same base (0 for most figures under TCG), kept in results.json."""
    found = noise_of(ranges)
    with ctx.writer.lock:
        noise = ctx.writer.doc.setdefault("noise", {})
        for key, per_check in found.items():
            noise.setdefault(key, {}).update(per_check)
        ctx.writer.flush()



def confirm_moves(ctx: Context, k: Kernel) -> None:
    """Series side: boot again for the (cell, check) pairs whose figures moved
    from the base beyond its noise while the check passed, and settle each move
    (settle_moves). Two boots of the base can miss a rare flake; this keeps one
    from being reported as the series' doing."""
    with ctx.writer.lock:
        pending = moved_pairs(ctx.writer.doc, k.cells, ctx.checks)
    if not pending:
        return
    ctx.log(f"{k.cells[0].page.name} {k.cells[0].kernel}: booting again to confirm moved figures of "
            + ", ".join(f"{c.fs.name}/{chk.name}" for c, chk, _ in pending), None)
    again, _ = boot_and_measure(ctx, k, label="-confirm", pairs=[(c, chk) for c, chk, _ in pending])
    for cell, chk, moved in pending:
        m = again.get(f"{cell.fs.name}/{chk.name}")
        if not m or m.get("kind") != "dump":
            continue
        now = judge_measurement(chk, m, k.kernel_xy, cell.page.name, cell.fs.name).metrics
        with ctx.writer.lock:
            settled = settle_moves(ctx.writer.doc, cell, chk.name, moved, now)
        for u in settled:
            ctx.log(f"{cell.id} {chk.name} {u['metric']}: {u['base']} -> {u['series']}, but "
                    f"{u['confirm']} on a second boot: noise, not the series", "yellow")
    ctx.writer.flush()


def moved_pairs(doc: dict[str, Any], cells: list[Cell], checks: list[Check]
                ) -> list[tuple[Cell, Check, list[dict[str, Any]]]]:
    """(cell, check, moved figures) of the series side ``cells`` that passed on
    both sides with figures that moved beyond the base's noise."""
    base_label = ((doc.get("sides") or {}).get("base") or {}).get("kernel")
    if not base_label or not cells:
        return []
    by = {(c["kernel"], c["fs"], ch["name"]): ch for c in doc["cells"]
          if c["page_size"] == cells[0].page.name for ch in c["checks"]}
    noise = doc.get("noise") or {}
    out = []
    for cell in cells:
        for chk in checks:
            b, s = by.get((base_label, cell.fs.name, chk.name)), by.get((cell.kernel, cell.fs.name, chk.name))
            if not b or not s or b["outcome"] != "pass" or s["outcome"] != "pass":
                continue
            moved = figures.compare(chk.name, b["metrics"], s["metrics"],
                                    noise.get(f"{cell.page.name}-{cell.fs.name}", {}).get(chk.name))
            if moved:
                out.append((cell, chk, moved))
    return out


def settle_moves(doc: dict[str, Any], cell: Cell, check: str, moved: list[dict[str, Any]],
                 again: dict[str, Any]) -> list[dict[str, Any]]:
    """A move that a second boot of the series does not repeat (it measures the
    base's value again) came from timing, not from the series: the figure's
    noise on that cell takes the move, and the move is listed under
    "unconfirmed". A move that repeats, or lands elsewhere, stands."""
    now = figures.flatten(again, check)
    out = []
    for f in moved:
        x, y, z = f["base"], f["series"], now.get(f["metric"])
        if z != x:
            continue
        n = doc.setdefault("noise", {}).setdefault(f"{cell.page.name}-{cell.fs.name}", {})
        n.setdefault(check, {})[f["metric"]] = (float("inf") if x is None or y is None
                                                else abs(float(y) - float(x)))
        u = {"cell": cell.id, "check": check, "metric": f["metric"], "base": x, "series": y,
             "confirm": z}
        doc.setdefault("unconfirmed", []).append(u)
        out.append(u)
    return out

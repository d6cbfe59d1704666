"""Measuring one built kernel on its cells: boot it (as often as hangs and
crashes make necessary), judge each measurement as it arrives, record it, and
keep a clean boot's raw measurements as a base that later series runs reuse.

A base that a series will be judged against is measured twice: the second
boot's figures give the noise of each figure, kept in the results, so that a
series' figure counts as changed only when it moves beyond it."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable

from foliofarm.measure import confirm, durations, first, history, split
from foliofarm.boot import framed
from foliofarm.boot.protocol import Reports
from foliofarm.measure.cells import (BARE, RACE_BOOT, TOUCHED_BOOT, Context, GuestSlots, Kernel, base_timeouts,
                                   baseline_path, machine, tree_disk)
from foliofarm.measure.saved import load_saved, new_saved, ranges_of, save
from foliofarm.boot.session import BootPlan
from foliofarm.judge import ktap, measurement
from foliofarm.judge.catalogue import Check, Kind, is_own
from foliofarm.judge.measurement import Measurement, TestsRun
from foliofarm.judge.checks import console_outcome, judge_measurement
from foliofarm.judge.noise import fold, noise_of, sample_figures
from foliofarm.matrix import Cell
from foliofarm.results.schema import BootEntry, CheckResult, Role

# a cell's boot for its tree's checks (thpmaps, the selftests' cell part)
TREE_SUFFIX = "-tree"


def parse_tests(ctx: Context, m: Measurement) -> TestsRun | None:
    """A selftests run's KTAP (or, where the kernel cut it short, the console
    since it began) read with the kernel's parser: its tests, whether it
    finished, and what the parser found wrong."""
    if ctx.ktap_parser is None:
        return None
    return framed.parsed(ktap.load_parser(ctx.ktap_parser), m.ktap or m.console or "", ctx.ktap_parser.name)


def judge(ctx: Context, k: Kernel, cell: Cell, chk: Check, m: Measurement) -> CheckResult:
    """Judge one measurement and keep its KTAP output and dump beside the results."""
    cdir = ctx.writer.cell_dir(cell)
    if m.ktap is not None:
        (cdir / f"{chk.name}.ktap").write_text(m.ktap)
    if m.dump is not None:
        (cdir / f"{chk.name}.dump").write_text(m.dump)
    if m.kernel_log:
        (cdir / f"{chk.name}.kernel.log").write_text(m.kernel_log)
    t0 = time.monotonic()
    out = judge_measurement(chk, m, cell, k.kernel_xy)
    ctx.writer.add_seconds("judge", time.monotonic() - t0, digits=3)
    return out


def boot_and_measure(ctx: Context, k: Kernel, label: str = "",
                     pairs: list[tuple[Cell, Check]] | None = None) -> tuple[dict[str, Measurement], bool]:
    one = run_pass(ctx, k, label, pairs)
    return one.measured, one.clean()


def run_pass(ctx: Context, k: Kernel, label: str = "",
             pairs: list[tuple[Cell, Check]] | None = None) -> "Pass":
    """Measure every (cell, check) of ``k`` (or just ``pairs``), recording outcomes
    as they arrive unless ``label`` is set (a repeat, kept only for its figures).
    Each cell gets boots of its own (with just its disks): what one check does
    to the page cache or to memory can move another cell's figures only within
    its own cell, a hang costs that cell alone, and ``ctx.guests`` guests boot
    at once. A cell's farm checks boot apart from its tree's checks (thpmaps,
    the selftests), and split selftests run their page part once (Group).
    Returns the pass: its raw measurements by "fs/check", the reports on its
    consoles, its boots."""
    by_cell: dict[tuple[str, bool], list[tuple[Cell, Check]]] = {}
    per_page: dict[str, tuple[Cell, Check]] = {}
    per_race: dict[str, tuple[Cell, Check]] = {}
    per_touched: dict[str, tuple[Cell, Check]] = {}
    one = Pass(ctx, k, label)
    for cell, chk in pairs or [(c, chk) for c in k.cells for chk in ctx.checks]:
        chk = split.not_reached(chk, one.reached)     # a series' side: what it cannot reach, left out
        there, why = tree_disk(k, chk)
        if not there:       # nothing to run them from: no boot for them
            one.on_measured(cell, chk, measurement.error(why))
            continue
        own = is_own(chk)      # the farm's checks boot apart from the tree's, ahead of them
        if split.is_alone(chk) and split.part_of(chk) in split.BARE_PARTS:    # a part by itself
            (per_race if split.part_of(chk) == split.RACE else per_page).setdefault(chk.name, (cell, chk))
            continue
        if split.splits(chk) and not split.is_alone(chk):
            # its cell part in the cell's boot, its page part once, its race part apart (split.py)
            touched = one.touched.get(chk.name, "")     # the series' touched tests, first (first.py)
            per_page.setdefault(chk.name, (cell, split.part(chk, split.PAGE, touched)))
            if split.races(chk):
                per_race.setdefault(chk.name, (cell, split.part(chk, split.RACE)))
            if touched:
                per_touched.setdefault(chk.name, (cell, split.part(chk, split.TOUCHED, touched)))
            chk = split.part(chk, split.CELL)
        by_cell.setdefault((cell.id, own), []).append((cell, chk))
    groups = [Group(g, later=not own) for (_, own), g in by_cell.items()]
    if per_page:     # one guest with no cell filesystem for every page part
        groups.append(Group(list(per_page.values()), bare=True, later=True))
    if per_race:     # and one with a host thread per vCPU for their race parts
        groups.append(Group(list(per_race.values()), bare=True, later=True, at_once=True))
    if per_touched:  # and one for the tests the series touches, ahead of the tree's other parts
        groups.append(Group(list(per_touched.values()), bare=True, later=True, first=True))
    one.boot_cells(groups)
    if not label:
        one.finish_cells(sorted({c.id for c, _ in pairs}) if pairs else None)
    history.after_pass(ctx, k, one.measured)
    return one


def page_part(pieces: dict[str, tuple[Measurement, str]]) -> tuple[Measurement, str]:
    """A split check's page part put together from its guests' pieces: the
    page size's, the touched tests', the race part's; and where it ran."""
    page = pieces[split.PAGE]
    if split.TOUCHED in pieces:
        page = split.merge_touched(page[0], pieces[split.TOUCHED][0], page[1], pieces[split.TOUCHED][1])
    if split.RACE in pieces:
        page = split.merge_page(page[0], pieces[split.RACE][0], page[1], pieces[split.RACE][1])
    return page


@dataclass
class Group:
    """The (cell, check) pairs one guest measures: a cell's, with its disks;
    or (``bare``) the page parts of split checks, in a guest with no cell
    filesystem attached. A cell's farm checks boot on their own, ahead of
    everything ``later`` (its tree's checks): their verdict is final in
    about a minute, while the tree's checks take minutes."""
    pairs: list[tuple[Cell, Check]]
    bare: bool = False
    later: bool = False
    at_once: bool = False     # its vCPUs a host thread each (the selftests' race parts)
    first: bool = False       # the tests a series touches: first of the tree's (measure/first.py)


class Pass:
    """One pass of boots over a kernel's cells: what they measured, the
    reports on their consoles, the boots themselves. The cells' threads share
    it (and the writer) under its lock."""

    def __init__(self, ctx: Context, k: Kernel, label: str) -> None:
        self.ctx, self.k, self.label = ctx, k, label
        self.page, self.kernel = k.cells[0].page, k.cells[0].kernel
        self.measured: dict[str, Measurement] = {}
        self.splats: dict[str, list[str]] = {c.id: [] for c in k.cells}
        self.boot_splats: list[str] = []
        self.boots: list[Any] = []
        self.lock = threading.Lock()
        self.timeouts = base_timeouts(ctx, k)
        self.expects: dict[int, durations.Expected] = {}   # id(group) -> what its part should take
        self.known = history.known(ctx, k) if not label else {}    # flaky by the kernel's history
        # split checks: the page part by check (put together from its page and
        # race parts as they arrive), cell parts waiting for it
        self.page_pieces: dict[str, dict[str, tuple[Measurement, str]]] = {}
        self.page_parts: dict[str, tuple[Measurement, str]] = {}
        self.cell_parts: dict[str, list[tuple[Cell, Measurement]]] = {}
        self.page_boot = {split.PAGE: "", split.RACE: "", split.TOUCHED: ""}
        self.touched = first.programs(ctx.writer.results(), k.side, ctx.checks) if not label else {}
        self.reached = first.reached(ctx.writer.results(), k.side, self.page.name) if not label else None

    def on_measured(self, cell: Cell, chk: Check, m: Measurement) -> None:
        if chk.tree == "selftests" and m.kind in (Kind.KTAP, Kind.CRASH):
            m = m.model_copy(update={"tests": parse_tests(self.ctx, m)})
        which = split.part_of(chk)
        if which is None or split.is_alone(chk):     # a part by itself: as it is
            self.record(cell, chk, m)
            return
        # a part: the cell's measurement once both parts are there
        whole = next(c for c in self.ctx.checks if c.name == chk.name)
        with self.lock:
            if which in split.BARE_PARTS:
                pieces = self.page_pieces.setdefault(chk.name, {})
                pieces[which] = (m, self.page_boot[which])
                ready = []
                if set(pieces) >= split.page_parts(whole, self.touched.get(chk.name, "")):
                    self.page_parts[chk.name] = page_part(pieces)
                    ready = self.cell_parts.pop(chk.name, [])
            else:
                ready = [(cell, m)] if chk.name in self.page_parts else []
                if not ready:
                    self.cell_parts.setdefault(chk.name, []).append((cell, m))
            page_m, where = self.page_parts[chk.name] if ready else (m, "")
        if which == split.TOUCHED and self.ctx.first is not None:
            self.ctx.first.add(self.k.cells, whole, m, self.k.kernel_xy)
        for c, cell_m in ready:
            self.record(c, whole, split.merge(page_m, cell_m, where))

    def record(self, cell: Cell, chk: Check, m: Measurement) -> None:
        with self.lock:
            self.measured[f"{cell.fs.name}/{chk.name}"] = m
            self.splats[cell.id] += [f"{s} (during {chk.name})" for s in m.splats]
            if self.label:
                return
            outcome = history.judged(judge(self.ctx, self.k, cell, chk, m), cell.id, self.known)
            self.ctx.writer.record(cell, outcome, excerpt=m.excerpt)
            self.ctx.log(f"{cell.id} {chk.name}: {outcome.outcome} {outcome.reason}", None)
        if self.ctx.recorded is not None:
            self.ctx.recorded()

    def on_boot(self, boot: Any) -> None:
        with self.lock:
            self.boots.append(boot)
            self.boot_splats.extend(b for b in boot.boot_splats if b not in self.boot_splats)
            if not self.label:
                self.ctx.writer.add_boot(boot)
        what = f"boot {boot.attempt} of {self.page.name} {self.kernel}{self.label} for {boot.fs}"
        if boot.error:
            self.ctx.log(f"{what}: {boot.error}", "red")
        else:
            took = (f"{boot.boot_seconds}s to the shell" if boot.boot_seconds is not None
                    else f"{boot.qemu}, {boot.lab_job}" if boot.lab_job else "under vng")
            self.ctx.log(f"{what}: {took}, console {boot.console_log}", None)

    def boot_cell(self, group: Group, status: Callable[[str], Any] | None) -> None:
        """Boot one group's guest as often as its checks need, by the run's
        booter (boot/protocol.py); the tree's checks by the farm's QEMU
        where that booter cannot boot them."""
        ctx, cell_pairs = self.ctx, group.pairs
        cell = cell_pairs[0][0]
        tree = group.later or group.bare
        booter = ctx.booter if ctx.booter.tree_checks or not tree else ctx.qemu
        where = (RACE_BOOT if group.at_once else TOUCHED_BOOT if group.first else BARE) if group.bare \
            else cell.fs.name
        name = (f"{self.page.name}-{where}-{self.kernel}{self.label}"
                + (TREE_SUFFIX if group.later and not group.bare else ""))
        if group.bare:
            with self.lock:
                self.page_boot[split.RACE if group.at_once else split.TOUCHED if group.first else split.PAGE] = (
                    f"in boot {name} (no cell filesystem attached)")
        labels = {"foliofarm.page_size": cell.page.name, "foliofarm.fs": cell.fs.name,
                  "foliofarm.kernel": cell.kernel, "foliofarm.kernel_xy": self.k.kernel_xy,
                  **({"foliofarm.side": str(self.k.side)} if self.k.side else {})}
        plan = BootPlan(machine=machine(ctx, self.k, [] if group.bare else [cell], None, group.at_once),
                        log_stem=ctx.writer.dir / "boots" / name, page=self.page, kernel=self.kernel,
                        pairs=cell_pairs, boot_timeout=ctx.boot_timeout, timeouts=self.timeouts,
                        fs=where if group.bare else None, tree=group.later, claim=group.at_once, labels=labels,
                        coverage=self.k.arts.variant == "coverage",
                        pace=self.expects[id(group)].slowdown if id(group) in self.expects else 1.0)
        took: list[BootEntry] = []
        for got in booter.boot(plan, status):
            if isinstance(got, BootEntry):
                took.append(got)
                got.part, got.expected_s = self.part_of(group).part, (
                    round(self.expects[id(group)].seconds, 1) if id(group) in self.expects else None)
                if got.guest_seconds:
                    got.started_s = round(max(0.0, ctx.writer.seconds() - got.guest_seconds), 1)
                self.on_boot(got)
            elif isinstance(got, Reports):
                with self.lock:
                    self.splats[got.cell.id] += [f"{r} ({got.when})" for r in got.lines]
            else:
                self.on_measured(*got)
        if took and not any(b.error or not b.guest_seconds for b in took):   # a failed boot took no part's time
            durations.record(ctx.cache, self.part_of(group), *durations.totals(took))

    def part_of(self, group: Group) -> durations.GuestWork:
        """``group`` as the schedule's records know it (measure/durations.py)."""
        ctx, cell = self.ctx, group.pairs[0][0]
        part = ("race" if group.at_once else "touched" if group.first else "page") if group.bare \
            else "tree" if group.later else "own"
        return durations.GuestWork(self.k.kernel_xy, self.page.name, part, "" if group.bare else cell.fs.name,
                              tuple(c.name for _, c in group.pairs),
                              durations.machine_key(ctx.cpus, ctx.memory_mb, ctx.accel, ctx.booter.name))

    def boot_cells(self, groups: list[Group]) -> None:
        """Every group's boots, ``ctx.guests`` at once of the farm's own checks
        and as many of the tree's, each free guest slot to the waiting group
        of lowest rank across the page sizes (GuestSlots): the farm's own
        checks' boots by page size and filesystem (their verdict is final
        first); the tree's checks, longest first."""
        ctx = self.ctx
        slots = ctx.slots or GuestSlots(ctx.guests)
        fs_rank = {c.fs.name: i for i, c in enumerate(self.k.cells)}
        records = durations.read(durations.path_of(ctx.cache))
        self.expects = {id(g): durations.expected(records, self.part_of(g), [c for _, c in g.pairs]) for g in groups}

        def rank(g: Group) -> tuple[Any, ...]:
            cell = g.pairs[0][0]
            if not g.later:
                return False, cell.page.bytes, self.label, fs_rank[cell.fs.name]
            # The tree's checks, longest first by their recorded times (the
            # catalogue's estimates on a first run: measure/durations.py), so
            # that the run's tail is about one part long; the tests a series
            # touches ahead of them all.
            return True, float("-inf") if g.first else -self.expects[id(g)].seconds, self.label, fs_rank[cell.fs.name]

        def in_slot(g: Group) -> None:
            with slots.slot(rank(g), queued=True):
                self.boot_cell(g, None)

        groups = sorted(groups, key=rank)
        what = f"{self.page.name} {self.kernel}{self.label}"
        if not ctx.booter.tree_checks and any(g.later or g.bare for g in groups):
            ctx.log(f"{what}: the tree's checks boot on the farm's own QEMU, not {ctx.booter.name}: they "
                    "need the outbox disk and a deadline per test", "yellow")
        ctx.log(f"booting {what}: {len(groups)} cell(s), {min(ctx.guests, len(groups))} guest(s) at a time",
                None)
        if ctx.guests == 1 and ctx.slots is None:
            for g in groups:
                self.boot_cell(g, ctx.status)
            return
        slots.queue([rank(g) for g in groups], self.page.name)
        with ctx.status(f"{what}: {len(groups)} cells, {ctx.guests} guests at a time"), \
                ThreadPoolExecutor(max_workers=max(1, len(groups)), thread_name_prefix="guest") as pool:
            for f in [pool.submit(in_slot, g) for g in groups]:
                f.result()

    def finish_cells(self, ids: list[str] | None = None) -> None:
        """Each cell's (of ``ids``: those booted) console outcome, and its
        checks in the catalogue's order."""
        w, order = self.ctx.writer, [chk.name for chk in self.ctx.checks]
        for cell in self.k.cells:
            if ids is not None and cell.id not in ids:
                continue
            w.record(cell, console_outcome(self.console(cell)), flush=False)
            w.order_checks(cell, order)     # as the catalogue lists them, whichever finished first
        w.flush()

    def console(self, cell: Cell) -> list[str]:
        """The reports on the consoles of ``cell``'s boots (and every boot's own)."""
        return self.boot_splats + self.splats.get(cell.id, [])

    def clean(self) -> bool:
        """No report on any console, no boot error, and every check measured."""
        return (not self.boot_splats and all(not b.error for b in self.boots)
                and all(m.kind in (Kind.DUMP, Kind.SKIP, Kind.KTAP) and not m.splats and not m.taint
                        for m in self.measured.values()))


def measure_kernel(ctx: Context, k: Kernel, reuse_base: bool, want_noise: bool) -> bool:
    """Measure ``k`` (or reuse its clean base measurements), and where it is the
    base of a comparison, its figures' noise. Returns False if anything could
    not be measured."""
    w = ctx.writer
    path = baseline_path(ctx, k)
    saved = load_saved(ctx, path, k) if reuse_base else None
    if saved is not None:
        known = history.known(ctx, k)
        for cell in k.cells:
            for chk in ctx.checks:
                m = saved.measurements[f"{cell.fs.name}/{chk.name}"]
                w.record(cell, history.judged(judge(ctx, k, cell, chk, m), cell.id, known), flush=False)
            w.record(cell, console_outcome([]), flush=False)
        if ctx.recorded is not None:
            ctx.recorded()
        w.add_boot(BootEntry(page_size=k.cells[0].page.name, kernel=k.cells[0].kernel, reused=str(path),
                             measured_by=saved.run_id, console_log=saved.console_log))
        ctx.log(f"{k.cells[0].page.name} {k.cells[0].kernel}: measurements reused from run "
                f"{saved.run_id} ({path.name}); --fresh measures again", None)
        measured, clean = saved.measurements, True
    else:
        earlier = load_saved(ctx, path, k, quiet=True)   # --fresh: what it replaces
        one = run_pass(ctx, k)
        measured, clean = one.measured, one.clean()
        if confirm.lockups(ctx, k, one, run_pass):
            clean = False        # its figures stand, but it is no base for later runs
        if k.side == Role.SERIES:
            confirm.series(ctx, k, run_pass)
        saved = new_saved(w.run_id, str(w.dir / "boots"), measured, earlier)
        if clean:
            # what it replaces stays a sample of the noise
            ranges = ranges_of(ctx, k, earlier) if earlier is not None else {}
            saved.ranges = fold(ranges, sample_figures(k.cells, ctx.checks, k.kernel_xy, measured))
    booted = [measured] if saved.run_id == w.run_id else []
    if want_noise and clean:
        if saved.repeat is None:
            ctx.log(f"{k.cells[0].page.name}: measuring the base again for the noise of each figure",
                    None)
            repeat, clean = boot_and_measure(ctx, k, label="-repeat")
            saved.repeat, saved.repeat_run_id = repeat, w.run_id
            booted.append(repeat)
            if clean:
                saved.ranges = fold(saved.ranges or {}, sample_figures(k.cells, ctx.checks, k.kernel_xy, repeat))
        saved.ranges = ranges = ranges_of(ctx, k, saved)
        n = min((r["samples"] for by in ranges.values() for r in by.values()), default=0)
        ctx.log(f"{k.cells[0].page.name}: the noise of each figure from {n} clean boots of the base "
                f"(runs {saved.run_id} and {saved.repeat_run_id or saved.run_id}"
                + (" and earlier" if n > 2 else "") + ")", None)
        record_noise(ctx, ranges)
    if len(booted) > 1 and k.side != Role.SERIES:
        history.judge_run(ctx, k, booted)     # every boot of this run judged (--noise)
    else:
        history.record_flaky(ctx, k)
    if clean:   # only a clean boot's measurements can serve as a base later
        save(path, saved)
    return all(m.kind != Kind.ERROR for m in measured.values())


def record_noise(ctx: Context, ranges: dict[str, Any]) -> None:
    """Per cell and check: how far each figure moved across the clean boots of
    the same base (0 for most figures under TCG), kept in results.json."""
    found = noise_of(ranges)
    ctx.writer.set_noise(found)
    ctx.writer.flush()


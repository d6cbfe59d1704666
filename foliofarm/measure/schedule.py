"""The planner: a run's guests replayed on a host of any size, to say how
long its boots would take there (`foliofarm run --dry-run --plan-cores N`,
`make bench`), and, every run, how long they should have taken here (the
results' "schedule" record, planned against real).

Each part (measure/durations.py GuestWork) is a job of so many seconds
alone (its wall time less what it waited for a core), keeping so many cores
busy meanwhile (its CPU time over that: a guest waits on I/O, on the host
reading its dumps, on its own sleeps). The planner does what the run does
(measure/cells.py GuestSlots): two pools of guest slots, the farm's own
checks' in their order (page size, then filesystem) and the tree's longest
first; a free slot goes to the next of its pool. The cores are shared the
way the host's scheduler shares them between the guests' threads: the own
checks' guests first (the tree's yield to them, boot/priority.py), each
at most its load, the rest shared in proportion among the tree's."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Iterable

from foliofarm.judge.catalogue import Check, is_own
from foliofarm.locks import guests_for, host_memory_mb
from foliofarm.measure import durations, split
from foliofarm.measure.durations import GuestWork
from foliofarm.results.schema import ScheduleRecord

# the host sizes the planner reports
CORES = (2, 4, 8, 16, 32)
EPSILON = 1e-9


@dataclass(frozen=True)
class Job:
    name: str
    seconds: float          # alone, on a host with cores to spare
    load: float = 1.0       # the cores it keeps busy meanwhile (its CPU time over that; the race part's two threads: up to 2)
    own: bool = False       # a cell's farm checks: ahead of the tree's, never waiting for them
    rank: tuple[Any, ...] = ()    # its place in its pool's line (lower first)
    ready: float = 0.0      # when its kernel was there to boot (built, or found built)


@dataclass
class Plan:
    cores: int
    own_guests: int
    tree_guests: int
    wall: float                         # the last job's end
    own_wall: float                     # the last own job's end: the farm's own checks' verdict
    ends: dict[str, float] = field(default_factory=dict)

    def bound(self, jobs: Iterable[Job]) -> float:
        """No schedule can do better: the longest job, or all the work spread
        over every core."""
        jobs = list(jobs)
        if not jobs:
            return 0.0
        return max(max(j.seconds for j in jobs), sum(j.seconds * j.load for j in jobs) / self.cores)


def in_line(jobs: Iterable[Job]) -> list[Job]:
    """The jobs in the order the run takes them: the own checks' by their
    rank, the tree's longest first."""
    return sorted(jobs, key=lambda j: (not j.own, j.rank if j.own else (-j.seconds, j.rank), j.name))


def _rates(running: list[Job], cores: int) -> dict[str, float]:
    own_threads = sum(j.load for j in running if j.own)
    tree_threads = sum(j.load for j in running if not j.own)
    own_rate = min(1.0, cores / own_threads) if own_threads else 0.0
    left = max(0.0, cores - own_threads * own_rate)
    tree_rate = min(1.0, left / tree_threads) if tree_threads else 0.0
    return {j.name: own_rate if j.own else tree_rate for j in running}


def simulate(jobs: Iterable[Job], cores: int, own_guests: int, tree_guests: int) -> Plan:
    """When each job ends on ``cores`` with that many guests at once."""
    line = in_line(jobs)
    waiting = {True: [j for j in line if j.own], False: [j for j in line if not j.own]}
    free = {True: max(1, own_guests), False: max(1, tree_guests)}
    left = {j.name: j.seconds for j in line}
    running: list[Job] = []
    now, ends = 0.0, {}
    while waiting[True] or waiting[False] or running:
        for pool in (True, False):
            for j in [j for j in waiting[pool] if j.ready <= now + EPSILON][:free[pool]]:
                waiting[pool].remove(j)
                running.append(j)
                free[pool] -= 1
        rates = _rates(running, cores)
        steps = [left[j.name] / rates[j.name] for j in running if rates[j.name] > 0]
        steps += [j.ready - now for pool in (True, False) for j in waiting[pool] if j.ready > now]
        step = min(steps)
        now += step
        for j in list(running):
            left[j.name] -= step * rates[j.name]
            if left[j.name] <= EPSILON * max(1.0, j.seconds):
                running.remove(j)
                free[j.own] += 1
                ends[j.name] = now
    own_ends = [ends[j.name] for j in line if j.own]
    return Plan(cores, own_guests, tree_guests, now, max(own_ends, default=0.0), ends)


def jobs_of(boots: Iterable[Any], expected: bool = False) -> list[Job]:
    """A run's guests as jobs, from its results' boots (those this run booted
    and timed), every boot of a part added up: each part's time alone (its
    wall time less what its busiest thread waited for a core; where that is
    not known, its CPU time over its threads) and the cores it kept busy
    (its CPU time over that), or with ``expected`` what the run expected of
    its time; each ready when the first guest of its kernel and page size
    started."""
    parts: dict[tuple[str, str, str, str], list[Any]] = {}
    for b in boots:
        if b.part and b.guest_seconds and b.started_s is not None:
            parts.setdefault((b.kernel, b.page_size, b.part, b.fs or ""), []).append(b)
    ready: dict[tuple[str, str], float] = {}
    for (kernel, page, _, _), bs in parts.items():
        first = min(float(b.started_s) for b in bs)
        ready[(kernel, page)] = min(ready.get((kernel, page), first), first)
    out = []
    for (kernel, page, part, fs), bs in parts.items():
        threads = durations.threads_of(part)
        cpu = sum(float(b.cpu_seconds) for b in bs) if all(b.cpu_seconds is not None for b in bs) else None
        if all(b.waited_seconds is not None for b in bs):
            secs = max(0.1, sum(float(b.guest_seconds) - float(b.waited_seconds) for b in bs))
            load = float(threads) if cpu is None else min(threads, max(0.05, cpu / secs))
        else:
            secs = cpu / threads if cpu is not None else sum(float(b.guest_seconds) for b in bs)
            load = float(threads)
        if expected:
            secs = float(bs[0].expected_s or 0.0)
        out.append(Job(f"{kernel} {page} {part} {fs}", secs, load, part == "own",
                       (ready[(kernel, page)], min(float(b.started_s) for b in bs)), ready[(kernel, page)]))
    return out


def real_wall(boots: Iterable[Any]) -> float:
    """When the run's last timed guest ended, in seconds since it began."""
    return max((float(b.started_s) + float(b.guest_seconds) for b in boots
                if b.part and b.guest_seconds and b.started_s is not None), default=0.0)


def for_hosts(jobs: list[Job], memory_mb: int, cores: Iterable[int] = CORES,
              mb_per_core: int | None = None) -> list[Plan]:
    """A plan for each host size, its guests as the farm's defaults would
    choose them there (locks.guests_for), on a host of ``mb_per_core`` (this
    host's memory per core unless given)."""
    if mb_per_core is None:
        mb_per_core = host_memory_mb() // (os.cpu_count() or 1) or 4096
    out = []
    for n in cores:
        own, tree = guests_for(n, n * mb_per_core, memory_mb)
        out.append(simulate(jobs, n, own, tree))
    return out


def table(jobs: list[Job], plans: list[Plan]) -> list[list[str]]:
    """Rows for the planner's table: cores, guests, the own checks' verdict,
    the whole verdict, and how near that is to the bound."""
    rows = [["cores", "guests", "own s", "whole s", "bound s", "ratio"]]
    for p in plans:
        b = p.bound(jobs)
        rows.append([str(p.cores), f"{p.own_guests}+{p.tree_guests}", f"{p.own_wall:.0f}", f"{p.wall:.0f}",
                     f"{b:.0f}", f"{p.wall / b:.2f}" if b else "-"])
    return rows


def record_of(boots: list[Any], cores: int, own_guests: int, tree_guests: int) -> ScheduleRecord | None:
    """The run's schedule, planned against real (None where no guest of it
    was timed: its measurements were reused, or a lab booted them)."""
    jobs = jobs_of(boots)
    if not jobs:
        return None
    return ScheduleRecord(cores=cores, own_guests=own_guests, tree_guests=tree_guests, parts=len(jobs),
                          planned_s=round(simulate(jobs_of(boots, expected=True), cores, own_guests,
                                                   tree_guests).wall, 1),
                          replayed_s=round(simulate(jobs, cores, own_guests, tree_guests).wall, 1),
                          real_s=round(real_wall(boots), 1))


def planned_jobs(records: dict[str, Any], kernel_xy: str, cells: list[tuple[str, str]],
                 checks: list[Check], machine: str) -> list[Job]:
    """The guests a run of ``checks`` on ``cells`` (page size, filesystem)
    would boot, grouped as measure/passes.py run_pass groups them, each
    expected to take its recorded time (durations.expected), the kernels ready
    at the start."""
    own = [c for c in checks if is_own(c)]
    tree = [c for c in checks if not is_own(c)]
    pages = list(dict.fromkeys(p for p, _ in cells))
    out = []

    def add(page: str, part: str, fs: str, group: list[Check], rank: tuple[Any, ...]) -> None:
        if not group:
            return
        work = GuestWork(kernel_xy, page, part, fs, tuple(c.name for c in group), machine)
        exp = durations.expected(records, work, group)
        out.append(Job(f"{page} {part} {fs}", exp.seconds, exp.load, part == "own", rank))
    for j, (page, fs) in enumerate(cells):
        add(page, "own", fs, own, (pages.index(page), j))
        add(page, "tree", fs, tree, (pages.index(page), j))
    for i, page in enumerate(pages):
        add(page, "page", "", [c for c in tree if split.splits(c)], (i,))
        add(page, "race", "", [c for c in tree if split.races(c)], (i,))
    return out


def plan_lines(jobs: list[Job], memory_mb: int, cores: Iterable[int]) -> list[str]:
    """The planner's table, as text: the expected wall time on each host size."""
    rows = table(jobs, for_hosts(jobs, memory_mb, cores))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    work = sum(j.seconds * j.load for j in jobs)
    return ([f"planner: {len(jobs)} guests, {work:.0f} guest core-seconds, the longest "
             f"{max((j.seconds for j in jobs), default=0):.0f} s (recorded times, else the catalogue's "
             "estimates); guests: own checks' + tree's; own s: the farm's own checks' verdict; "
             "whole s: every verdict; bound s: the longest guest or the work over the cores"]
            + ["  " + "  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in rows])

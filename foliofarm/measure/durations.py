"""How long each part of a page size's work took, kept in the cache so that
the next run schedules the longest first and the planner replays them
(measure/schedule.py).

A part is one guest's work (measure/passes.py Pass.part_of): a cell's farm
checks ("own"), a cell's tree checks ("tree"), the split selftests' bare
guests ("page", "race", and "touched": a series' touched tests, first). Its record is keyed by the kernel's version, the
page size, the part, the cell's filesystem and the checks it ran, and by the
guest's machine (vCPUs, memory, accelerator): a series' kernel of the same
version takes about the base's time, so a first series needs no run of its
own. It keeps the last few of each: the guest's wall time, the host CPU
time QEMU used, and its wall time less what it waited for a core. Where there is none, the catalogue's estimate stands in
(checks.toml ``estimate``, seconds on one core).

CACHE/durations.json, written whole under a lock (runs at once share it)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from foliofarm.judge.catalogue import Check
from foliofarm.kept import locked_beside, read_kept
from foliofarm.util import sha256_text, write_json

VERSION = 1
KEEP = 5            # the last runs' times each record keeps
DEFAULT_ESTIMATE = 5.0    # a check's seconds where its row gives none


@dataclass(frozen=True)
class GuestWork:
    """One guest's share of a page size's work, as the schedule sees it."""
    kernel_xy: str
    page: str
    part: str           # own, tree, page, race
    fs: str             # the cell's filesystem; "" for the page and race parts
    checks: tuple[str, ...]
    machine: str        # the guest's vCPUs, memory and accelerator

    @property
    def key(self) -> str:
        return " ".join([self.kernel_xy, self.page, self.part, self.fs or "-",
                         sha256_text(",".join(self.checks), self.machine)[:12]])

    @property
    def threads(self) -> int:
        return threads_of(self.part)


def threads_of(part: str) -> int:
    """The host threads a part keeps busy: the race part's vCPUs each have one."""
    return 2 if part == "race" else 1


def machine_key(cpus: int, memory_mb: int, accel: str, booter: str) -> str:
    """The guest's machine, as a record's key names it."""
    return f"{cpus} cpus {memory_mb} MB {accel} {booter}"


def path_of(cache: Path) -> Path:
    return cache / "durations.json"


def read(path: Path) -> dict[str, Any]:
    """The records as kept (kept.read_kept: a damaged file is started again)."""
    return read_kept(path, VERSION, {"parts": {}})


def record(cache: Path, part: GuestWork, wall: float, cpu: float | None, waited: float | None = None) -> None:
    """Add one guest's times to ``part``'s record: its wall time, its CPU
    time, and its wall time less what it waited for a core (as if alone)."""
    path = path_of(cache)
    with locked_beside(path):
        doc = read(path)
        rec = doc["parts"].setdefault(part.key, {"wall": [], "cpu": []})
        rec["wall"] = (rec.get("wall", []) + [round(wall, 2)])[-KEEP:]
        if cpu is not None:
            rec["cpu"] = (rec.get("cpu", []) + [round(cpu, 2)])[-KEEP:]
        if waited is not None:
            rec["alone"] = (rec.get("alone", []) + [round(max(0.0, wall - waited), 2)])[-KEEP:]
        write_json(path, doc)


def totals(boots: list[Any]) -> tuple[float, float | None, float | None]:
    """A part's boots added up: wall, CPU and waited seconds (None where a
    boot of it lacks the figure)."""
    def total(name: str) -> float | None:
        got = [getattr(b, name) for b in boots]
        return None if any(g is None for g in got) else float(sum(got))
    return total("guest_seconds") or 0.0, total("cpu_seconds"), total("waited_seconds")


def catalogue_estimate(part: GuestWork, checks: Iterable[Check]) -> float:
    """Seconds on one core the catalogue gives the part's checks: each row's
    ``estimate`` for the part ("cell" for a cell's own or tree checks)."""
    which = part.part if part.part in ("page", "race") else "cell"
    return sum(float(c.estimate.get(which, DEFAULT_ESTIMATE)) for c in checks)


@dataclass(frozen=True)
class Expected:
    """What a part is expected to take: its wall time alone on a host with
    cores to spare, the cores it keeps busy meanwhile (its CPU time over that:
    less than its threads where it waits on I/O, the host or its own sleeps),
    whether it was measured (else the catalogue's estimate), and how many
    times longer than alone it took in this host's runs (its wall time over
    its time alone: the other guests' and the builds' share of the cores;
    1.0 where not measured)."""
    seconds: float
    load: float
    measured: bool
    slowdown: float = 1.0


def expected(records: dict[str, Any], part: GuestWork, checks: Iterable[Check]) -> Expected:
    """The median of ``part``'s records: its time alone where known (wall
    less waiting for a core), else its CPU time over its threads, else its
    wall time; the catalogue's estimate where it has none."""
    rec = records.get("parts", {}).get(part.key) or {}
    cpu = statistics.median(rec["cpu"]) if rec.get("cpu") else None
    if rec.get("alone"):
        alone = max(0.1, statistics.median(rec["alone"]))
        slow = max(1.0, statistics.median(rec["wall"]) / alone) if rec.get("wall") else 1.0
        return Expected(alone, part.threads if cpu is None else min(part.threads, max(0.05, cpu / alone)), True,
                        slow)
    if cpu is not None:
        return Expected(cpu / part.threads, part.threads, True)
    if rec.get("wall"):
        return Expected(statistics.median(rec["wall"]), part.threads, True)
    return Expected(catalogue_estimate(part, checks), part.threads, False)

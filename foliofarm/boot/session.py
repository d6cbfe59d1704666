"""Boots of one kernel serving its cells: verify the guest, run each check,
bring its KTAP output and dump home with what the kernel reported meanwhile.

A hang or panic costs the check that was running, nothing more: that check is
an error with the console excerpt (and its cell's console check fails with the
report), and the checks still to run get a fresh boot. Measurements are handed
to the caller as they arrive, so a killed run leaves what it had."""

from __future__ import annotations

import math
import os
import re
import shlex
import time
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterator

from foliofarm import matrix
from foliofarm.errors import GuestError
from foliofarm.boot import gcov, priority, splat
from foliofarm.boot.console import DUMP_CAP, CommandResult, GuestSession, OverCap
from foliofarm.boot.qemu import SELFTESTS, THPMAPS, Machine
from foliofarm.judge.measurement import Measurement, error
from foliofarm.results.schema import BootEntry
from foliofarm.judge.catalogue import Check, Kind
from foliofarm.matrix import Cell

# How many boots one kernel gets before the rest of its checks are given up:
# a kernel that dies on every check should not boot a hundred times.
MAX_BOOTS = 20


def load_now(boot: BootEntry) -> None:
    """The host's load per core, now, added to the boot's record."""
    boot.host_load.append(host_load())


def host_load() -> float:
    """The host's 1-minute load average per core."""
    try:
        return round(os.getloadavg()[0] / (os.cpu_count() or 1), 2)
    except OSError:
        return -1.0


def check_timeout(chk: Check, base_seconds: float | None) -> float:
    """A check's deadline: its catalogue timeout, or where the base run measured
    it, that time plus a margin (twice it, at least 30 s and at most 55 s more),
    so a hang costs the check's usual time plus under a minute; a selftests
    run gets twice its base time and a minute."""
    if base_seconds is None:
        return chk.timeout
    if chk.tree == "selftests":
        # minutes of many programs, each under its own deadline in the guest:
        # their time varies more than a farm check's, so twice the base's
        return min(chk.timeout, 2 * base_seconds + 60)
    return min(chk.timeout, max(base_seconds + 30, min(2 * base_seconds, base_seconds + 55)))


def verify_guest(session: GuestSession, page: matrix.PageSize) -> None:
    b = session.banner
    if b.get("page_size") != str(page.bytes):
        raise GuestError(f"guest reports page size {b.get('page_size')}, expected {page.bytes}: "
                         "the kernel was not built for this page size")
    if b.get("probe") != "loaded":
        raise GuestError("the page-table probe module did not load", session._excerpt())


def trouble_of(results: list[CommandResult]) -> dict[str, Any]:
    """What the kernel reported while a check's commands ran: new taint letters,
    the reports' first lines, and the kernel log lines that carry them."""
    taint = 0
    splats: list[str] = []
    log: list[str] = []
    for r in results:
        taint |= r.new_taint
        splats += [f"{s.kind}: {s.line}" for s in r.splats]
        log += [s.excerpt for s in r.splats]
    return {"taint": splat.taint_letters(taint), "taint_mask": taint,
            "splats": splats, "kernel_log": "\n".join(log)[-6000:]}


def measure(g: GuestSession, cell: Cell, chk: Check, timeout: float) -> Measurement:
    """Run one check's guest program and fetch its dump: what the guest saw, not
    yet judged. kind: "dump", "skip" or "error"; "taint", "splats" and
    "kernel_log" say what the kernel reported while it ran."""
    first = len(g.history)
    m = _measure(g, cell, chk, timeout)
    return m.model_copy(update=trouble_of(g.history[first:]))


def mounted(g: GuestSession, serial: str) -> bool:
    """The guest's banner says the disk of ``serial`` is mounted at /mnt/<serial>."""
    return g.banner.get(f"mount:{serial}", "FAILED") != "FAILED"


def _measure(g: GuestSession, cell: Cell, chk: Check, timeout: float) -> Measurement:
    dev = g.banner.get(f"mount:{cell.fs.name}")
    bare = chk.options.get("part") in ("page", "race", "touched")   # split.py: a guest with no cell filesystem
    if (not dev or dev == "FAILED") and not bare:
        return error(f"{cell.fs.name} is not mounted in the guest")
    fmt = check_fmt(cell, chk, dev or "", lambda serial: mounted(g, serial))
    if chk.tree == "selftests":
        return _run_selftests(g, chk, fmt, timeout)
    if chk.tree == "thpmaps" and not mounted(g, THPMAPS):
        return error("the thpmaps disk is not mounted in the guest")
    for line in setup_lines(chk, fmt):
        pre = g.run(line, timeout=60)
        if pre.status != 0:
            return error(f"setup {line!r} exited {pre.status}: {pre.output[-300:]}")
    res = g.run(command_line(chk, fmt), timeout=timeout)
    if (ended := without_dump(res.output, res.status)) is not None:
        return Measurement(kind=ended[0], reason=ended[1], ktap=res.output, seconds=round(res.seconds, 2))
    t0 = time.monotonic()
    try:        # at most its row's dump_kb: a dump the program (or what it left) made huge is an error
        text = g.read_file(fmt["dump"], limit=int(chk.options.get("dump_kb", DUMP_CAP >> 10)) << 10)
    except OverCap as exc:
        return error(str(exc), ktap=res.output, seconds=round(res.seconds, 2))
    return Measurement(kind=Kind.DUMP, ktap=res.output, seconds=round(res.seconds, 2), dump=text,
                       transfer_seconds=round(time.monotonic() - t0, 2))


def without_dump(output: str, status: int) -> tuple[Kind, str] | None:
    """A farm program's run that leaves no dump to read: an error (it exited
    non-zero or reported "not ok") or a skip, from its KTAP output, and why;
    None when its dump is to be read."""
    ktap = parse_ktap(output)
    if status != 0 or ktap.get("not_ok"):
        return Kind.ERROR, f"guest program exited {status}: " + "; ".join(ktap.get("diag", [])[-3:])
    if ktap.get("skip"):
        return Kind.SKIP, ktap["skip"]
    return None


def check_fmt(cell: Cell, chk: Check, dev: str, mounted_serial: Callable[[str], bool]) -> dict[str, Any]:
    """What a check's program and arguments are formatted with in ``cell``'s
    guest: ``dev`` the block device of the cell's disk, ``mounted_serial``
    whether the disk of a serial is mounted at /mnt/<serial>."""
    fs = cell.fs.name
    return {"mnt": f"/mnt/{fs}", "fs": fs, "dev": dev, "dump": f"/tmp/out/{chk.name}-{fs}.dump",
            "anon_mthp_kb": cell.page.anon_mthp_kb,
            # the contpte block, for tools/mm/thpmaps --cont
            "cont_kb": cell.page.cont_pte_pages * cell.page.bytes // 1024,
            # the stub file on the writable attachment, "-" where there is none (erofs)
            "wfile": f"/mnt/{fs}-rw/stubs.bin" if mounted_serial(f"{fs}-rw") else "-",
            # the writable attachment's folder, "-" where there is none (erofs)
            "wmnt": f"/mnt/{fs}-rw" if mounted_serial(f"{fs}-rw") else "-",
            # the selftests' empty filesystem of the cell's type, "-" where there is none
            "wdir": f"/mnt/{fs}-mm" if mounted_serial(f"{fs}-mm") else "-",
            **{k: v for k, v in chk.options.items() if isinstance(v, (str, int, float))}}


def setup_lines(chk: Check, fmt: dict[str, Any]) -> list[str]:
    return [line.format(**fmt) for line in chk.options.get("setup", [])]


def command_line(chk: Check, fmt: dict[str, Any]) -> str:
    """The shell command that runs ``chk``: a program with a path runs from
    the filesystem under test (or a tree's disk), others from the initramfs."""
    program = chk.program.format(**fmt) if "/" in chk.program else f"/ff/{chk.program}"
    return shlex.join([program, *(a.format(**fmt) for a in chk.args)])


# What a selftests driver leaves for the host (tests/vmtests/mm-selftests.sh).
SELFTESTS_OUTPUT = "/tmp/out/mm-selftests.ktap"


def _run_selftests(g: GuestSession, chk: Check, fmt: dict[str, Any], timeout: float) -> Measurement:
    """A selftests run: its KTAP, whole (kind "ktap"); the host parses it. The
    driver prints it on the console too, so a run the kernel cuts short
    leaves what it printed (session.run_boots keeps the console since then)."""
    if not mounted(g, SELFTESTS):
        return error("the selftests disk is not mounted in the guest")
    res = g.run(command_line(chk, fmt), timeout=timeout)
    seconds = round(res.seconds, 2)
    if res.status != 0:
        return error(f"the selftests driver exited {res.status}: {res.output.strip()[-300:]}",
                     ktap=res.output, seconds=seconds)
    t0 = time.monotonic()
    text = g.read_file(SELFTESTS_OUTPUT, timeout=120)
    return Measurement(kind=Kind.KTAP, ktap=text, seconds=seconds, transfer_seconds=round(time.monotonic() - t0, 2))


KTAP_RESULT = re.compile(r"^(not ok|ok) (\d+) (\S+)(?: # (.*))?$")


def parse_ktap(text: str) -> dict[str, Any]:
    out: dict[str, Any] = {"results": [], "diag": []}
    for line in text.splitlines():
        line = line.strip()
        if m := KTAP_RESULT.match(line):
            ok = m.group(1) == "ok"
            directive = m.group(4) or ""
            out["results"].append((ok, m.group(3), directive))
            if not ok:
                out["not_ok"] = True
            elif directive.upper().startswith("SKIP"):
                out["skip"] = directive[4:].strip() or "skipped"
        elif line.startswith("# "):
            out["diag"].append(line[2:])
    return out


# One check's measurement on one cell, as run_boots yields it.
Measured = tuple[Cell, Check, Measurement]


@dataclass
class BootPlan:
    """One group's boots, whoever boots them (protocol.py): the guest, where
    console logs go, and the (cell, check) pairs to measure, in order."""
    log_stem: Path                      # boots/<page>-<fs>-<kernel>; attempts add .2, .3, ...
    page: matrix.PageSize
    kernel: str
    pairs: list[tuple[Cell, Check]]
    machine: Machine | None = None      # the guest the farm's QEMU would boot (without its outbox)
    argv: list[str] = field(default_factory=list)   # the command line booted (the machine's, with the outbox)
    labels: dict[str, str] = field(default_factory=dict)  # what the run says of the kernel (a lab job's metadata)
    boot_timeout: float = 300
    timeouts: dict[tuple[str, str], float] = field(default_factory=dict)  # (fs, check) -> s
    pace: float = 1.0                   # how many times longer than alone its part took before (paced)
    qemu: str = ""
    outbox: Path | None = None          # the outbox disk's file, where the argv attaches one
    fs: str | None = None               # what its boots are named for, if not the pairs' filesystems
    tree: bool = False                  # the tree's checks: the guest yields to the own checks' (priority.py)
    claim: bool = False                 # a race part: the other tree guests yield to it
    coverage: bool = False              # a coverage kernel's: its gcov counters brought home (gcov.py)
    session: type[GuestSession] = GuestSession   # the console tests' stand-in guest subclasses it

    def console_log(self, attempt: int) -> Path:
        suffix = "" if attempt == 1 else f".{attempt}"
        return self.log_stem.with_name(f"{self.log_stem.name}{suffix}.console.log")


def took(boot: BootEntry, g: GuestSession) -> None:
    """The guest's wall time, the host CPU time it used and how long it
    waited for a core (the schedule's record of this part, measure/durations.py)."""
    boot.guest_seconds = round(g.guest_seconds, 2)
    boot.cpu_seconds = None if g.cpu_seconds is None else round(g.cpu_seconds, 2)
    boot.waited_seconds = None if g.waited_seconds is None else round(g.waited_seconds, 2)


def run_boots(boots: BootPlan, status: Callable[[str], Any] | None = None) -> Iterator[BootEntry | Measured]:
    """Measure every pair of ``boots``, booting again after a check that hangs or
    crashes the guest. Yields each measurement as it arrives (the guest still
    up: the caller records it then), and each boot after it ends; a check that
    ended its boot gets kind "crash" (the kernel hung or panicked) or "error"
    (the farm lost the guest), with "ended_boot" set. The caller pulls: booting
    calls nothing of measuring's."""
    pending = list(boots.pairs)
    attempt = 0
    while pending:
        attempt += 1
        log = boots.console_log(attempt)
        boot = BootEntry(page_size=boots.page.name, kernel=boots.kernel, console_log=str(log),
                         fs=boots.fs or ",".join(dict.fromkeys(c.fs.name for c, _ in pending)),
                         qemu=boots.qemu, attempt=attempt, taint=0)
        if attempt > MAX_BOOTS:
            for cell, chk in pending:
                yield cell, chk, error(f"not run: the kernel hung or crashed in {MAX_BOOTS} boots in a row")
            return
        try:
            with boots.session(boots.argv, log, boots.boot_timeout, outbox=boots.outbox,
                               tree=boots.tree, claim=boots.claim) as g:
                boot.boot_seconds = round(g.boot_seconds, 2)
                load_now(boot)
                boot.banner = g.banner
                boot.boot_splats = [f"{s.kind}: {s.line}" for s in g.splats]
                boot.taint = g.taint
                verify_guest(g, boots.page)
                yield from run_checks(g, boots, pending, boot, status)
            took(boot, g)
        except GuestError as exc:
            # The boot itself failed (no shell, wrong page size, no probe): no
            # further boot would do better.
            boot.error = str(exc)
            load_now(boot)
            yield boot
            # A kernel that panics or hangs while booting is a verdict on the
            # kernel ("crash"); one the farm could not start is an error.
            reports = boot_reports(exc) if exc.kernel_fault else []
            words = last_words(exc.excerpt, reports) if exc.kernel_fault else ""
            for cell, chk in pending:
                yield cell, chk, Measurement(kind=Kind.CRASH if exc.kernel_fault else Kind.ERROR,
                                             reason=f"boot failed: {exc}" + (f": {words}" if words else ""),
                                             excerpt=exc.excerpt, boot_failed=True, splats=reports)
            return
        load_now(boot)
        yield boot



def run_checks(g: GuestSession, boots: BootPlan, pending: list[tuple[Cell, Check]], boot: BootEntry,
               status: Callable[[str], Any] | None) -> Iterator[Measured]:
    """Run the pending checks in one booted guest, taking each off ``pending``
    as it is measured, until one hangs or crashes the guest (it alone pays:
    its boot ends)."""
    while pending:
        cell, chk = pending[0]
        timeout = boots.timeouts.get((cell.fs.name, chk.name), chk.timeout)
        t0 = time.monotonic()
        seen = len(g.splats)
        mark = g.console_mark()
        try:
            with status(f"{cell.id}: {chk.name}") if status else nullcontext():
                m = measured(g, boots, cell, chk, timeout, boot.attempt)
        except GuestError as exc:
            # kind "crash": the kernel hung or panicked (a verdict on the
            # kernel); "error": the farm lost the guest otherwise.
            m = Measurement(kind=Kind.CRASH if exc.kernel_fault else Kind.ERROR,
                            reason=str(exc), excerpt=exc.excerpt, ended_boot=True,
                            seconds=round(time.monotonic() - t0, 2),
                            splats=[f"{s.kind}: {s.line}" for s in g.splats[seen:]],
                            kernel_log=exc.excerpt, console=g.console_since(mark))
            pending.pop(0)
            boot.ended_by = f"{cell.fs.name}/{chk.name}"
            boot.error = str(exc)
            yield cell, chk, m
            return
        pending.pop(0)
        yield cell, chk, m


def measured(g: GuestSession, boots: BootPlan, cell: Cell, chk: Check, timeout: float,
             attempt: int) -> Measurement:
    """One check measured; in a coverage kernel's guest, what it executed
    brought home beside the run (boot/gcov.py): a farm check's counters from
    zero, the selftests' one test at a time (their driver saves each)."""
    if not (boots.coverage and gcov.on(g)):     # the run's coverage kernel, not a guest's say-so
        return measure(g, cell, paced(chk, boots.pace, g), timeout)
    own = chk.tree != "selftests"
    if own:
        gcov.reset(g)
    m = measure(g, cell, paced(chk, boots.pace, g), timeout)
    if own:
        gcov.save(g, f"ck-{len(g.history)}", chk.name)
    gcov.fetch(g, gcov.where(boots.log_stem, attempt), cell, chk.name)
    return m


# The most a selftest's deadline is stretched (paced): a test that hangs on an
# overloaded host still costs at most this many times the catalogue's deadline.
MAX_PACE = 4.0


def paced(chk: Check, pace: float, g: GuestSession) -> Check:
    """``chk`` with its per-test deadline (a selftests run's ``test_timeout``,
    checks.toml) stretched by how many times longer than alone this guest
    runs: the larger of what its part took over its time alone in this
    host's earlier runs (``pace``, measure/durations.py) and what its vCPU
    has waited for a core since it started (priority.slowdown), at most
    MAX_PACE. The catalogue's deadline is for a guest with a core of its
    own; with more guests and builds than cores a test takes longer by as
    much (cow on 64K: 309 s, killed, where it takes 130 s alone)."""
    base = chk.options.get("test_timeout")
    if not isinstance(base, int) or isinstance(base, bool):
        return chk
    child = getattr(g, "child", None)
    now = priority.slowdown(child.pid) if child is not None else None
    factor = min(MAX_PACE, max(1.0, pace, now or 1.0))
    return replace(chk, options={**chk.options, "test_timeout": math.ceil(base * factor)})


def boot_reports(exc: GuestError) -> list[str]:
    return [f"{s.kind}: {s.line}" for s in splat.scan(exc.excerpt)]


def last_words(excerpt: str, reports: list[str]) -> str:
    """What a kernel that died while booting said last, in one line: its first
    report (the BUG, not the panic that follows it), else its last line."""
    if reports:
        return reports[0]
    lines = [ln.strip() for ln in excerpt.splitlines() if ln.strip()]
    return lines[-1][:300] if lines else "it printed nothing (not even to the early console)"

"""Kernel reports and taint, replayed from real consoles: every report kind of
configs/kernels/splats.toml has a console recorded from a real boot of each
supported kernel (tools/record_splats.py with the ffsplat module), and the real
splat code must name each one, and nothing in an ordinary boot."""

import re
from pathlib import Path

import pytest

from foliofarm.boot import splat

CONSOLES = Path(__file__).resolve().parent / "data" / "consoles"
SPLATS = CONSOLES / "splats"
# Versions whose every report kind is recorded.
RECORDED = ("6.12", "7.2", "7.3")


def recordings() -> list[tuple[str, str, Path]]:
    return [(ver, p.stem, p) for ver in RECORDED for p in sorted((SPLATS / ver).glob("*.log"))
            if not p.name.startswith("boot-")]


def test_every_kind_is_recorded_for_every_version():
    kinds = set(splat.kinds())
    for ver in RECORDED:
        have = {p.stem for p in (SPLATS / ver).glob("*.log")}
        assert kinds <= have, f"{ver}: no recording of {sorted(kinds - have)}"


@pytest.mark.parametrize("ver,kind,path", recordings(), ids=lambda v: str(v).split("/")[-1])
def test_recorded_report_is_named(ver, kind, path):
    found = splat.scan(path.read_text())
    assert found, f"{path}: no report found"
    assert found[0].kind == kind, f"{path}: first report {found[0].kind}: {found[0].line}"


def test_the_7x_warning_layout_and_the_612_layout():
    """The line that went unseen before: 7.x prints file:line first."""
    assert splat.classify("WARNING: mm/filemap.c:3408 at filemap_fault+0x4f0/0xc84, CPU#0: exec-text/92") \
        == "warning"
    assert splat.classify("WARNING: CPU: 0 PID: 93 at mm/filemap.c:3412 filemap_fault+0x5c4/0x8a0") \
        == "warning"
    assert splat.classify("WARNING: at kernel/foo.c:1, CPU#1: sh/5") == "warning"


def test_an_ordinary_boot_has_no_report():
    for ver in RECORDED:
        for boot in (SPLATS / ver).glob("boot-*.console.log"):
            # the boot itself, up to the shell: nothing the farm would call a report
            head = boot.read_text().split("FOLIOFARM-READY")[0]
            assert splat.scan(head) == [], boot
    assert splat.scan((CONSOLES / "boot-7.3-4k.log").read_text()) == []


def test_ordinary_lines_are_not_reports():
    text = "\n".join([
        "FOLIOFARM mounted xfs vdb", "ok 1 exec-text", "# touches 64 faults 64",
        "XFS (vdb): Mounting V5 Filesystem", "EXT4-fs (vda): mounted filesystem r/o",
        "debug: BUGS_fixed=3", "no WARNINGS here", "rcu: Hierarchical RCU implementation.",
        "kfence: initialized - using 2097152 bytes for 255 objects",
    ])
    assert splat.scan(text) == []


@pytest.mark.parametrize("mask,letters", [(0, ""), (4096, "O"), (4096 | 512, "WO"),
                                          (1 << 7 | 1 << 14, "DL"), (1 << 19, "J"), (1 << 25, "#25")])
def test_taint_letters(mask, letters):
    assert splat.taint_letters(mask) == letters


def test_new_taint_ignores_the_farms_own_modules():
    assert splat.new_taint(0, 4096 | 8192) == 0
    assert splat.new_taint(4096, 4096 | 512) == 512
    assert splat.new_taint(4096 | 512, 4096 | 512) == 0      # sticky: already there
    assert "W (WARN)" in splat.describe_taint(512)


# The taint each trigger adds, from the kernel's code: the lockup detector's L
# (kernel/watchdog.c), __warn()'s W, die()'s D, __might_resched()'s W, and
# KASAN's B (mm/kasan/report.c end_report()).
TAINT_OF = {"softlockup": "L", "warn": "W", "bug": "D", "sleep": "W", "kasan": "B"}
FRAME_END = re.compile(r"FFE[0-9a-f]{12} (\d+) (-?\d+)")
TRIGGER = re.compile(r"^ffsplat: ([a-z-]+)$")


def frames(log: str) -> list[tuple[str, int]]:
    """(trigger, taint after it) from a recorded boot's framed commands: each
    command's end frame carries the taint, and the kernel log read after it
    names the trigger."""
    out, taint = [], None
    for line in log.splitlines():
        if m := FRAME_END.search(line):
            taint = int(m.group(2))
        elif (m := TRIGGER.match(line.strip())) and taint is not None:
            out.append((m.group(1), taint))
            taint = None
    return out


@pytest.mark.parametrize("ver", RECORDED)
def test_recorded_taint_of_each_trigger(ver):
    """The taint read back after each recorded trigger, through the farm's own
    taint code: the letter the kernel adds for that report, and the farm's
    module loads never counted as new."""
    seen = {}
    for boot in (SPLATS / ver).glob("boot-*.console.log"):
        prev = None
        for trigger, taint in frames(boot.read_text()):
            seen[trigger] = (prev, taint)
            prev = taint
    assert set(TAINT_OF) <= set(seen), f"{ver}: no frames for {sorted(set(TAINT_OF) - set(seen))}"
    for trigger, letter in TAINT_OF.items():
        before, after = seen[trigger]
        assert letter in splat.taint_letters(after), (ver, trigger, after)
        if before is not None and letter not in splat.taint_letters(before):
            assert letter in splat.taint_letters(splat.new_taint(before, after)), (ver, trigger)
        assert "O" not in splat.taint_letters(splat.new_taint(before or 0, after))


def test_a_warn_in_mm_code_on_the_7x_console():
    """A real WARN_ON_ONCE in filemap_fault() on 64K (the warn-exec-order-zero
    mutant), as the farm read it after exec-text: the layout that went unseen."""
    found = splat.scan((CONSOLES / "mm-warn-7.3-64k.log").read_text())
    assert [s.kind for s in found] == ["warning"]
    assert found[0].line.startswith("WARNING: mm/filemap.c:") and "at filemap_fault+" in found[0].line

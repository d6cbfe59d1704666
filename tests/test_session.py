"""Boots, checks and what the kernel reports meanwhile, through the real session
code (foliofarm/boot/session.py, console.py): a stand-in guest replays a
recorded boot console and then runs commands as the guest's shell would; a
stand-in check program plays the kernel's part where a test needs a report
(a recorded 7.3 WARN appended to the kernel log, the WARN taint set)."""

from pathlib import Path

import pytest

from foliofarm.matrix import cell_of
from foliofarm.results.schema import BootEntry
from foliofarm import matrix
from foliofarm.boot.console import GuestSession
from foliofarm.boot.session import MAX_PACE, BootPlan, check_timeout, paced, run_boots
from foliofarm.judge import catalogue
from foliofarm.judge.catalogue import Check
from foliofarm.judge.checks import judge_measurement
from foliofarm.matrix import Cell

DATA = Path(__file__).resolve().parent / "data"
CONSOLES = DATA / "consoles"
FAKE = DATA / "guest" / "fake-check"
WARN_73 = CONSOLES / "splats" / "7.3" / "warning.log"


def standin(tmp_path: Path) -> type[GuestSession]:
    """A GuestSession whose taint and kernel log are files in tmp_path."""
    (tmp_path / "tainted").write_text("4096\n")
    (tmp_path / "klog").write_text("")

    class StandIn(GuestSession):
        console_cap = 2 << 20          # 2 MB here, 64 MB in the farm
        taint_file = str(tmp_path / "tainted")
        kernel_log_command = f"cat {tmp_path / 'klog'}; : > {tmp_path / 'klog'}"
    return StandIn


def fake(tmp_path: Path, name: str, mode: str, timeout: float = 30) -> Check:
    args = (str(tmp_path / "klog"), str(tmp_path / "tainted"), mode, "{dump}", str(WARN_73))
    return Check(name=name, program=str(FAKE), args=args, timeout=timeout, description=name)


def plan(tmp_path: Path, pairs, timeouts=None) -> BootPlan:
    page = matrix.page_sizes()["4k"]
    return BootPlan(argv=["sh", str(CONSOLES / "replay.sh"), str(CONSOLES / "boot-7.3-4k.log"), "shell"],
                    log_stem=tmp_path / "boots" / "4k-7.3", page=page, kernel="7.3", pairs=pairs,
                    boot_timeout=20, timeouts=timeouts or {}, session=standin(tmp_path))


def cells() -> dict[str, Cell]:
    page = matrix.page_sizes()["4k"]
    return {fs: Cell(page, f, "7.3") for fs, f in matrix.filesystems().items()}


def run(p: BootPlan):
    got, boots = [], []
    for x in run_boots(p):
        if isinstance(x, BootEntry):
            boots.append(x)
        else:
            c, k, m = x
            got.append((c.id, k.name, m))
    return got, boots


def test_a_warn_fails_the_check_that_ran_and_names_taint_and_line(tmp_path):
    c = cells()
    ok, warn = fake(tmp_path, "quiet", "ok"), fake(tmp_path, "warns", "warn")
    got, boots = run(plan(tmp_path, [(c["xfs"], ok), (c["xfs"], warn), (c["ext4"], ok)]))
    assert [(cid, name, m.kind) for cid, name, m in got] == [
        ("4k-xfs-7.3", "quiet", "dump"), ("4k-xfs-7.3", "warns", "dump"), ("4k-ext4-7.3", "quiet", "dump")]
    quiet, warned, after = (m for _, _, m in got)
    assert quiet.taint == "" and quiet.splats == []
    assert warned.taint == "W"
    line = next(ln for ln in WARN_73.read_text().splitlines() if ln.startswith("WARNING: "))
    assert warned.splats == [f"warning: {line}"]
    # the WARN taint stays set, but a later check is not blamed for it
    assert after.taint == "" and after.splats == []
    assert len(boots) == 1 and not boots[0].error
    # judged as exec-text on a real dump whose figures pass: the WARN fails it
    exec_text = catalogue.by_name()["exec-text"]
    dump = (DATA / "dumps" / "4k-xfs-7.3.exec-text.dump").read_text()
    assert judge_measurement(exec_text, quiet.model_copy(update={"dump": dump}), cell_of("4k", "xfs", "7.3"), "7.3").outcome == "pass"
    out = judge_measurement(exec_text, warned.model_copy(update={"dump": dump}), cell_of("4k", "xfs", "7.3"), "7.3")
    assert out.outcome == "fail"
    assert "kernel tainted W" in out.reason and line in out.reason


def test_a_hang_costs_its_check_and_the_rest_run_on_a_fresh_boot(tmp_path):
    c = cells()
    ok, hang = fake(tmp_path, "quiet", "ok"), fake(tmp_path, "hangs", "hang")
    p = plan(tmp_path, [(c["xfs"], ok), (c["xfs"], hang), (c["xfs"], ok), (c["erofs"], ok)],
             timeouts={("xfs", "hangs"): 3})
    got, boots = run(p)
    kinds = [(cid, name, m.kind) for cid, name, m in got]
    assert kinds == [("4k-xfs-7.3", "quiet", "dump"), ("4k-xfs-7.3", "hangs", "crash"),
                     ("4k-xfs-7.3", "quiet", "dump"), ("4k-erofs-7.3", "quiet", "dump")]
    hung = got[1][2]
    assert hung.ended_boot and "did not finish within 3s" in hung.reason
    assert [b.attempt for b in boots] == [1, 2]
    assert boots[0].ended_by == "xfs/hangs" and not boots[1].error
    # the host's load, at the shell and at the end of each boot
    assert all(len(b.host_load) == 2 and all(x >= 0 for x in b.host_load) for b in boots)
    assert (tmp_path / "boots" / "4k-7.3.2.console.log").is_file()
    assert judge_measurement(hang, hung, cell_of("4k", "xfs", "7.3"), "7.3").outcome == "fail"


def test_a_guest_that_dies_without_a_kernel_report_is_an_error_not_a_verdict(tmp_path):
    c = cells()
    got, boots = run(plan(tmp_path, [(c["xfs"], fake(tmp_path, "dies", "die")),
                                     (c["ext4"], fake(tmp_path, "quiet", "ok"))]))
    assert [m.kind for _, _, m in got] == ["error", "dump"]
    # QEMU killed from outside (here the stand-in, by SIGKILL): the host's doing, said so
    assert "killed by signal 9" in got[0][2].reason, got[0][2].reason
    assert judge_measurement(fake(tmp_path, "dies", "die"), got[0][2], cell_of("4k", "xfs", "7.3"), "7.3").outcome == "error"


def test_a_console_flood_stops_its_command_as_an_error(tmp_path):
    """A command that floods the console is stopped once it passes the cap (not
    left to scan for hours), as an error that says so; the next check runs on
    a fresh boot."""
    c = cells()
    got, boots = run(plan(tmp_path, [(c["xfs"], fake(tmp_path, "floods", "flood")),
                                     (c["xfs"], fake(tmp_path, "quiet", "ok"))]))
    assert [m.kind for _, _, m in got] == ["error", "dump"]
    assert "console flood: more than 2 MB" in got[0][2].reason
    assert len(boots) == 2


def test_a_panic_is_a_crash_of_the_kernel(tmp_path):
    c = cells()
    got, _ = run(plan(tmp_path, [(c["xfs"], fake(tmp_path, "panics", "panic")),
                                 (c["xfs"], fake(tmp_path, "quiet", "ok"))]))
    assert [m.kind for _, _, m in got] == ["crash", "dump"]
    assert any(s.startswith("panic: Kernel panic") for s in got[0][2].splats)


@pytest.mark.parametrize("base,want", [(None, 300.0), (2.0, 32.0), (40.0, 80.0), (100.0, 155.0),
                                       (400.0, 300.0)])
def test_check_deadline_from_the_base_run(base, want):
    chk = Check("x", "x", (), 300.0, "")
    assert check_timeout(chk, base) == want
    if base is not None:
        assert check_timeout(chk, base) <= base + 60


def test_a_selftests_deadline_follows_how_much_slower_than_alone_its_guest_runs():
    """The per-test deadline (checks.toml test_timeout, 300 s) stretched by
    the part's recorded slowdown or its vCPU's wait for a core so far,
    whichever is more, at most MAX_PACE times; other checks are left alone."""
    import os
    import subprocess
    import sys
    import time

    chk = catalogue.by_name()["mm-selftests"]
    base = chk.options["test_timeout"]

    class Gone:
        child = None
    assert paced(chk, 1.0, Gone()).options["test_timeout"] == base
    assert paced(chk, 0.4, Gone()).options["test_timeout"] == base
    assert paced(chk, 2.4, Gone()).options["test_timeout"] == 2.4 * base
    assert paced(chk, 50, Gone()).options["test_timeout"] == MAX_PACE * base
    exec_text = catalogue.by_name()["exec-text"]
    assert paced(exec_text, 3.0, Gone()) is exec_text
    # a guest whose vCPU thread shares its core with another: measured, not recorded
    spin = [sys.executable, "-c", "import time\nt = time.process_time()\n"
            "while time.process_time() - t < 0.6: pass\nimport sys; sys.stdin.read()"]
    procs = [subprocess.Popen(spin, stdin=subprocess.PIPE, preexec_fn=lambda: os.sched_setaffinity(0, {0}))
             for _ in range(2)]
    try:
        deadline = time.monotonic() + 30     # until both have spun (and sleep, reading their input)
        while time.monotonic() < deadline and not all(
                open(f"/proc/{p.pid}/stat").read().rsplit(")", 1)[1].split()[0] == "S" for p in procs):
            time.sleep(0.05)

        class Sharing:
            child = procs[0]
        assert paced(chk, 1.0, Sharing()).options["test_timeout"] > 1.5 * base
    finally:
        for p in procs:
            p.communicate(b"")


def test_a_kernel_that_dies_before_its_console_driver_is_quoted_from_the_early_console(tmp_path):
    """A recorded 16K boot of tests/mutants/bug-early-boot-16k.patch: BUG_ON in
    pagecache_init(), before the PL011 driver registers; earlycon printed it.
    Every check of the cell is a crash of the kernel quoting the BUG, not the
    panic it ends in, and marked as a boot that died."""
    c = cells()
    p = plan(tmp_path, [(c["xfs"], fake(tmp_path, "a", "ok")), (c["ext4"], fake(tmp_path, "b", "ok"))])
    p.argv = ["sh", str(CONSOLES / "replay.sh"), str(CONSOLES / "bug-early-boot-7.3-16k.log"), "exit"]
    got, boots = run(p)
    assert len(boots) == 1 and boots[0].error
    assert [m.kind for _, _, m in got] == ["crash", "crash"]
    for _, _, m in got:
        assert m.boot_failed and "kernel BUG at mm/filemap.c:1102!" in m.reason, m.reason
        assert "pagecache_init" in m.excerpt
        out = judge_measurement(fake(tmp_path, "a", "ok"), m, cell_of("16k", "xfs", "7.3"), "7.3")
        assert out.outcome == "fail" and out.boot_failed
        assert out.reason.count("kernel BUG at mm/filemap.c:1102!") == 1, out.reason

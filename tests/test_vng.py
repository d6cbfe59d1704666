"""foliofarm shell --vng: the cell's guest under virtme-ng. The unit tests read
the recorded section of Debian's busybox manual page and the vng command
lines made from the farm's own guests; the integration tests boot each page
size under the pinned vng and compare a check's figures with the farm's own
runner's on the same kernel and disk."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from foliofarm.matrix import cell_of
from foliofarm.errors import InfraError, UsageError
from foliofarm.boot import vng
from foliofarm.boot.qemu import Machine
from foliofarm.run.shell import ShellOptions, main as shell_main

DATA = Path(__file__).parent / "data" / "vng"


def test_applets_of_debians_busybox_manual():
    names = vng.applets((DATA / "busybox.1.commands").read_text())
    # the recorded page of busybox-static 1:1.37.0-6 (Debian 13), escapes undone
    assert names[:3] == ["[", "[[", "acpid"]
    assert {"dpkg-deb", "nbd-client", "run-parts", "start-stop-daemon", "sh", "mount", "insmod",
            "setsid", "base64", "su"} <= set(names)
    assert "getconf" not in names and "" not in names
    assert not [n for n in names if "\\" in n or " " in n]
    assert len(names) == len(set(names)) > 250


def test_applets_of_a_page_without_the_list_is_an_error():
    text = (DATA / "busybox.1.commands").read_text()
    with pytest.raises(InfraError, match="lists no applets"):
        vng.applets(text.replace("Currently available applets include:", "Applets:"))
    with pytest.raises(InfraError, match="does not read as one"):
        vng.applets(text.replace("acpid, adjtimex", "acpid (see below), adjtimex"))


def machine(**kw) -> Machine:
    return Machine(kernel=Path("/c/artifacts/7.3-16k/Image"), initrd=Path("/c/initramfs/x.cpio"),
                   disks={"xfs": Path("/c/images/xfs/disk.img")},
                   scratch={"xfs-rw": Path("/c/images/xfs/disk.img")},
                   cpus=2, memory_mb=2048, numa_nodes=2, accel="tcg", **kw)


def test_argv_carries_the_farms_guest():
    argv = vng.argv(machine(), Path("/c/guest/vngroot-k"), Path("/c/artifacts/7.3-16k"),
                    command="getconf PAGESIZE", rwdirs=["/tmp"])
    opts = {k: argv[i + 1] for i, k in enumerate(argv[:-1])
            if k.startswith("--") and k not in ("--force-9p", "--no-virtme-ng-init")}
    assert "--force-9p" in argv and "--no-virtme-ng-init" in argv
    assert argv[0].endswith("vng")
    assert opts["--run"] == "/c/artifacts/7.3-16k/Image" and opts["--arch"] == "arm64"
    assert opts["--root"] == "/c/guest/vngroot-k" and opts["--memory"] == "2048M"
    assert opts["--cpus"] == "2" and opts["--rwdir"] == "/tmp=/tmp"
    assert opts["--rodir"] == "/opt/foliofarm/kernel=/c/artifacts/7.3-16k"
    qemu = shlex.split(next(a for a in argv if a.startswith("--qemu-opts="))[len("--qemu-opts="):])
    # vng's own -cpu (cortex-a57) has no 16K granule: the farm's comes after it and wins
    assert qemu[:4] == ["-accel", "tcg,thread=single", "-cpu", "max,pauth-impdef=on"]
    assert "node,nodeid=1,memdev=ffnode1,cpus=1" in qemu
    assert "if=none,id=xfs,file=/c/images/xfs/disk.img,format=raw,readonly=on" in qemu
    assert "if=none,id=xfs-rw,file=/c/images/xfs/disk.img,format=raw,snapshot=on" in qemu
    append = opts["--append"].split()
    assert "transparent_hugepage=madvise" in append and "watchdog_thresh=5" in append
    # the console, init and panic handling are vng's
    assert not [a for a in append if a.startswith(("console=", "rdinit=", "panic=", "earlycon"))]
    # the farm's set-up runs before the command, whose status is the exit status
    assert argv[-2] == "--exec" and argv[-1] == f". /{vng.PROFILE}\ngetconf PAGESIZE"


def test_argv_on_kvm_leaves_the_cpu_to_vng(monkeypatch):
    monkeypatch.setattr(Machine, "use_kvm", lambda self: True)
    argv = vng.argv(machine(), Path("/r"), Path("/k"))
    qemu = shlex.split(next(a for a in argv if a.startswith("--qemu-opts="))[len("--qemu-opts="):])
    # natively vng passes -machine accel=kvm:tcg and -cpu host; -accel beside it is refused
    assert "-accel" not in qemu and "-cpu" not in qemu and qemu[0] == "-object"
    assert "--exec" not in argv and "--no-virtme-ng-init" in argv


def recorded_boot() -> tuple[str, list[str]]:
    """A real `foliofarm run --boot-with vng --cells 16k-xfs --checks exec-text,mmap-miss`
    boot's console log: the kernel's console, then what the guest printed."""
    console, _, out = (DATA / "16k-xfs-7.3.console.log").read_text().partition(vng.OUTPUT_MARK.strip("\n"))
    return console, out.strip("\n").splitlines()


def pairs(cell: str, names=("exec-text", "mmap-miss")):
    from foliofarm import matrix
    from foliofarm.judge.catalogue import by_name
    page, fs = cell.split("-")
    c = matrix.Cell(matrix.page_sizes()[page], matrix.filesystems()[fs], "7.3")
    return [(c, by_name()[n]) for n in names]


def test_a_vng_boot_reads_back_as_the_farms_measurements():
    from foliofarm.judge.checks import judge_measurement
    console, lines = recorded_boot()
    measured, boot, reports = vng.read_boot(lines, console, 0, "vng --run Image", pairs("16k-xfs"), "c.log")
    assert boot.error is None and reports == []
    assert boot.banner["page_size"] == "16384" and boot.banner["probe"] == "loaded"
    assert boot.banner["mount:xfs"] == "vda" and boot.fs == "xfs" and boot.page_size == "16k"
    for cell, chk, m in measured:
        assert m.kind == "dump" and m.dump and m.taint == ""
        out = judge_measurement(chk, m, cell_of("16k", "xfs", "7.3"), "7.3")
        assert out.outcome == "pass", out.reason
    assert measured[0][2].dump != measured[1][2].dump


def test_a_vng_boot_of_the_wrong_page_size_or_without_status_is_an_error():
    console, lines = recorded_boot()
    measured, boot, _ = vng.read_boot(lines, console, 0, "vng", pairs("4k-xfs"), "c.log")
    assert boot.error == "guest reports page size 16384, expected 4096"
    assert all(m.kind == "error" and m.reason == boot.error for _, _, m in measured)
    _, boot, _ = vng.read_boot(lines, console, 255, "vng", pairs("16k-xfs"), "c.log")
    assert boot.error == "vng exited 255 (the guest ended without returning a status)"


def test_a_report_on_a_vng_console_is_read_after_the_boot():
    console, lines = recorded_boot()
    splat_text = (Path(__file__).parent / "data" / "consoles" / "warning-splat.txt").read_text()
    _, _, reports = vng.read_boot(lines, console + splat_text, 0, "vng", pairs("16k-xfs"), "c.log")
    assert len(reports) == 1 and "mm/filemap.c:3412" in reports[0]


def test_a_vng_boot_cut_short_is_the_checks_not_the_runs():
    """vng killed at its deadline: a check whose output ends inside its file
    is that check's error; one that never ended, a hang; one never begun, an error."""
    console, lines = recorded_boot()
    file_at = next(i for i, ln in enumerate(lines) if ln.startswith("FOLIOFARM-FILE exec-text"))
    measured, _, _ = vng.read_boot(lines[:file_at + 3], console, 255, "vng", pairs("16k-xfs"), "c.log")
    kinds = [(m.kind, m.reason) for _, _, m in measured]
    assert kinds[0] == ("error", "exec-text: vng's output ends inside its file (FOLIOFARM-FILE without -END)")
    assert kinds[1] == ("error", "mmap-miss never started (vng's output has no FOLIOFARM-BEGIN mmap-miss)")
    begun = next(i for i, ln in enumerate(lines) if ln == "FOLIOFARM-BEGIN mmap-miss")
    measured, _, _ = vng.read_boot(lines[:begun + 4], console, 255, "vng", pairs("16k-xfs"), "c.log")
    assert measured[0][2].kind == "dump"
    assert (measured[1][2].kind, measured[1][2].reason) == (
        "crash", "the kernel hung or crashed: vng's output ends inside it")


def test_rwdir_lands_where_the_guest_can_make_its_mount_point(tmp_path):
    assert vng.rwdir(str(tmp_path)) == f"{tmp_path}={tmp_path}"
    assert vng.rwdir(f"/srv/out={tmp_path}") == f"/srv/out={tmp_path}"
    with pytest.raises(UsageError, match=f"give GUEST=HOST .* such as /srv/{tmp_path.name}={tmp_path}"):
        vng.rwdir(f"/mnt/out={tmp_path}")
    with pytest.raises(UsageError, match="no directory /nonexistent-dir on the host"):
        vng.rwdir("/nonexistent-dir")


def test_a_commands_output_is_relayed_whole(capfdbinary):
    """vng -e's output comes through pipes: a file the user redirects it to
    gets each channel's bytes in order (QEMU opening it twice would not)."""
    rc = vng.run_command(["sh", "-c", "echo first; head -c 200000 /dev/zero | tr '\\0' x; echo; "
                                      "echo err >&2; exit 4"])
    out, err = capfdbinary.readouterr()
    assert rc == 4 and out == b"first\n" + b"x" * 200000 + b"\n" and err == b"err\n"


def test_the_kernels_have_what_vng_needs():
    """The farm's base fragment asks for every symbol the vng route needs,
    and they are among what the pinned vng itself asks of a kernel (all but
    tmpfs xattrs, which only quiet its overlays' warnings)."""
    from virtme.commands import configkernel
    from foliofarm.paths import ROOT
    base = (ROOT / "configs" / "kernels" / "base.config").read_text().splitlines()
    assert [s for s in vng.KERNEL_NEEDS if f"{s}=y" not in base] == []
    assert [s for s in vng.KERNEL_NEEDS
            if f"{s}=y" not in configkernel._GENERIC_CONFIG and s != "CONFIG_TMPFS_XATTR"] == []


def test_vng_options_need_vng():
    for opts in (ShellOptions(cell="16k-xfs", verbose=True), ShellOptions(cell="16k-xfs", rwdirs=["/t"])):
        with pytest.raises(UsageError, match="add --vng"):
            shell_main(opts)


# One cell of each page size, each on another filesystem
VNG_CELLS = ("4k-ext4", "16k-xfs", "64k-erofs")
# what the guest measured, not how long it took
TIMINGS = ("guest_seconds", "transfer_seconds")


@pytest.fixture(scope="module")
def vng_run(tmp_path_factory):
    """exec-text in one cell of each page size, booted by the pinned vng
    (--fresh: not from an earlier run's saved measurements)."""
    from foliofarm.cli import main
    from conftest import load
    results = tmp_path_factory.mktemp("vng-results")
    code = main(["run", "--boot-with", "vng", "--fresh", "--cells", ",".join(VNG_CELLS), "--checks", "exec-text",
                 "--results", str(results)])
    return code, load(results), results


@pytest.mark.integration
@pytest.mark.parametrize("cell", VNG_CELLS)
def test_a_check_under_vng_has_the_farms_figures(matrix_run, vng_run, cell):
    """exec-text under vng (the cell's kernel and disk, the farm's guest root
    over 9p, the check run as the farm runs it) is judged as the farm judges
    it, with the figures the farm's own runner measured in the same cell of
    the matrix run."""
    code, doc, _ = vng_run
    assert code == 0
    farm = next(c for c in matrix_run[1]["cells"] if c["id"] == f"{cell}-7.3")
    ours = next(c for c in doc["cells"] if c["id"] == f"{cell}-7.3")
    by = {c["name"]: c for c in ours["checks"]}
    assert set(by) == {"exec-text", "console"}
    assert by["console"]["outcome"] == "pass", by["console"]["reason"]
    et, farm_et = by["exec-text"], next(c for c in farm["checks"] if c["name"] == "exec-text")
    assert et["outcome"] == farm_et["outcome"] == "pass", (et["reason"], farm_et["reason"])
    figures = {k: v for k, v in et["metrics"].items() if k not in TIMINGS}
    assert figures == {k: v for k, v in farm_et["metrics"].items() if k not in TIMINGS}
    assert figures["mapped_pages"] > 0
    # it was vng's boot, and the cell's kernel
    boot = next(b for b in doc["boots"] if b["fs"] == ours["fs"] and b["page_size"] == ours["page_size"])
    assert "/vng --run " in boot["qemu"] and "error" not in boot
    assert boot["banner"]["page_size"] == str({"4k": 4096, "16k": 16384, "64k": 65536}[ours["page_size"]])
    assert "/vngroot-" in boot["qemu"] and "--force-9p" in boot["qemu"]
    log = Path(boot["console_log"]).read_text()
    assert log.startswith("Booting Linux") and vng.OUTPUT_MARK.strip("\n") in log


@pytest.mark.integration
def test_vng_run_reads_back(vng_run, reads_back):
    _, doc, results = vng_run
    assert reads_back(results / "latest")["cells"] == doc["cells"]


@pytest.mark.integration
def test_shell_vng_runs_one_command(capfd):
    """The README's line: the command's output, and its exit status."""
    from foliofarm.cli import main
    assert main(["shell", "16k-xfs", "--vng", "-e", "getconf PAGESIZE"]) == 0
    assert capfd.readouterr().out.split() == ["16384"]
    assert main(["shell", "16k-xfs", "--vng", "-e", "grep -q ' /mnt/xfs xfs ' /proc/mounts && "
                 "test -d /sys/module/ffprobe && exit 7"]) == 7


@pytest.mark.integration
def test_shell_vng_is_a_shell_for_a_person(tmp_path):
    """At a terminal: vng's prompt, the guest programs on the PATH, the cell's
    disk mounted, a host directory shared read-write; exit leaves."""
    import sys
    import pexpect
    share = tmp_path / "share"
    share.mkdir()
    p = pexpect.spawn(sys.executable, ["-m", "foliofarm", "shell", "16k-xfs", "--vng", "--rwdir", str(share)],
                      encoding="utf-8", timeout=300, dimensions=(40, 200))
    try:
        p.expect("foliofarm: guest programs in /ff")
        p.expect("# ")
        p.sendline(f"getconf PAGESIZE > {share}/pagesize; command -v exec-text; ls /mnt/xfs")
        p.expect("/ff/exec-text")
        p.expect("stubs.bin")
        p.expect("# ")
        p.sendline("exit")
        p.expect(pexpect.EOF)
    finally:
        p.close(force=True)
    assert p.exitstatus == 0
    assert (share / "pagesize").read_text() == "16384\n"


@pytest.mark.integration
@pytest.mark.budget
def test_a_regression_is_caught_under_vng(tmp_path, budget):
    """The vng route judges a series as the farm's own does: a mutant that
    reads exec text in base pages (tests/mutants) is a regression of
    exec-text on 16K, base and series both booted under vng."""
    from foliofarm.cli import main
    from conftest import load
    budget(6 * 60, "a 16K kernel with a mutant applied, built and booted under vng")
    mutant = Path(__file__).parent / "mutants" / "exec-order-zero.patch"
    code = main(["run", "--boot-with", "vng", "--fresh", "--series", str(mutant), "--cells", "16k-xfs",
                 "--checks", "exec-text", "--results", str(tmp_path)])
    doc = load(tmp_path)
    assert code == 1
    verdicts = {(v["page_size"], v["fs"], v["check"]): v for v in doc["verdicts"]}
    et = verdicts[("16k", "xfs", "exec-text")]
    assert et["verdict"] == "regression" and et["base"] == "pass", et
    assert {"metric": "max_folio_kb", "base": 64, "series": 16, "delta": -48} in et["figures"]
    assert all("/vng --run " in b["qemu"] for b in doc["boots"]) and len(doc["boots"]) == 2

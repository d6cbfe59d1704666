"""One cell by hand: repro.sh re-runs just that cell with the same inputs, and
`foliofarm shell` gives the cell's guest to a person."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

from foliofarm.results.read import read
from foliofarm import matrix
from foliofarm.report import repro
from foliofarm.cli import main
from foliofarm.judge import catalogue
from foliofarm.run.plan import RunOptions

ROOT = Path(__file__).resolve().parent.parent


def opts(**kw) -> RunOptions:
    base = dict(kernel="debian:7.3", page_sizes=list(matrix.page_sizes().values()),
                filesystems=list(matrix.filesystems().values()),
                checks=[catalogue.by_name()["exec-text"], catalogue.by_name()["mmap-miss"]],
                results=Path("/tmp/r"))
    base.update(kw)
    return RunOptions(**base)


def test_repro_script_names_the_cell_and_the_same_inputs(tmp_path):
    box = tmp_path / "s.mbox"
    box.write_text("x")
    doc = read(Path(__file__).parent / "data" / "results" / "benign-4k.json")    # a real series run's
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        written = repro.write(tmp_path / "run", doc, opts(series="s.mbox", extra_config=["CONFIG_KASAN=y"],
                                                          cpus=2))
    finally:
        os.chdir(cwd)
    assert len(written) == 2
    text = written[0].read_text()
    assert "--cells 4k-xfs" in text and doc.run_id in text and "--checks exec-text,mmap-miss" in text
    assert f"--series {box}" in text and "-K CONFIG_KASAN=y" in text and "--cpus 2" in text
    assert "--fresh" in text and f"cd {ROOT}" in text and "--boot-with" not in text
    assert os.access(written[0], os.X_OK)
    assert subprocess.run(["sh", "-n", str(written[0])]).returncode == 0
    # a run under vng is re-run under vng
    again = repro.write(tmp_path / "vng", doc, opts(boot_with="vng"))
    assert "--boot-with vng" in again[0].read_text()


@pytest.mark.integration
def test_a_cells_repro_script_reruns_just_that_cell(tmp_path):
    code = main(["run", "--cells", "16k-erofs", "--checks", "exec-text,ra-window",
                 "--results", str(tmp_path / "r")])
    assert code == 0
    first = json.loads((tmp_path / "r" / "latest" / "results.json").read_text())
    script = tmp_path / "r" / "latest" / "cells" / "16k-erofs-7.3" / "repro.sh"
    p = subprocess.run([str(script)], env=dict(os.environ, RESULTS=str(tmp_path / "again")),
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-2000:]
    again = json.loads((tmp_path / "again" / "latest" / "results.json").read_text())
    assert [c["id"] for c in again["cells"]] == ["16k-erofs-7.3"]
    assert "--fresh" in again["command"] and not again["boots"][0].get("reused")

    def figures(d):
        return {c["name"]: {k: v for k, v in c["metrics"].items() if "seconds" not in k}
                for c in d["cells"][0]["checks"]}
    assert figures(again) == figures(first)


@pytest.mark.integration
def test_shell_boots_the_cells_guest_for_a_person(tmp_path):
    child = pexpect.spawn(sys.executable, ["-m", "foliofarm", "shell", "4k-xfs"], cwd=str(ROOT),
                          encoding="utf-8", timeout=300, dimensions=(40, 120))
    try:
        # from a cold cache the shell builds the 4K kernel first (minutes)
        child.expect("foliofarm# ", timeout=1800)
        child.sendline("ls /ff; lsmod; mount | grep /mnt/xfs; uname -r")
        child.expect("exec-text")
        child.expect("ffprobe")
        child.expect("/mnt/xfs type xfs")
        child.expect("foliofarm# ")
        child.sendline("exit")
        child.expect(pexpect.EOF, timeout=120)
    finally:
        child.close(force=True)


@pytest.mark.integration
def test_shell_runs_a_command_in_the_cells_guest_and_exits_with_its_status(capsys):
    """-e on the farm's own QEMU: the cell's filesystem named as for a
    reproducer, the command's output, its exit status; --repro runs the
    reproducer first."""
    assert main(["shell", "4k-xfs", "-e", "grep ' /mnt/xfs xfs ' /proc/mounts && echo at $FF_MNT on $FF_DEV"]) == 0
    out = capsys.readouterr().out
    assert "/mnt/xfs xfs" in out and "at /mnt/xfs on vd" in out
    assert main(["shell", "4k-xfs", "-e", "exit 3"]) == 3
    assert main(["shell", "4k-xfs", "--repro", str(ROOT / "examples" / "repro" / "thp-state.sh"),
                 "-e", "cat /mnt/ffrepro/kind"]) == 0
    out = capsys.readouterr()
    assert "page_kb: 4" in out.out and out.out.rstrip().endswith("sh")
    assert "the reproducer exited 0" in out.err


@pytest.mark.integration
def test_shell_with_a_reproducer_runs_it_then_hands_the_shell_over(tmp_path):
    child = pexpect.spawn(sys.executable, ["-m", "foliofarm", "shell", "4k-xfs", "--repro",
                                           str(ROOT / "examples" / "repro" / "thp-state.sh")],
                          cwd=str(ROOT), encoding="utf-8", timeout=300, dimensions=(40, 120))
    try:
        child.expect("page_kb: 4", timeout=1800)
        child.expect("the guest's shell is yours")
        child.expect("foliofarm# ")
        child.sendline("echo $FF_MNT; cat /mnt/ffrepro/kind")
        child.expect("/mnt/xfs")
        child.expect("sh")
        child.expect("foliofarm# ")
        child.sendline("exit")
        child.expect(pexpect.EOF, timeout=120)
    finally:
        child.close(force=True)


def test_qemu_command_lines():
    """The farm's guests: no network, test disks read-only or snapshots, the
    outbox the only disk written; a person's guest gets the monitor on Ctrl-A."""
    from foliofarm.boot.qemu import OUTBOX, Machine
    m = Machine(kernel=Path("/k/Image"), initrd=Path("/k/initrd"), disks={"xfs": Path("/i/xfs.img")},
                scratch={"xfs-rw": Path("/i/xfs.img")}, outbox=Path("/t/outbox.img"), accel="tcg", cpus=2,
                memory_mb=4096)
    argv = m.argv()
    assert argv[argv.index("-nic") + 1] == "none" and argv[argv.index("-smp") + 1] == "2"
    assert argv[argv.index("-m") + 1] == "4096"
    drives = [argv[i + 1] for i, a in enumerate(argv) if a == "-drive"]
    assert drives == ["if=none,id=xfs,file=/i/xfs.img,format=raw,readonly=on",
                      "if=none,id=xfs-rw,file=/i/xfs.img,format=raw,snapshot=on",
                      f"if=none,id={OUTBOX},file=/t/outbox.img,format=raw"]
    assert argv[argv.index("-serial") + 1] == "stdio" and "-monitor" in argv
    shell = Machine(kernel=Path("/k/Image"), initrd=Path("/k/initrd"), accel="tcg",
                    extra_append="foliofarm.shell=1", interactive=True).argv()
    assert shell[shell.index("-serial") + 1] == "mon:stdio" and "-monitor" not in shell
    assert "foliofarm.shell=1" in shell[shell.index("-append") + 1]

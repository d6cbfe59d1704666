"""Console framing and splat detection, replaying recorded consoles through the
real session code (a stand-in process prints the log, then acts as the shell)."""

from pathlib import Path

import pytest

from foliofarm.boot import banner, splat
from foliofarm.boot.console import GuestSession
from foliofarm.errors import GuestError

CONSOLES = Path(__file__).resolve().parent / "data" / "consoles"


def session(tmp_path, log: str, mode: str = "shell", timeout: float = 20) -> GuestSession:
    """The stand-in guest's taint and kernel log are files in tmp_path: a test
    command writes them as the kernel would (never the host's own dmesg)."""
    g = GuestSession(["sh", str(CONSOLES / "replay.sh"), str(CONSOLES / log), mode],
                     tmp_path / "console.log", boot_timeout=timeout)
    (tmp_path / "tainted").write_text("4096\n")      # O: the probe module
    (tmp_path / "klog").write_text("")
    g.taint_file = str(tmp_path / "tainted")
    g.kernel_log_command = f"cat {tmp_path / 'klog'}; : > {tmp_path / 'klog'}"
    return g


def test_boot_banner_and_framed_commands(tmp_path):
    with session(tmp_path, "boot-7.3-4k.log") as g:
        assert g.banner["page_size"] == "4096"
        assert g.banner["probe"] == "loaded"
        assert g.banner["mount:xfs"] == "vdb"
        res = g.run("echo hello; echo FFEnot-a-marker; printf 'no newline'")
        assert res.status == 0
        assert res.output == "hello\nFFEnot-a-marker\nno newline"
        assert g.run("(exit 7)").status == 7
        assert g.run("false").status == 1
        assert g.splats == []
    # the whole console is on disk, commands included
    text = (tmp_path / "console.log").read_text()
    assert "FOLIOFARM-READY" in text and "hello" in text


def test_splat_printed_during_a_command_is_attributed_to_it(tmp_path):
    warning = CONSOLES / "warning-splat.txt"
    with session(tmp_path, "boot-7.3-4k.log") as g:
        assert g.run("true").splats == ()
        res = g.run(f"cat {warning}")
        assert [s.kind for s in res.splats] == ["warning"]
        assert "mm/filemap.c" in res.splats[0].excerpt
        assert g.run("true").splats == ()


def test_read_file_checks_md5(tmp_path):
    f = tmp_path / "dump.txt"
    f.write_text("P 1 2 3 pc 2\n" * 1000)
    with session(tmp_path, "boot-7.3-4k.log") as g:
        assert g.read_file(str(f)) == f.read_text()


def test_read_file_through_the_outbox_disk(tmp_path):
    """The stand-in's outbox "device" is the host file itself: the guest side
    writes it with dd, the host reads it back and checks the guest's md5."""
    f = tmp_path / "dump.txt"
    f.write_text("P 1 2 3 pc 2\n" * 100000)
    outbox = tmp_path / "outbox.img"
    outbox.write_bytes(b"\xff" * (4 << 20))      # stale bytes past the dump are not read
    with session(tmp_path, "boot-7.3-4k.log") as g:
        g.outbox, g.device_dir, g.banner["outbox"] = outbox, str(tmp_path), "outbox.img"
        assert g.read_file(str(f)) == f.read_text()
        assert outbox.read_bytes()[:20] == b"P 1 2 3 pc 2\nP 1 2 3"
        commands = [r.command for r in g.history]
        assert not any("base64" in c for c in commands)
        # no outbox device in the guest: the console carries it
        g.banner["outbox"] = "missing/dev"
        assert g.read_file(str(f)) == f.read_text()
        assert "base64" in g.history[-2].command


def test_panic_at_boot_is_a_guest_error_with_excerpt(tmp_path):
    with pytest.raises(GuestError) as exc:
        with session(tmp_path, "panic-at-boot.log", mode="exit"):
            pass
    assert "kernel panic" in str(exc.value)
    assert "Kernel panic - not syncing" in exc.value.excerpt
    assert (tmp_path / "console.log").exists()


def test_a_guest_that_ends_itself_is_the_kernels_doing_a_qemu_that_fails_is_not(tmp_path):
    """QEMU exiting on its own with status 0 (the guest reset, -no-reboot) is a
    verdict on the kernel even without a panic line (it died before saying
    anything); QEMU exiting with an error of its own is the host's."""
    (tmp_path / "empty.log").write_text("qemu-system-aarch64 -M virt ...\n")
    with pytest.raises(GuestError) as exc:
        with session(tmp_path, str(tmp_path / "empty.log"), mode="exit"):
            pass
    assert exc.value.kernel_fault and "kernel panic" not in str(exc.value)
    with pytest.raises(GuestError) as exc:
        with session(tmp_path, str(tmp_path / "empty.log"), mode="fail"):
            pass
    assert not exc.value.kernel_fault and "QEMU exited with status 1" in str(exc.value)


def test_hung_guest_is_an_error_not_a_hang(tmp_path):
    with pytest.raises(GuestError, match="hung"):
        with session(tmp_path, "panic-at-boot.log", mode="hang", timeout=3):
            pass


def test_command_timeout_marks_session_dead(tmp_path):
    with session(tmp_path, "boot-7.3-4k.log") as g:
        with pytest.raises(GuestError, match="did not finish within 2s"):
            g.run("sleep 30", timeout=2)
        with pytest.raises(GuestError, match="not running"):
            g.run("true")


@pytest.mark.parametrize("line,kind", [
    ("[   12.3] Kernel panic - not syncing: Attempted to kill init!", "panic"),
    ("Internal error: Oops: 0000000096000004 [#1] SMP", "oops"),
    ("BUG: Bad page state in process exec-text  pfn:4a3c0", "bug"),
    ("kernel BUG at mm/filemap.c:1234!", "bug"),
    ("WARNING: CPU: 0 PID: 71 at mm/readahead.c:479 page_cache_ra_order+0x2c/0x3a0", "warning"),
    ("Unable to handle kernel NULL pointer dereference at virtual address 0000000000000008", "oops"),
    ("INFO: task exec-text:80 blocked for more than 30 seconds.", "hung-task"),
    ("rcu: INFO: rcu_sched detected stalls on CPUs/tasks:", "rcu-stall"),
])
def test_splat_kinds(line, kind):
    found = splat.scan(f"before\n{line}\nafter\n")
    assert [s.kind for s in found] == [kind]


def test_ordinary_lines_are_not_splats():
    text = "\n".join([
        "FOLIOFARM mounted xfs vdb", "ok 1 exec-text", "# touches 64 faults 64",
        "XFS (vdb): Mounting V5 Filesystem", "EXT4-fs (vda): mounted filesystem r/o",
        "debug: BUGS_fixed=3", "no WARNINGS here",
    ])
    assert splat.scan(text) == []


def test_banner_garbled_by_a_kernel_message_is_read_again(tmp_path):
    """Recorded on a 64K boot of 7.3: the module's taint message, printed by the
    kernel's console thread, landed inside the shell's banner line. The line is
    not trusted; the guest is asked for the banner again."""
    text = (CONSOLES / "boot-7.3-64k-garbled-banner.log").read_text()
    seen, garbled = banner.parse(text)
    assert garbled and "probe" not in seen
    assert seen["page_size"] == "65536" and seen["mount:erofs"] == "vda"
    script = tmp_path / "banner"
    script.write_text("echo 'FOLIOFARM probe loaded'\necho 'FOLIOFARM outbox vdb'\n")
    g = session(tmp_path, "boot-7.3-64k-garbled-banner.log")
    g.banner_command = f"sh {script}"
    with g:
        assert g.banner["probe"] == "loaded"
        assert g.banner["mount:erofs"] == "vda" and g.banner["outbox"] == "vdb"
        assert any(r.command == f"sh {script}" for r in g.history)


def test_banner_values_are_read_only_from_whole_lines():
    text = ("FOLIOFARM mounted xfs vdbffprobe: loading out-of-tree module taints kernel.\n"
            "FOLIOFARM probe loaded\nFOLIOFARM mount FAILED ext4 vda\n"
            "FOLIOFARM kernel 7.3.4 page_size 16384\nFOLIOFARM-READY\n")
    seen, garbled = banner.parse(text)
    assert garbled and "mount:xfs" not in seen
    assert seen == {"probe": "loaded", "mount:ext4": "FAILED", "uname": "7.3.4",
                      "page_size": "16384"}
    assert banner.complete(seen)
    assert not banner.complete({"probe": "loadedffprobe:", "uname": "7.3.4",
                                             "page_size": "16384"})


def test_banner_reports_the_guests_numa_nodes_and_cpus():
    text = "FOLIOFARM kernel 7.3.4 page_size 4096\nFOLIOFARM nodes 0-1 cpus 0-1\n"
    seen, garbled = banner.parse(text)
    assert not garbled and seen["numa_nodes"] == "0-1" and seen["cpus"] == "0-1"
    # a kernel without CONFIG_NUMA has no node list: the banner says 0
    seen, _ = banner.parse("FOLIOFARM nodes 0 cpus 0\n")
    assert seen["numa_nodes"] == "0"

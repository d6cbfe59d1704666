"""A reproducer (disks/reproducer.py, judge/printed.py): read and refused with what
to fix, its C compiled for arm64 in the sandbox (a hostile one cannot read the
host's files), put on a disk of its own keyed by its content, and what it
prints read as figures."""

from pathlib import Path

import pytest

from foliofarm.disks import reproducer as repro
from foliofarm.errors import UsageError
from foliofarm.matrix import cell_of
from foliofarm.judge.printed import figures

RESIDENT = """#include <stdio.h>
#include <sys/mman.h>
int main(int argc, char **argv)
{
\tprintf("resident_pages: %d\\n", argc);
\treturn 0;
}
"""
EM_AARCH64 = 183
PT_INTERP = 3


def program_headers(elf: bytes) -> list[int]:
    """The types of a 64-bit little-endian ELF's program headers."""
    phoff = int.from_bytes(elf[32:40], "little")
    size, count = int.from_bytes(elf[54:56], "little"), int.from_bytes(elf[56:58], "little")
    return [int.from_bytes(elf[phoff + i * size:phoff + i * size + 4], "little") for i in range(count)]


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(text if isinstance(text, bytes) else text.encode())
    return p


def test_a_reproducer_is_c_or_shell_and_anything_else_says_what_to_give(tmp_path):
    assert repro.load(write(tmp_path, "r.c", RESIDENT)).kind == "c"
    assert repro.load(write(tmp_path, "r.sh", "cat /proc/meminfo\n")).kind == "sh"
    assert repro.load(write(tmp_path, "r", "#!/bin/sh\necho hi\n")).kind == "sh"
    with pytest.raises(UsageError, match="name a C source FILE.c or a shell script"):
        repro.load(write(tmp_path, "r.txt", "echo hi\n"))
    with pytest.raises(UsageError, match="not text"):
        repro.load(write(tmp_path, "b.c", b"\x7fELF\xff\xfe"))
    with pytest.raises(UsageError, match="over the 256 KB"):
        repro.load(write(tmp_path, "big.c", "/* x */\n" * 40000))
    with pytest.raises(UsageError, match="No such file"):
        repro.load(tmp_path / "missing.c")


def test_c_is_compiled_static_for_arm64(tmp_path):
    out = repro.compiled(repro.load(write(tmp_path, "resident.c", RESIDENT)), tmp_path / "repro")
    head = out.read_bytes()[:20]
    assert head[:4] == b"\x7fELF" and int.from_bytes(head[18:20], "little") == EM_AARCH64
    assert PT_INTERP not in program_headers(out.read_bytes())     # static: the guest has no libc of its own


@pytest.mark.parametrize("name", ["fork-contpte.c", "contpte-partial.c", "contpte-mremap.c", "mthp-swap.c",
                                  "shmem-mthp.c", "write-folios.c"])
def test_the_farms_contpte_and_folio_programs_compile_as_reproducers_as_they_are(tmp_path, name):
    """They include the farm's ffcontpte.h or fffolio.h, which --repro offers beside the source."""
    src = repro.VMTESTS / name
    assert '#include "ffcontpte.h"' in src.read_text() or '#include "fffolio.h"' in src.read_text()
    out = repro.compiled(repro.load(src), tmp_path / "repro")
    assert out.read_bytes()[:4] == b"\x7fELF"


def test_a_header_the_farm_does_not_offer_is_the_users_to_fix(tmp_path):
    src = write(tmp_path, "r.c", '#include "ffguest.h"\nint main(void) { return 0; }\n')
    with pytest.raises(UsageError, match="ffguest.h"):
        repro.compiled(repro.load(src), tmp_path / "repro")


def test_c_that_does_not_compile_is_the_users_to_fix_with_the_compilers_lines(tmp_path):
    bad = write(tmp_path, "typo.c", "int main(void) { return undefined_thing; }\n")
    with pytest.raises(UsageError) as exc:
        repro.compiled(repro.load(bad), tmp_path / "repro")
    said = str(exc.value)
    assert "does not compile for arm64" in said and "typo.c:1" in said and "undefined_thing" in said
    assert "/tmp" not in said.split("\n", 1)[1]         # named as the user named it


def test_a_hostile_reproducer_cannot_read_the_hosts_files_while_it_compiles(tmp_path, monkeypatch):
    """#include of a host file (the host's /etc/shadow, a secret beside the
    reproducer's own folder): the compiler runs in the sandbox, which holds
    neither: refused, nothing of them shown."""
    secret = write(tmp_path, "secret.txt", "int leaked_token_4711 = 1;\n")
    for path in ("/etc/shadow", str(secret)):
        hostile = write(tmp_path, "hostile.c", f'#include "{path}"\nint main(void) {{ return 0; }}\n')
        with pytest.raises(UsageError, match="does not compile") as exc:
            repro.compiled(repro.load(hostile), tmp_path / "repro")
        assert "No such file or directory" in str(exc.value)
        assert "leaked_token_4711" not in str(exc.value)
    # without the sandbox the same reproducer reads the secret: the refusal was the sandbox's
    monkeypatch.setenv("FOLIOFARM_SANDBOX", "off")
    assert repro.compiled(repro.load(hostile), tmp_path / "repro").is_file()


def test_the_reproducers_disk_is_made_once_per_content(tmp_path):
    cache = tmp_path / "cache"
    a = repro.disk(cache, repro.load(write(tmp_path, "a.sh", "#!/bin/sh\necho one\n")))
    again = repro.disk(cache, repro.load(write(tmp_path, "a2.sh", "#!/bin/sh\necho one\n")))
    other = repro.disk(cache, repro.load(write(tmp_path, "b.sh", "#!/bin/sh\necho two\n")))
    assert a == again != other
    assert a.read_bytes()[1024:1028] == b"\xe2\xe1\xf5\xe0"         # EROFS's magic
    c = repro.disk(cache, repro.load(write(tmp_path, "resident.c", RESIDENT)))
    assert c.stat().st_size > 100_000                               # a static program on it


def test_key_number_lines_are_figures_and_the_rest_is_output():
    out = "starting\nresident_pages: 4096\nratio: 0.25\nnote: not a number\n  resident_pages: 8\nok 1 x\n"
    assert figures(out) == {"resident_pages": 8, "ratio": 0.25}
    assert len(figures("".join(f"f{i}: {i}\n" for i in range(500)))) == 64


DRIVER = Path(__file__).resolve().parent / "vmtests" / "repro-run.sh"


def driven(tmp_path: Path, kind: str, program: str, *args: str) -> str:
    """The guest's driver, run by this host's sh on a reproducer as the disk
    lays it out (the page cache left as it is), in a PID namespace of its own
    with its own /proc: after the reproducer the driver kills every process
    /proc shows that was not there before it, which on the host itself would
    be whatever else started meanwhile (another run's compilers)."""
    import os
    import subprocess
    disk = tmp_path / "ffrepro"
    disk.mkdir(exist_ok=True)
    (disk / "repro").write_text(program)
    (disk / "repro").chmod(0o755)
    (disk / "kind").write_text(kind + "\n")
    dump = tmp_path / "repro.dump"
    alone = ["bwrap", "--dev-bind", "/", "/", "--unshare-pid", "--proc", "/proc", "--die-with-parent"]
    subprocess.run([*alone, "sh", str(DRIVER), str(dump), "xfs", "/mnt/xfs", "vdb", str(disk / "repro"), *args],
                   check=True, env={**os.environ, "FFREPRO_WARM": "1"})
    return dump.read_text()


def test_the_driver_run_here_kills_nothing_that_started_beside_it(tmp_path):
    """The driver kills what its reproducer left running; run on this host by
    the tests, it must not reach a process that started meanwhile outside it
    (it once killed the compilers of a farm run beside the unit tests)."""
    import subprocess
    import threading
    import time
    beside: list[subprocess.Popen] = []

    def start_one() -> None:
        time.sleep(0.5)                 # while the reproducer sleeps
        beside.append(subprocess.Popen(["sleep", "30"]))
    t = threading.Thread(target=start_one)
    t.start()
    driven(tmp_path, "sh", "sleep 2\n")
    t.join()
    try:
        assert beside and beside[0].poll() is None, "the driver killed a process outside it"
    finally:
        for p in beside:
            p.kill()
            p.wait()


def test_the_drivers_dump_carries_the_status_the_output_and_the_printed_figures(tmp_path):
    from foliofarm.judge import smaps
    from foliofarm.judge.metrics import METRICS
    script = 'echo "start $FF_FS $FF_MNT $FF_DEV $1"\necho "resident_pages: 12"\necho oops >&2\nexit 3\n'
    dump = smaps.parse_dump(driven(tmp_path, "sh", script, "arg1"))
    assert dump.meta["check"] == "repro" and dump.meta["fs"] == "xfs" and dump.page.bytes > 0
    assert dump.tool_output["repro"] == ["start xfs /mnt/xfs vdb arg1", "resident_pages: 12", "oops"]
    got = METRICS["printed"](dump, "text", None)
    assert got["exit_status"] == 3 and got["resident_pages"] == 12 and got["repro_seconds"] >= 0
    assert "output_cut" not in got


def test_a_reproducer_that_floods_is_cut_and_says_so(tmp_path):
    from foliofarm.judge import smaps
    from foliofarm.judge.metrics import METRICS
    dump = smaps.parse_dump(driven(tmp_path, "sh", "yes 'exit_status: 0' | head -n 100000\nexit 1\n"))
    got = METRICS["printed"](dump, "text", None)
    assert got["output_cut"] == 1 and got["exit_status"] == 1     # its own "exit_status:" hides nothing
    assert len("\n".join(dump.tool_output["repro"])) <= 65536


def test_a_reproducer_past_its_time_limit_is_killed_and_fails_saying_so(tmp_path):
    from foliofarm.judge import catalogue, checks
    (tmp_path / "ffrepro").mkdir()
    (tmp_path / "ffrepro" / "seconds").write_text("1\n")        # as disk() writes --repro-timeout
    out = checks.evaluate(catalogue.by_name()["repro"], driven(tmp_path, "sh", "echo spinning\nwhile :; do :; done\n"),
                          cell_of("4k", "xfs", "7.3"), "7.3")
    assert out.outcome == "fail" and out.metrics["timed_out"] == 1
    assert out.metrics["exit_status"] == 137 and out.metrics["output_tail"].startswith("spinning")


def test_a_reproducer_passes_where_it_exits_0_and_fails_naming_its_status(tmp_path):
    from foliofarm.judge import catalogue, checks
    row = catalogue.by_name()["repro"]
    ok = driven(tmp_path, "sh", 'echo "resident_pages: 12"\n')
    out = checks.evaluate(row, ok, cell_of("4k", "xfs", "7.3"), "7.3")
    assert (out.outcome, out.metrics["resident_pages"]) == ("pass", 12)
    bad = driven(tmp_path, "sh", 'echo "resident_pages: 0"\nexit 3\n')
    out = checks.evaluate(row, bad, cell_of("4k", "xfs", "7.3"), "7.3")
    assert out.outcome == "fail" and out.reason == "exit_status 3 (wanted <= 0)"


def test_run_refuses_a_reproducer_that_does_not_compile_before_anything_builds(tmp_path, monkeypatch, capsys):
    from foliofarm.cli import main
    monkeypatch.setenv("FOLIOFARM_CACHE", str(tmp_path / "cache"))
    bad = write(tmp_path, "typo.c", "int main(void) { return nope; }\n")
    assert main(["run", "--repro", str(bad), "--cells", "4k-xfs", "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "does not compile for arm64" in err and "typo.c:1" in err and "nope" in err
    assert main(["run", "--repro-args", "-n 3", "--dry-run"]) == 2
    assert "--repro-args and --repro-timeout are a reproducer's: give --repro FILE" in capsys.readouterr().err


def test_a_reproducers_run_checks_it_alone_and_its_repro_sh_runs_it_again(tmp_path, monkeypatch):
    import argparse
    from foliofarm.cli.cmd_run import run_checks
    from foliofarm.report import repro as repro_sh
    from foliofarm.run.plan import RunOptions
    monkeypatch.setenv("FOLIOFARM_CACHE", str(tmp_path / "cache"))
    script = write(tmp_path, "state.sh", "cat /sys/kernel/mm/transparent_hugepage/enabled\n")
    args = argparse.Namespace(repro=script, repro_args="-n {3}", repro_timeout=None, checks=None,
                              mm_selftests=None)
    checks = run_checks(args)
    assert [c.name for c in checks] == ["repro"]
    assert checks[0].args[-2:] == ("-n", "{{3}}")               # the cell's placeholders never reach it
    assert checks[0].options["reproducer"] == repro.load(script).digest
    args.checks = "exec-text"
    assert [c.name for c in run_checks(args)] == ["exec-text", "repro"]
    opts = RunOptions(kernel="debian:7.3", page_sizes=[], filesystems=[], checks=checks, results=tmp_path,
                      repro=script, repro_args="-n {3}")
    line = repro_sh.argv(opts, "4k", "xfs")
    assert line[line.index("--repro") + 1] == str(script) and "--checks" not in line
    assert line[line.index("--repro-args") + 1] == "-n {3}"

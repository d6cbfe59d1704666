"""Bounds on what untrusted code gives back (foliofarm/bounded.py, proc.py,
kernel/untrusted.py, kernel/seriesdisk.py): output streamed to a capped file
or buffer (head and tail kept), logs read a line at a time, trees removed
whatever their depth, a build's disk and inodes counted (a file system of
its own as root, a walk and the disk's free space as a user)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from foliofarm import bounded, sandbox, util
from foliofarm.bounded import Capped, remove_tree
from foliofarm.errors import TimedOut
from foliofarm.kernel import seriesdisk, untrusted

ROOT = Path(__file__).resolve().parent.parent


def _deep(top: Path, depth: int) -> None:
    """A tree ``depth`` directories deep (its path far past PATH_MAX), made
    relative to each directory as a build would."""
    top.mkdir(parents=True)
    fd = os.open(top, os.O_RDONLY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=fd)
        nxt = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = nxt
    with open(os.open("leaf", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w") as f:
        f.write("x")
    os.close(fd)


def test_a_tree_3000_deep_is_removed(tmp_path):
    """shutil.rmtree raised RecursionError on this and left it (main e3e8762)."""
    _deep(tmp_path / "deep", 3000)
    assert remove_tree(tmp_path / "deep") == ""
    assert not (tmp_path / "deep").exists()


def test_a_tree_made_unreadable_is_removed(tmp_path):
    d = tmp_path / "locked"
    (d / "a" / "b").mkdir(parents=True)
    (d / "a" / "b" / "f").write_text("x")
    (d / "a").chmod(0)
    assert remove_tree(d) == ""
    assert not d.exists()


def test_a_link_out_of_the_tree_is_never_followed(tmp_path):
    keep = tmp_path / "keep"
    keep.mkdir()
    (keep / "precious").write_text("x")
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "link").symlink_to(keep)
    assert remove_tree(tmp_path / "t") == ""
    assert (keep / "precious").read_text() == "x"


def test_a_deep_leftover_of_a_killed_run_never_stops_the_next(tmp_path):
    """A series' build directory 3,000 deep, left by a run that is gone:
    clean_series_copies() (which every series build runs) removes it and
    says so; it raised on main e3e8762, and raised again on every later run."""
    cache = tmp_path / "cache"
    gone = cache / "build" / "series" / "7.3-4k-x-series-999999999"
    _deep(gone, 3000)
    (cache / "build-host" / "series" / gone.name).mkdir(parents=True)
    said: list[str] = []
    untrusted.clean_series_copies(cache, said.append)
    assert not gone.exists() and not (cache / "build-host" / "series" / gone.name).exists()
    assert any("removed" in s and gone.name in s for s in said), said


@settings(max_examples=40, deadline=None)
@given(st.lists(st.binary(min_size=1, max_size=40).filter(lambda b: b"/" not in b and b"\0" not in b),
                min_size=1, max_size=8))
def test_any_names_are_removed(tmp_path_factory, names):
    """Names are bytes to a build (not UTF-8, control bytes, any length)."""
    top = tmp_path_factory.mktemp("names")
    d = top
    for n in names:
        if n in (b".", b".."):
            continue
        try:
            d = d / os.fsdecode(n)
            d.mkdir(exist_ok=True)
        except OSError:      # a name the file system refuses (too long)
            break
    assert remove_tree(top) == "" and not top.exists()


# -- output -------------------------------------------------------------------------

def _child(code: str, *args: str, timeout: float) -> tuple[list[str], int]:
    """``code`` run by a Python of its own: the words it printed, and its
    peak resident memory in kB (VmHWM: its own, where getrusage's ru_maxrss
    after vfork and exec carries the parent's, the test run's, peak)."""
    code += ("\nprint([ln.split()[1] for ln in open('/proc/self/status') if ln.startswith('VmHWM:')][0])")
    out = subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True,
                         text=True, timeout=timeout)
    assert out.returncode == 0, out.stderr[-2000:]
    said = out.stdout.split()
    return said[:-1], int(said[-1])


def _flood_cmd(mb: int) -> list[str]:
    return ["sh", "-c", f"head -c {mb}M /dev/zero | tr '\\0' 'x' | fold -w 100; echo LAST-LINE >&2"]


def test_a_log_keeps_its_head_and_tail_and_says_what_was_left_out(tmp_path, monkeypatch):
    monkeypatch.setattr(util, "LOG_CAP", 1 << 20)
    log = tmp_path / "build.log"
    util.run(_flood_cmd(50), log=log)
    size = log.stat().st_size
    assert size <= (1 << 20) + Capped.TAIL + 4096
    text = log.read_bytes()
    assert b"bytes of output left out here" in text
    assert text.rstrip().endswith(b"LAST-LINE")


def test_a_second_command_in_the_same_log_gets_what_is_left(tmp_path, monkeypatch):
    monkeypatch.setattr(util, "LOG_CAP", 1 << 20)
    log = tmp_path / "build.log"
    util.run(_flood_cmd(3), log=log)
    util.run(["echo", "second"], log=log)
    assert log.stat().st_size <= 2 * ((1 << 20) + Capped.TAIL + 4096)
    assert log.read_text().rstrip().endswith("second")


def test_a_sandboxed_command_s_captured_output_is_capped(monkeypatch):
    monkeypatch.setattr(sandbox, "CAPTURED", 1 << 20)
    proc = sandbox.run(_flood_cmd(60), check=False)
    assert len(proc.stdout) <= (1 << 20) + Capped.TAIL + 200
    assert b"left out here" in proc.stdout
    assert b"LAST-LINE" in proc.stderr


def test_reading_a_flood_keeps_the_farm_small(tmp_path):
    """300 MB printed by a sandboxed command, read by the farm: its peak
    memory stays far under it (util.run kept it all, then copied it, on
    main e3e8762)."""
    code = ("from foliofarm import sandbox; "
            f"p = sandbox.run({_flood_cmd(300)!r}, check=False); "
            "print(len(p.stdout))")
    out, peak_kb = _child(code, timeout=600)
    kept = int(out[0])
    assert kept <= sandbox.CAPTURED + Capped.TAIL + 200
    assert peak_kb < 200 << 10, f"peak {peak_kb >> 10} MB"


def test_log_lines_reads_a_line_at_a_time(tmp_path):
    log = tmp_path / "l"
    log.write_bytes(b"x" * (8 << 20) + b"\nerror: one\n" + b"y\n" * 1000 + b"error: two\n")
    assert [ln[:20] for ln in bounded.log_lines(log, lambda ln: "error" in ln)] == ["error: one", "error: two"]
    assert len(bounded.log_lines(log, lambda ln: True, limit=1)[0]) == 4096


def test_compiler_errors_of_a_huge_log(tmp_path):
    log = tmp_path / "build.log"
    with open(log, "wb") as f:
        for i in range(2_000_000):       # 40 MB: held whole and split, over 200 MB
            f.write(b"  CC      mm/x%d.o\n" % i)
        f.write(b"/tree/mm/memory.c:12:3: error: 'x' undeclared\n")
    out, peak_kb = _child("from pathlib import Path; from foliofarm.kernel import untrusted; "
                          f"print(repr(untrusted.compiler_errors(Path({str(log)!r}), strip='/tree/')))",
                          timeout=300)
    assert " ".join(out) == repr("mm/memory.c:12:3: error: 'x' undeclared")
    assert peak_kb < 100 << 10, f"peak {peak_kb >> 10} MB"


# -- disk and inodes ----------------------------------------------------------------

def test_the_walk_counts_inodes(tmp_path, monkeypatch):
    """As a user (no file system of its own): 300,000 empty files passed the
    walk that counted bytes alone (main e3e8762)."""
    monkeypatch.setattr(untrusted, "SERIES_INODES", 500)
    d = tmp_path / "bdir"
    d.mkdir()
    watch = untrusted.DiskWatch(d, 0, every=0)
    assert watch() == ""
    for i in range(600):
        (d / f"f{i}").touch()
    assert "500 files and directories" in watch()


def test_a_bomb_between_two_walks_is_found_when_the_build_ends(tmp_path, monkeypatch):
    """The walk runs every 15 s: files a build made and finished with in less
    (a series' build of 14 s as a user, 300,000 files) are found by the last
    walk, when the command ends, and the sandbox stops it with the reason."""
    from foliofarm import sandbox
    monkeypatch.setattr(untrusted, "SERIES_INODES", 500)
    d = tmp_path / "bdir"
    d.mkdir()
    watch = untrusted.DiskWatch(d, 0, every=3600)
    for i in range(600):
        (d / f"f{i}").touch()
    assert watch() == ""                # not yet time to walk
    assert "500 files and directories" in watch.final()
    more = untrusted.DiskWatch(d, 0, every=3600)
    with pytest.raises(TimedOut, match="500 files and directories.*found when it ended"):
        sandbox.run(["sh", "-c", f"for i in $(seq 1 600); do : > {d}/g$i; done"], write=[d],
                    watch=more, what="the bomb")


def test_the_walk_counts_unlinked_files_held_open(tmp_path, monkeypatch):
    """Files fallocated, unlinked and held open: no walk finds them, the
    disk's free space does (main e3e8762 let 10 GB of them pass)."""
    monkeypatch.setattr(untrusted, "SERIES_DISK_MB", 64)
    d = tmp_path / "bdir"
    d.mkdir()
    watch = untrusted.DiskWatch(d, 0, every=0)
    held = []
    try:
        for i in range(3):
            f = open(d / f"big{i}", "wb")
            os.posix_fallocate(f.fileno(), 0, 200 << 20)
            os.unlink(d / f"big{i}")
            held.append(f)
        said = watch()
    finally:
        for f in held:
            f.close()
    assert "64 MB of disk" in said and "unlinked files held open count" in said, said


needs_own_fs = pytest.mark.skipif(bool(seriesdisk.why_not()), reason=seriesdisk.why_not() or "-")


@needs_own_fs
@pytest.mark.parametrize("bomb", ["bytes", "unlinked", "inodes"])
def test_a_file_system_of_its_own_holds_every_bomb(tmp_path, bomb):
    """As root the kernel holds the limits: a series' build directory is an
    ext4 file system of a size and an inode count; past either, writes fail
    with ENOSPC and filled() names the limit. Unmounted, nothing is left."""
    from foliofarm.errors import InfraError
    bdir, host = tmp_path / "bdir", tmp_path / "host"
    host.mkdir()
    try:
        seriesdisk.make(bdir, host, 64 << 20, 2000)
    except InfraError as exc:       # a host that refuses loop mounts: the farm walks instead
        seriesdisk.unmount(bdir, host)
        pytest.skip(f"no loop mount here: {str(exc).splitlines()[0][:200]}")
    try:
        with pytest.raises(OSError) as err:
            if bomb == "inodes":
                for i in range(5000):
                    (bdir / f"f{i}").touch()
            else:
                fd = os.open(bdir / "big", os.O_WRONLY | os.O_CREAT, 0o644)
                try:
                    if bomb == "unlinked":
                        os.unlink(bdir / "big")
                    for _ in range(128):
                        os.write(fd, b"x" * (1 << 20))
                finally:
                    os.close(fd)
        assert err.value.errno == 28
        # the unlinked file is gone with its last descriptor: the build's log says it was full
        said = seriesdisk.filled(bdir, said_full=bomb == "unlinked")
        assert ("files and directories" if bomb == "inodes" else "MB of disk") in said, said
        assert seriesdisk.filled(bdir) == ("" if bomb == "unlinked" else said)
    finally:
        assert seriesdisk.unmount(bdir, host) == ""
    assert not seriesdisk.mounted_below(bdir)
    assert not (host / seriesdisk.IMAGE).exists()
    assert remove_tree(bdir) == ""


# -- the reproducer's compiler --------------------------------------------------------

def _flood_source(levels: int) -> str:
    """A small C file that includes itself (to gcc's depth limit) and expands
    a macro 2**levels times a level, each expansion a warning with its notes:
    hundreds of MB of diagnostics from a few hundred bytes."""
    lines = ['#include "repro.c"', "#define L0(x) ((x) << 40)"]
    lines += [f"#define L{i}(x) L{i - 1}(L{i - 1}(x))" for i in range(1, levels + 1)]
    return "\n".join([*lines, f"static inline int flood(int v) {{ return L{levels}(v); }}", ""])


@pytest.mark.integration          # a minute of the compiler's CPU
def test_a_compile_that_floods_keeps_the_farm_small_and_the_error_short(tmp_path):
    """A reproducer whose compile prints hundreds of MB of warnings (main
    e3e8762 held them all: 1.9 GB): it does not compile, the error says so
    in at most 40 short lines, and the farm's peak memory stays small."""
    src = tmp_path / "flood.c"
    src.write_text(_flood_source(7))
    code = ("import resource, sys; from pathlib import Path; from foliofarm.disks import reproducer; "
            "from foliofarm.errors import UsageError\n"
            f"r = reproducer.load(Path({str(src)!r}))\n"
            "try:\n    reproducer.compiled(r, Path(sys.argv[1]))\n    print('compiled')\n"
            "except UsageError as e:\n    print(len(str(e).splitlines()), max(map(len, str(e).splitlines())))\n")
    said, peak_kb = _child(code, str(tmp_path / "prog"), timeout=900)
    assert said[0] != "compiled", "the flood compiled"
    lines, longest = map(int, said[:2])
    assert lines <= 41 and longest <= 600
    assert peak_kb < 200 << 10, f"peak {peak_kb >> 10} MB"


def test_the_compiler_sees_the_toolchain_and_nothing_else_of_the_host(tmp_path):
    """What a compile error quotes goes into a public reply: the host's
    /usr/share, /usr/local (its etc/) and /usr/include are not there to quote."""
    from foliofarm.disks import reproducer
    from foliofarm.errors import UsageError
    quoted = Path("/usr/share/common-licenses/GPL-3")
    if not quoted.is_file():
        pytest.skip(f"{quoted} is not on this host")
    src = tmp_path / "peek.c"
    src.write_text(f'#include "{quoted}"\nint main(void) {{ return 0; }}\n')
    with pytest.raises(UsageError) as err:
        reproducer.compiled(reproducer.load(src), tmp_path / "prog")
    assert "No such file or directory" in str(err.value)
    assert "GNU GENERAL PUBLIC LICENSE" not in str(err.value)
    ok = tmp_path / "ok.c"
    ok.write_text("#include <stdio.h>\n#include <pthread.h>\nint main(void) { puts(\"x\"); return 0; }\n")
    prog = reproducer.compiled(reproducer.load(ok), tmp_path / "ok")
    assert prog.read_bytes()[:4] == b"\x7fELF"

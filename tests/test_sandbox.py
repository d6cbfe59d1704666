"""The sandbox the tree's own code runs in (foliofarm/sandbox.py), with real
bubblewrap and real make: a tree whose Makefile writes under $HOME, reads a
file outside the tree or reaches the network fails with a clear message, and
the host is left untouched."""

from pathlib import Path

import pytest

from foliofarm import sandbox
from foliofarm.kernel.build import Builder
from foliofarm.errors import BuildError, InfraError
from foliofarm.intake.source import KernelSource

MAKEFILE = """\
all:
\techo ok > $(O)/built
home:
\ttouch {home}/{marker}
env:
\t@echo "secret=[$(FOLIOFARM_SMTP_PASSWORD)] home=[$(HOME)]"; env
loop:
\twhile :; do :; done
big:
\thead -c 64M /dev/zero > $(O)/big
read:
\tcat {secret} > $(O)/stolen
net:
\tpython3 -c 'import socket; socket.create_connection(("192.0.2.1", 80), 3)'
tree:
\techo changed > $(srctree)/Makefile
"""


@pytest.fixture
def hostile(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    secret = tmp_path / "secret"
    secret.write_text("host secret\n")
    tree = tmp_path / "linux"
    tree.mkdir()
    (tree / "Makefile").write_text(MAKEFILE.format(marker="foliofarm-escaped", secret=secret, home=home)
                                   .replace("$(srctree)", str(tree)))
    assert sandbox.enabled() and sandbox._check() == "", sandbox._check()
    src = KernelSource(spec=str(tree), tree=tree, version="7.3.0", origin=str(tree))
    return Builder(tmp_path / "cache"), src, tmp_path / "build", home, secret


def make(builder, src, bdir, target):
    bdir.mkdir(exist_ok=True)
    logf = bdir / "log"
    builder._make(src, bdir, builder.make_env(), logf, target)


def assert_gone(needle: str) -> None:
    """No process whose command line holds ``needle`` is left after 5 s."""
    import subprocess
    import time
    for _ in range(50):
        if needle not in subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout:
            return
        time.sleep(0.1)
    raise AssertionError(f"a process of {needle!r} still runs")


def test_the_build_writes_its_own_directory(hostile):
    builder, src, bdir, _, _ = hostile
    make(builder, src, bdir, "all")
    assert (bdir / "built").read_text() == "ok\n"


@pytest.mark.parametrize("target,said", [
    ("home", "Read-only file system"),
    ("net", "Network is unreachable"),
    ("tree", "Read-only file system"),
])
def test_writing_home_or_the_tree_and_the_network_are_stopped_and_said(hostile, target, said):
    builder, src, bdir, home, _ = hostile
    before = (src.tree / "Makefile").read_text()
    with pytest.raises(BuildError) as err:
        make(builder, src, bdir, target)
    msg = str(err.value)
    assert "the sandbox stopped it" in msg and said in msg
    assert list(home.iterdir()) == []                      # the host's $HOME untouched
    assert (src.tree / "Makefile").read_text() == before   # and the tree


def test_a_file_outside_the_tree_cannot_be_read(hostile):
    builder, src, bdir, _, secret = hostile
    with pytest.raises(BuildError, match="make read failed"):
        make(builder, src, bdir, "read")
    assert (bdir / "stolen").read_text() == ""
    assert "No such file or directory" in (bdir / "log").read_text()


def test_sandbox_off_runs_the_command_as_it_is(monkeypatch):
    monkeypatch.setenv("FOLIOFARM_SANDBOX", "off")
    assert sandbox.wrap(["make", "-C", "x"]) == ["make", "-C", "x"]
    monkeypatch.setenv("FOLIOFARM_SANDBOX", "on")
    argv = sandbox.wrap(["make"], read=[Path("/srv/linux")], check=False)
    assert argv[0] == "bwrap" and "--unshare-all" in argv and argv[-2:] == ["--", "make"]
    assert ["--ro-bind", "/srv/linux", "/srv/linux"] == argv[argv.index("/srv/linux") - 1:][:3]


def test_the_farms_environment_never_reaches_the_build(hostile, monkeypatch):
    """A Makefile that prints a secret of the farm's environment prints nothing:
    the sandbox starts from a cleared environment (and so does the command with
    the sandbox off)."""
    builder, src, bdir, home, _ = hostile
    monkeypatch.setenv("FOLIOFARM_SMTP_PASSWORD", "hunter2-sandbox-test")
    for mode in ("on", "off"):
        monkeypatch.setenv("FOLIOFARM_SANDBOX", mode)
        make(builder, src, bdir, "env")
        log = (bdir / "log").read_text()
        assert "secret=[]" in log and "hunter2-sandbox-test" not in log
        said = "".join(ln for ln in log.splitlines(True) if not ln.startswith("$ "))
        assert str(home) not in said and "home=[/nonexistent]" in said
        assert "ARCH=arm64" in log      # what the build needs is there


def test_a_build_that_never_ends_is_stopped_at_its_limit(hostile):
    builder, src, bdir, _, _ = hostile
    builder.limits = sandbox.Limits(seconds=3)
    with pytest.raises(BuildError, match="stopped at a limit") as err:
        make(builder, src, bdir, "loop")
    assert "its limit of 3 s" in str(err.value)
    # nothing of it is left running (a process killed is gone within moments)
    assert_gone("while :")


def test_a_file_over_the_limit_is_not_written(hostile):
    builder, src, bdir, _, _ = hostile
    builder.limits = sandbox.Limits(seconds=60, file_mb=16)
    with pytest.raises(BuildError):
        make(builder, src, bdir, "big")
    assert (bdir / "big").stat().st_size <= 16 << 20


def test_a_series_build_that_fills_the_disk_is_stopped(tmp_path, monkeypatch):
    """The disk watch of a series' build: over its allowance, the build is
    killed with the reason."""
    from foliofarm.errors import TimedOut
    from foliofarm.kernel import untrusted
    from foliofarm import proc, util
    monkeypatch.setattr(untrusted, "SERIES_DISK_MB", 8)
    monkeypatch.setattr(proc, "WATCH_EVERY", 0.5)
    out = tmp_path / "bdir"
    out.mkdir()
    watch = untrusted.DiskWatch(out, 0, every=0)
    script = f"for i in $(seq 100); do head -c 1M /dev/zero > {out}/f$i; sleep 0.1; done"
    with pytest.raises(TimedOut, match="8 MB of disk"):
        sandbox.run(["sh", "-c", script], write=[out], limits=sandbox.Limits(seconds=60),
                    watch=watch)
    assert len(list(out.iterdir())) < 100


def test_artifacts_are_taken_without_following_links(tmp_path):
    """A build that leaves a link where the Image should be gets a clear refusal,
    not a copy of the host file it points to."""

    from foliofarm.beneath import copy_regular
    secret = tmp_path / "secret"
    secret.write_text("host secret\n")
    (tmp_path / "Image").symlink_to(secret)
    with pytest.raises(InfraError, match="symbolic link"):
        copy_regular(tmp_path / "Image", tmp_path / "out", 1 << 20)
    import os
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(InfraError, match="not a regular file"):
        copy_regular(tmp_path / "fifo", tmp_path / "out", 1 << 20)
    (tmp_path / "large").write_bytes(b"x" * 4096)
    with pytest.raises(InfraError, match="over the"):
        copy_regular(tmp_path / "large", tmp_path / "out", 1024)
    assert not (tmp_path / "out").exists()


def test_a_link_to_a_device_in_a_series_tree_is_never_read(tmp_path):
    """A series may add a symbolic link where the farm hashes the tree's files
    (Kconfig, the selftests' parts): a link to /dev/zero would be read forever.
    It is hashed by where it points, and its target is never opened."""
    from foliofarm.disks import selftests_disk
    from foliofarm.kernel import kconfig
    tree = tmp_path / "linux"
    (tree / "mm").mkdir(parents=True)
    (tree / "mm" / "Kconfig").write_text("config MM\n")
    (tree / "mm" / "gup_test.h").write_text("/* */\n")
    before = kconfig.inputs_digest(tree), selftests_disk.inputs_digest(tree)
    (tree / "mm" / "Kconfig.evil").symlink_to("/dev/zero")
    (tree / "mm" / "evil.h").symlink_to("/dev/zero")
    after = kconfig.inputs_digest(tree), selftests_disk.inputs_digest(tree)
    assert after[0] != before[0] and after[1] != before[1]
    (tree / "mm" / "Kconfig.evil").unlink()
    (tree / "mm" / "Kconfig.evil").symlink_to("/dev/urandom")
    assert kconfig.inputs_digest(tree) != after[0]


# -- no privilege inside, whoever runs the farm (root here, and a user)

PROBE = """
grep -E '^(CapEff|NoNewPrivs):' /proc/self/status
mount -o remount,bind,rw {ro} 2>/dev/null && echo remount=ok || echo remount=refused
mount -t tmpfs none {rw} 2>/dev/null && echo mount=ok || echo mount=refused
mknod {rw}/null c 1 3 2>/dev/null && echo mknod=ok || echo mknod=refused
unshare -U -r true 2>/dev/null && echo userns=ok || echo userns=refused
touch {ro}/x 2>/dev/null && echo ro-write=ok || echo ro-write=refused
touch {rw}/x && echo rw-write=ok
"""


def probe_inside(tmp_path, as_user: bool) -> str:
    ro, rw = tmp_path / "ro", tmp_path / "rw"
    ro.mkdir()
    rw.mkdir()
    script = PROBE.format(ro=ro, rw=rw)
    if not as_user:
        return sandbox.run(["sh", "-c", script], read=[ro], write=[rw],
                           limits=sandbox.Limits(seconds=60)).stdout.decode()
    # the farm run by an unprivileged user: the same call, from a process of uid 65534
    import os
    import subprocess
    import sys
    os.chmod(rw, 0o777)
    user = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"]
    # the same imports as the call below: a checkout where uid 65534 cannot
    # read the package (under /root) is said as such, not taken for a sandbox's fault
    probe = subprocess.run([*user, sys.executable, "-c", "import pexpect, foliofarm.sandbox"], capture_output=True,
                           env={"PYTHONPATH": str(Path(__file__).parents[1])}, text=True)
    if probe.returncode:
        pytest.skip(f"uid 65534 cannot run this Python ({probe.stderr.strip()[-200:]})")
    code = ("import sys; from pathlib import Path; from foliofarm import sandbox; "
            "sys.stdout.write(sandbox.run(['sh', '-c', sys.argv[1]], read=[Path(sys.argv[2])], "
            "write=[Path(sys.argv[3])], limits=sandbox.Limits(seconds=60)).stdout.decode())")
    p = subprocess.run([*user, sys.executable, "-c", code, script, str(ro), str(rw)],
                       capture_output=True, text=True, env={"PATH": os.environ["PATH"],
                                                            "HOME": "/nonexistent",
                                                            "PYTHONPATH": str(Path(__file__).parents[1])},
                       timeout=120)
    assert p.returncode == 0, p.stderr
    return p.stdout


@pytest.fixture
def open_tmp():
    """A directory every uid may reach (pytest's own is root's alone)."""
    import shutil
    import tempfile
    d = Path(tempfile.mkdtemp(prefix="foliofarm-sandbox-"))
    d.chmod(0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.mark.parametrize("as_user", [False, True], ids=["as-farm-user", "as-uid-65534"])
def test_nothing_inside_the_sandbox_holds_a_privilege(open_tmp, as_user):
    """bubblewrap run by root keeps every capability unless told: the sandbox
    drops them all in a user namespace of its own, so a build can neither
    remount its read-only tree writable, mount, make a device node nor make
    a user namespace to gain them back; the same for a user."""
    import os
    if as_user and os.geteuid() != 0:
        pytest.skip("the farm already runs as a user here (the other case)")
    out = probe_inside(open_tmp, as_user)
    assert "CapEff:\t0000000000000000" in out, out
    assert "NoNewPrivs:\t1" in out, out
    for what in ("remount", "mount", "mknod", "userns", "ro-write"):
        assert f"{what}=refused" in out, out
    assert "rw-write=ok" in out, out       # its own output it may write


def cgroups_or_skip():
    from foliofarm import cgroups
    if not cgroups.available():
        pytest.skip(f"no cgroup for the farm here ({cgroups.why_not()}): per-process limits only")


@pytest.mark.parametrize("how", ["cgroup", "counted"])
def test_a_command_that_forks_without_end_is_stopped(monkeypatch, how):
    """RLIMIT_NPROC does not hold root; the cgroup's task limit does, for
    everything the command started together, and the reason is said. Where
    the host gives no cgroup, the sandbox's tasks are counted and it is
    stopped at the limit all the same."""
    from foliofarm import cgroups, proc, util
    from foliofarm.errors import TimedOut
    if how == "cgroup":
        cgroups_or_skip()
    else:
        monkeypatch.setenv("FOLIOFARM_CGROUPS", "off")
        cgroups._hierarchies.cache_clear()
        assert not cgroups.available()
    monkeypatch.setattr(proc, "WATCH_EVERY", 0.5)
    with pytest.raises(TimedOut, match="limit of 32 tasks"):
        sandbox.run(["sh", "-c", "while :; do sleep 600 & done"],
                    limits=sandbox.Limits(seconds=120, tasks=32))
    cgroups._hierarchies.cache_clear()
    assert not [g for g in Path("/sys/fs/cgroup").glob("*/**/foliofarm-*") if g.is_dir()
                and str(__import__("os").getpid()) in g.name]    # its cgroup is gone
    assert_gone("sleep 600")


def test_a_command_that_allocates_without_end_is_stopped_by_its_cgroup():
    """Many processes, each under the per-process address-space limit, hold
    more than the total: the cgroup's memory limit stops them, with the reason."""
    cgroups_or_skip()
    from foliofarm.errors import TimedOut
    hog = "python3 -c 'a = [bytearray(1 << 20) for _ in range(48)]; import time; time.sleep(60)'"
    with pytest.raises(TimedOut, match="memory limit of 96 MB"):
        sandbox.run(["sh", "-c", f"for i in 1 2 3 4; do {hog} & done; wait; exit 1"],
                    limits=sandbox.Limits(seconds=120, total_memory_mb=96))


def test_a_command_that_fills_its_tmp_is_told_so():
    """The sandbox's /tmp is a tmpfs of a set size: filling it is a clear error
    naming the limit, not the host's disk."""
    with pytest.raises(InfraError, match=r"filled its /tmp .*at most 8 MB"):
        sandbox.run(["sh", "-c", "head -c 64M /dev/zero > /tmp/fill"],
                    limits=sandbox.Limits(seconds=60, tmp_mb=8))


def test_the_host_reads_and_writes_below_a_build_directory_through_no_link(tmp_path):
    """What the host opens in a directory a series' code could write follows no
    link on any component: a link planted at the file, or at a folder on its
    way, is refused (read) or replaced (write); the host files they name are
    neither read nor written."""
    from foliofarm import beneath
    bdir = tmp_path / "bdir"
    (bdir / "arch" / "arm64").mkdir(parents=True)
    host = tmp_path / "host"
    host.mkdir()
    (host / "passwd").write_text("root:x:0:0\n")
    (bdir / "arch" / "arm64" / "boot").symlink_to(host)
    with pytest.raises(InfraError, match="symbolic link"):
        beneath.read_beneath(bdir, "arch/arm64/boot/passwd", 1 << 20)
    (bdir / ".config").symlink_to(host / "passwd")
    with pytest.raises(InfraError, match="symbolic link"):
        beneath.read_beneath(bdir, ".config", 1 << 20)
    beneath.write_beneath(bdir, ".config", b"CONFIG_MMU=y\n")
    assert (host / "passwd").read_text() == "root:x:0:0\n"
    assert not (bdir / ".config").is_symlink() and (bdir / ".config").read_text() == "CONFIG_MMU=y\n"
    with pytest.raises(InfraError, match="symbolic link"):
        beneath.write_beneath(bdir, "arch/arm64/boot/x", b"x")
    assert sorted(p.name for p in host.iterdir()) == ["passwd"]
    with pytest.raises(InfraError, match="no '..'"):
        beneath.read_beneath(bdir, "../host/passwd", 1 << 20)


def test_a_selftests_make_that_turns_its_folder_into_a_link_gets_no_host_file_copied(tmp_path):
    """The selftests' make writes its scratch tree: one that replaces its mm
    folder with a link to a host folder of scripts gets none of them installed
    (the host walks the scratch tree without following a link), and one that
    leaves a link among its scripts gets that link passed over."""
    from foliofarm.disks import selftests_disk
    host = tmp_path / "host"
    host.mkdir()
    (host / "stolen.sh").write_text("echo host secret\n")
    scratch, out = tmp_path / "scratch", tmp_path / "out"
    mm = scratch / selftests_disk.MM
    mm.mkdir(parents=True)
    out.mkdir()
    (mm / "run_vmtests.sh").write_text("#!/bin/sh\n")
    (mm / "Makefile").write_text(f"all:\n\tln -s {host}/stolen.sh $(CURDIR)/linked.sh\n")
    sandbox.run(["make", "-C", str(mm)], write=[scratch, out], limits=sandbox.Limits(seconds=60))
    selftests_disk.install_scripts(scratch, out)
    assert sorted(p.name for p in out.iterdir()) == ["run_vmtests.sh"]
    (mm / "Makefile").write_text(f"all:\n\tmv $(CURDIR) $(CURDIR).gone && ln -s {host} $(CURDIR)\n")
    for p in out.iterdir():
        p.unlink()
    sandbox.run(["make", "-C", str(mm)], write=[scratch, out], limits=sandbox.Limits(seconds=60))
    assert mm.is_symlink()
    with pytest.raises(InfraError, match="symbolic link"):
        selftests_disk.install_scripts(scratch, out)
    assert list(out.iterdir()) == []
    assert sorted(p.name for p in host.iterdir()) == ["stolen.sh"]


def test_kconfig_files_that_are_links_are_never_read(tmp_path):
    """A series may add a Kconfig file that is a link to a host file (git
    applies symbolic links): the symbols the farm reads come from the tree's
    regular files only."""
    from foliofarm.kernel import kconfig
    host = tmp_path / "host-Kconfig"
    host.write_text("config FF_FROM_THE_HOST\n\tbool\n")
    tree = tmp_path / "linux"
    (tree / "mm").mkdir(parents=True)
    (tree / "mm" / "Kconfig").write_text("config MMU\n\tbool\n")
    (tree / "mm" / "Kconfig.evil").symlink_to(host)
    (tree / "arch").symlink_to(tmp_path)       # a link to a folder is not walked into
    found = kconfig.kconfig_symbols(tree)
    assert "CONFIG_MMU" in found and "CONFIG_FF_FROM_THE_HOST" not in found


def test_the_selftests_copy_takes_nothing_below_a_folder_that_is_a_link(tmp_path):
    """A series may turn `tools` into a link to a host folder: the parts the
    selftests' build reads (tools/scripts, tools/include, ...) are then left
    out, never copied from the host into the sandbox's scratch tree."""
    from foliofarm.disks import selftests_disk
    host = tmp_path / "home"
    (host / "scripts").mkdir(parents=True)
    (host / "scripts" / "id_rsa").write_text("host secret\n")
    tree = tmp_path / "linux"
    (tree / "mm").mkdir(parents=True)
    (tree / "mm" / "gup_test.h").write_text("/* */\n")
    before = selftests_disk.inputs_digest(tree)
    (tree / "tools").symlink_to(host)
    scratch = tmp_path / "scratch"
    selftests_disk.copy_parts(tree, scratch)
    assert (scratch / "mm" / "gup_test.h").is_file()
    assert not (scratch / "tools").exists()
    assert selftests_disk.inputs_digest(tree) == before     # the host folder is not read either

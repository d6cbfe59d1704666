"""The sandbox the tree's own code runs in (foliofarm/sandbox.py), with real
bubblewrap and real make: a tree whose Makefile writes under $HOME, reads a
file outside the tree or reaches the network fails with a clear message, and
the host is left untouched."""

from pathlib import Path

import pytest

from foliofarm import sandbox
from foliofarm.kernel.build import Builder
from foliofarm.errors import BuildError
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
    import subprocess
    import time
    for _ in range(50):
        if "while :" not in subprocess.run(["ps", "-eo", "args"], capture_output=True,
                                           text=True).stdout:
            break
        time.sleep(0.1)
    else:
        raise AssertionError("the build's loop still runs")


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
    from foliofarm import util
    monkeypatch.setattr(untrusted, "SERIES_DISK_MB", 8)
    monkeypatch.setattr(util, "WATCH_EVERY", 0.5)
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
    from foliofarm.errors import InfraError
    from foliofarm.sandbox import copy_regular
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

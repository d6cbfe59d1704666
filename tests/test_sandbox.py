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
\ttouch $(HOME)/{marker}
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
    (tree / "Makefile").write_text(MAKEFILE.format(marker="foliofarm-escaped", secret=secret)
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

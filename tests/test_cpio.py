"""The initramfs writer (foliofarm/disks/cpio.py): GNU cpio, an independent
reader of the newc format, lists and extracts what it wrote, with device
nodes, links, modes and contents as given; and the farm reads it back."""

import os
import stat
import subprocess

import pytest

from foliofarm.disks import cpio

ENTRIES = [
    cpio.Entry("dir", "/dev", 0o755),
    cpio.Entry("nod", "/dev/console", 0o600, rdev=(5, 1)),
    cpio.Entry("dir", "/bin", 0o755),
    cpio.Entry("dir", "/tmp", 0o1777),
    cpio.Entry("file", "/bin/busybox", 0o755, b"\x7fELF" + bytes(range(256)) * 3 + b"x"),
    cpio.Entry("slink", "/bin/sh", 0o777, b"/bin/busybox"),
    cpio.Entry("file", "/init", 0o755, b"#!/bin/sh\necho hello\n"),
    cpio.Entry("file", "/empty", 0o644, b""),
]


def test_what_it_writes_reads_back_the_same():
    assert cpio.read(cpio.archive(ENTRIES)) == ENTRIES


def test_gnu_cpio_lists_it_as_written():
    p = subprocess.run(["cpio", "-itv", "--quiet"], input=cpio.archive(ENTRIES),
                       capture_output=True, check=True)
    lines = p.stdout.decode().splitlines()
    names = [ln.split()[-1] if "->" not in ln else ln.split()[-3] for ln in lines]
    assert names == [e.name.lstrip("/") for e in ENTRIES]
    by_name = dict(zip(names, lines))
    assert by_name["dev/console"].startswith("crw-------") and "5," in by_name["dev/console"]
    assert by_name["tmp"].startswith("drwxrwxrwt")
    assert by_name["bin/sh"].startswith("lrwxrwxrwx") and by_name["bin/sh"].endswith("-> /bin/busybox")


def test_gnu_cpio_extracts_the_contents(tmp_path):
    data = cpio.archive([e for e in ENTRIES if e.kind != "nod"])   # mknod needs privilege
    subprocess.run(["cpio", "-idm", "--quiet", "--no-absolute-filenames"], input=data,
                   cwd=tmp_path, check=True)
    assert (tmp_path / "bin/busybox").read_bytes() == ENTRIES[4].data
    assert stat.S_IMODE((tmp_path / "init").stat().st_mode) == 0o755
    assert os.readlink(tmp_path / "bin/sh") == "/bin/busybox"
    assert (tmp_path / "empty").read_bytes() == b""


def test_an_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="unknown kind"):
        cpio.archive([cpio.Entry("fifo", "/x", 0o644)])

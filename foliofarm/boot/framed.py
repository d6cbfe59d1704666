"""Checks run in a guest no host drives at its console (a LAVA job's, one under
virtme-ng): a small EROFS disk (serial ffjob) holding, per check of the cell,
the command the farm's host would have sent (checks/NAME.sh, formatted by
boot/session.py as for its own boots, the cell's block device found at run
time) and the file it leaves (checks/NAME.out), and the driver
tests/vmtests/lava-check.sh that runs one and prints its output and that file
framed; and that output read back into the measurement the farm's own boot
would have made."""

from __future__ import annotations

import base64
import gzip
import hashlib
import os
import re
import shlex
import shutil
import zlib
from pathlib import Path
from typing import Any, Iterable

from foliofarm.errors import UsageError
from foliofarm.disks import images
from foliofarm.judge import ktap
from foliofarm.boot import splat
from foliofarm.boot.session import SELFTESTS_OUTPUT, check_fmt, command_line, setup_lines, without_dump
from foliofarm.judge.catalogue import Check, Kind
from foliofarm.judge.measurement import Measurement, TestsRun, error
from foliofarm.matrix import Cell
from foliofarm.paths import VMTESTS
from foliofarm.util import tmp_dir

JOB_DISK = "ffjob"
DRIVER = VMTESTS / "lava-check.sh"
DEV = "@FFDEV@"      # the cell's block device, found by serial when the check runs


def check_script(cell: Cell, chk: Check, attached: Iterable[str]) -> tuple[str, str]:
    """checks/NAME.sh and checks/NAME.out for ``chk`` in ``cell``'s guest, whose
    disks have the serials ``attached`` (each mounted at /mnt/<serial>)."""
    have = set(attached)
    fmt = check_fmt(cell, chk, DEV, lambda serial: serial in have)
    lines = [*setup_lines(chk, fmt), command_line(chk, fmt)]
    # the device goes in as a shell variable, which a quoted word would not expand
    if any(DEV in w and shlex.quote(w) != w for w in shlex.split(lines[-1])):
        raise UsageError(f"check {chk.name}: its device is in a quoted argument: {lines[-1]}")
    body = ["#!/bin/sh", f"# {chk.name} in cell {cell.page.name}-{cell.fs.name}, as the farm runs it",
            f"FFDEV=$(for b in /sys/block/vd*; do [ \"$(cat $b/serial 2>/dev/null)\" = {cell.fs.name} ] "
            "&& echo ${b##*/}; done)",
            "set -e" if chk.options.get("setup") else ":",
            *(ln.replace(DEV, '"$FFDEV"') for ln in lines[:-1]),
            "set +e",
            "exec " + lines[-1].replace(DEV, '"$FFDEV"')]
    out = SELFTESTS_OUTPUT if chk.tree == "selftests" else fmt["dump"]
    return "\n".join(body) + "\n", out + "\n"


def job_disk(dest: Path, cell: Cell, checks: list[Check], attached: Iterable[str]) -> Path:
    """The job disk for ``cell`` at ``dest`` (an EROFS image)."""
    attached = list(attached)
    with tmp_dir("lava-job-disk") as tmp:
        root = Path(tmp)
        (root / "checks").mkdir()
        shutil.copy2(DRIVER, root / "lava-check")
        (root / "lava-check").chmod(0o755)
        for chk in checks:
            script, out = check_script(cell, chk, attached)
            (root / "checks" / f"{chk.name}.sh").write_text(script)
            (root / "checks" / f"{chk.name}.out").write_text(out)
        dest.parent.mkdir(parents=True, exist_ok=True)
        part = dest.with_name(dest.name + f".part-{os.getpid()}")
        images.make_erofs(part, root)
        os.replace(part, dest)
    return dest


def mount_command() -> str:
    """The shell line that mounts the job disk at /mnt/ffjob (init mounts only
    the disks its initramfs knows)."""
    return (f"mkdir -p /mnt/{JOB_DISK}; for b in /sys/block/vd*; do "
            f"[ \"$(cat $b/serial 2>/dev/null)\" = {JOB_DISK} ] && "
            f"mount -t erofs -o ro /dev/${{b##*/}} /mnt/{JOB_DISK}; done; "
            f"test -x /mnt/{JOB_DISK}/lava-check && echo FOLIOFARM-JOB-DISK ok")


BEGIN = re.compile(r"^FOLIOFARM-BEGIN (\S+)\s*$")
END = re.compile(r"^FOLIOFARM-END (\S+) status=(\d+) taint=(\d+),(\d+) seconds=(\d+)\s*$")
FILE = re.compile(r"^FOLIOFARM-FILE (\S+) size=(\d+) md5=([0-9a-f]{32})\s*$")
FILE_END = re.compile(r"^FOLIOFARM-FILE-END (\S+)\s*$")
B64 = re.compile(r"^[A-Za-z0-9+/=]+$")


def measurement(lines: list[str], chk: Check, parser: Any, where: str = "the LAVA job's log") -> Measurement:
    """``chk``'s measurement from the console ``lines`` (``where`` names
    them in reasons), as boot/session.py makes it from a boot the farm drives."""
    start = next((i for i, ln in enumerate(lines) if (m := BEGIN.match(ln)) and m.group(1) == chk.name), None)
    if start is None:
        return error(f"{chk.name} never started ({where} has no FOLIOFARM-BEGIN {chk.name})")
    end = next((i for i in range(start + 1, len(lines)) if (m := END.match(lines[i])) and m.group(1) == chk.name),
               None)
    body = lines[start + 1:end] if end is not None else lines[start + 1:]
    text = "\n".join(body) + "\n"
    reports = splat.scan(text)
    trouble: dict[str, Any] = {"splats": [f"{s.kind}: {s.line}" for s in reports],
                               "kernel_log": "\n".join(s.excerpt for s in reports)[-6000:]}
    selftests = chk.tree == "selftests"
    if end is None:
        return Measurement(kind=Kind.CRASH, reason=f"the kernel hung or crashed: {where} ends inside it",
                           excerpt=text[-4000:], console=text, ended_boot=True,
                           tests=parsed(parser, text) if selftests else None, **trouble)
    m = END.match(lines[end])
    assert m is not None
    status, before, after, seconds = int(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5))
    new = after & ~before
    base = {"seconds": float(seconds), "taint": splat.taint_letters(new), "taint_mask": new, **trouble}
    content = file_of(lines, end, chk.name, where)
    if selftests:
        if status != 0 or content is None:
            return error(f"the selftests driver exited {status}: {text.strip()[-300:]}", ktap=text, **base)
        return Measurement(kind=Kind.KTAP, ktap=content, tests=parsed(parser, content), **base)
    if (ended := without_dump(text, status)) is not None:
        return Measurement(kind=ended[0], reason=ended[1], ktap=text, **base)
    if content is None:
        return error(f"its dump is not in {where}", ktap=text, **base)
    return Measurement(kind=Kind.DUMP, ktap=text, dump=content, **base)


def file_of(lines: list[str], after: int, name: str, where: str = "the LAVA job's log") -> str | None:
    """The file a check left, as the guest printed it after its END line
    (base64 of gzip; lines of the kernel's own among it are left out), checked
    against its md5sum; None if it printed none."""
    i = next((j for j in range(after + 1, len(lines)) if (m := FILE.match(lines[j])) and m.group(1) == name), None)
    if i is None:
        return None
    m = FILE.match(lines[i])
    assert m is not None
    j = next((k for k in range(i + 1, len(lines)) if (e := FILE_END.match(lines[k])) and e.group(1) == name), None)
    if j is None:
        raise UsageError(f"{name}: {where} ends inside its file (FOLIOFARM-FILE without -END)")
    data = "".join(ln.strip() for ln in lines[i + 1:j] if B64.match(ln.strip()))
    try:
        raw = gzip.decompress(base64.b64decode(data))
    except (ValueError, OSError, EOFError, zlib.error) as exc:
        raise UsageError(f"{name}: its file in {where} does not decode ({exc})") from None
    if len(raw) != int(m.group(2)) or hashlib.md5(raw).hexdigest() != m.group(3):
        raise UsageError(f"{name}: its file in {where} is damaged (size or md5 differ)")
    return raw.decode(errors="replace")


def parsed(parser: Any, text: str, name: str = "kunit_parser") -> TestsRun:
    """A selftests run's KTAP read by the kernel's parser (``name`` its file)."""
    run = ktap.parse(text, parser)
    return TestsRun(results=run.results, planned=run.planned,
                    complete=run.complete, parser_errors=run.errors[:20], parser=name)

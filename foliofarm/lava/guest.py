"""What a LAVA job's guest runs without a host at its console: a small EROFS
disk (serial ffjob) holding, per check of the cell, the command the farm's host
would have sent (checks/NAME.sh, formatted by guest/session.py as for its own
boots, the cell's block device found at run time) and the file it leaves
(checks/NAME.out), and the driver tests/vmtests/lava-check.sh that runs one and
prints its output and that file framed on the console."""

from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path
from typing import Iterable

from foliofarm.errors import UsageError
from foliofarm.guest import images
from foliofarm.guest.session import SELFTESTS_OUTPUT, check_fmt, command_line, setup_lines
from foliofarm.judge.checks import Check
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
    out = SELFTESTS_OUTPUT if chk.options.get("kind") == "selftests" else fmt["dump"]
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

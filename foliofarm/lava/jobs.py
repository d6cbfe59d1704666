"""A run's cells as LAVA job definitions: each deploys the very kernel,
initramfs and disks the farm booted the cell with (read from the run's
recorded QEMU command line), boots it and runs each of the cell's checks as
one step of an interactive test (boot/framed.py: the guest prints each program's
output and dump on the console), so that every check is a LAVA test case and
every dump is in the job's log for the farm to judge (log.py).

Two shapes: for LAVA's ``qemu`` device type (arm64, the farm's CPU model,
memory, vCPUs and NUMA nodes in the job's context, as the device-type template
renders them; a device dictionary for a local ``lava-run`` is written beside
it), and for a real board booted by U-Boot over TFTP with the same artifacts
(``board.yaml``: KVM and perf where the board has them)."""

from __future__ import annotations

import fnmatch
import json
import re
import shlex
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from foliofarm import matrix
from foliofarm.errors import UsageError
from foliofarm.boot import framed
from foliofarm.boot.banner import READY
from foliofarm.judge import catalogue
from foliofarm.judge.catalogue import Check
from foliofarm.results.read import read
from foliofarm.results.read import ResultsError
from foliofarm.results.schema import BootEntry, CellResult, Results

PROMPT = "FOLIOFARM-LAVA-PROMPT"
# printed by the guest after each step: built from two words, so the command
# that prints it never matches it itself
SAY_PROMPT = "printf '%s-%s\\n' FOLIOFARM LAVA-PROMPT"
SYSTEM_PYTHON = "/usr/bin/python3"     # Debian's lava-common lives in the system Python


@dataclass
class Drive:
    id: str
    file: str
    mode: str         # "readonly=on" or "snapshot=on"
    serial: str


@dataclass
class Booted:
    """A cell's boot as the run recorded it (its QEMU command line, parsed)."""
    kernel: str
    initrd: str
    append: str
    cpu: str
    memory: str
    smp: str
    numa: list[str] = field(default_factory=list)      # -object/-numa options, in order
    drives: list[Drive] = field(default_factory=list)


def parse_qemu(command: str) -> Booted:
    argv = shlex.split(command)
    opts: dict[str, str] = {}
    numa: list[str] = []
    drives: dict[str, dict[str, str]] = {}
    serials: dict[str, str] = {}
    i = 1
    while i < len(argv) - 1:
        key, val = argv[i], argv[i + 1]
        if key in ("-object", "-numa"):
            numa += [key, val]
        elif key == "-drive":
            kv = dict(p.split("=", 1) for p in val.split(",") if "=" in p)
            drives[kv["id"]] = kv
        elif key == "-device" and val.startswith("virtio-blk-pci,"):
            kv = dict(p.split("=", 1) for p in val.split(",") if "=" in p)
            serials[kv["drive"]] = kv["serial"]
        elif key.startswith("-"):
            opts[key] = val
        i += 2 if key.startswith("-") and not val.startswith("-") else 1
    if not {"-kernel", "-initrd", "-append"} <= set(opts):
        raise UsageError(f"not a farm's QEMU command line (no -kernel/-initrd/-append): {command[:200]}")
    out = Booted(kernel=opts["-kernel"], initrd=opts["-initrd"], append=opts["-append"],
                 cpu=opts.get("-cpu", "max"), memory=opts.get("-m", "2048"), smp=opts.get("-smp", "1"),
                 numa=numa)
    for ident, kv in drives.items():
        if ident == "ffout":      # the outbox: a LAVA guest prints its dumps instead
            continue
        mode = "snapshot=on" if kv.get("snapshot") == "on" else "readonly=on"
        out.drives.append(Drive(ident, kv["file"], mode, serials.get(ident, ident)))
    return out


def image_key(serial: str) -> str:
    """A deploy image's name (LAVA puts its path in the image_arg by name)."""
    return "disk_" + serial.replace("-", "_")


def job(cell_id: str, b: Booted, checks: list[Check], job_disk: Path, run_id: str,
        minutes: int, meta: dict[str, str] | None = None) -> dict[str, Any]:
    """The job definition for LAVA's qemu device type."""
    images: dict[str, Any] = {
        "kernel": {"image_arg": "-kernel {kernel}", "url": f"file://{b.kernel}"},
        "initrd": {"image_arg": "-initrd {initrd}", "url": f"file://{b.initrd}"}}
    for d in [*b.drives, Drive(framed.JOB_DISK, str(job_disk), "readonly=on", framed.JOB_DISK)]:
        key = image_key(d.serial)
        images[key] = {"image_arg": f"-drive if=none,id={d.id},file={{{key}}},format=raw,{d.mode} "
                                    f"-device virtio-blk-pci,drive={d.id},serial={d.serial}",
                       "url": f"file://{d.file}"}
    steps: list[dict[str, Any]] = [{"name": "job-disk", "command": framed.mount_command() + "; " + SAY_PROMPT,
                                    "successes": [{"message": "FOLIOFARM-JOB-DISK ok"}]}]
    for chk in checks:
        steps.append({"name": chk.name,
                      "command": f"/mnt/{framed.JOB_DISK}/lava-check {chk.name}; {SAY_PROMPT}",
                      "successes": [{"message": f"FOLIOFARM-RESULT {chk.name} pass"}],
                      "failures": [{"message": f"FOLIOFARM-RESULT {chk.name} fail",
                                    "exception": "TestError", "error": f"{chk.name} did not run"},
                                   {"message": "Kernel panic - not syncing",
                                    "exception": "TestError", "error": f"kernel panic in {chk.name}"}]})
    return {
        "device_type": "qemu",
        "job_name": f"foliofarm {cell_id} (run {run_id})",
        "timeouts": {"job": {"minutes": minutes + 20}, "action": {"minutes": minutes},
                     "connection": {"minutes": 2}},
        "priority": "medium",
        "visibility": "public",
        "context": {"arch": "arm64", "machine": "virt", "cpu": b.cpu, "memory": int(b.memory),
                    "extra_options": qemu_extra(b)},
        "metadata": {"foliofarm.cell": cell_id, "foliofarm.run": run_id,
                     "foliofarm.checks": ",".join(c.name for c in checks), **(meta or {})},
        "actions": [
            {"deploy": {"to": "tmpfs", "timeout": {"minutes": 15}, "images": images}},
            {"boot": {"method": "qemu", "media": "tmpfs", "timeout": {"minutes": 10},
                      "prompts": [READY]}},
            {"test": {"timeout": {"minutes": minutes},
                      "interactive": [{"name": "foliofarm", "prompts": [PROMPT], "script": steps}]}},
        ],
    }


def qemu_extra(b: Booted) -> list[str]:
    """What the job adds to the device type's QEMU command: vCPUs, NUMA nodes,
    the farm's kernel command line, no network, no reboot. Not the farm's
    ``thread=single``: a job runs all of a cell's checks in one boot, the
    selftests' race tests among them, which need their vCPUs at once (a
    thread each: QEMU's default, as in the farm's race-part boots)."""
    extra = [f"-smp {b.smp}", "-no-reboot", "-nic none"]
    extra += [f"{b.numa[i]} {b.numa[i + 1]}" for i in range(0, len(b.numa), 2)]
    extra.append(f"-append {shlex.quote(b.append)}")
    return extra


def device_dict(b: Booted) -> dict[str, Any]:
    """A rendered device dictionary of LAVA's qemu device type for ``lava-run``
    on this machine (what the qemu.jinja2 template makes of the job's context:
    the command, -cpu, -machine, -m and the context's extra options)."""
    return {
        "device_type": "qemu",
        "available_architectures": ["arm64", "aarch64"],
        "constants": {"shutdown-message": "The system is going down for reboot NOW",
                      "kernel-start-message": "Linux version [0-9]",
                      "default-shell-prompt": "lava-test: # ",
                      "spawn_maxread": "4092", "failure_retry": 1, "boot_retry": None,
                      "posix": {"lava_test_sh_cmd": "/bin/sh", "lava_test_results_dir": "/lava-%s",
                                "lava_test_shell_file": "~/.bashrc"}},
        "actions": {
            "deploy": {"connections": {"serial": None}, "methods": {"tmpfs": None, "image": None}},
            "boot": {"connections": {"serial": None},
                     "methods": {"qemu": {"parameters": {
                         "command": "qemu-system-aarch64",
                         "options": [f"-cpu {b.cpu}", "-machine virt", f"-m {b.memory}",
                                     "-nographic", *qemu_extra(b)],
                     }}}},
        },
        "timeouts": {"actions": {"apply-overlay-image": {"minutes": 2}},
                     "connections": {"lava-test-shell": {"minutes": 3}}},
    }


def board_job(cell_id: str, b: Booted, checks: list[Check], job_disk: Path, run_id: str,
              minutes: int, device_type: str, meta: dict[str, str] | None = None) -> dict[str, Any]:
    """The same artifacts for a real arm64 board booted by U-Boot: the kernel
    and initramfs over TFTP and the same test; the cell's disk images (named in
    the job's metadata) are the lab's to put on the board's storage."""
    qemu = job(cell_id, b, checks, job_disk, run_id, minutes, meta)
    disks = {k: v["url"] for k, v in qemu["actions"][0]["deploy"]["images"].items()
             if k.startswith("disk_")}
    return {
        **{k: v for k, v in qemu.items() if k not in ("actions", "context", "device_type")},
        "device_type": device_type,
        "context": {"extra_kernel_args": b.append},
        "metadata": {**qemu["metadata"], "foliofarm.disks": json.dumps(disks)},
        "actions": [
            {"deploy": {"to": "tftp", "timeout": {"minutes": 15},
                        "kernel": {"url": f"file://{b.kernel}", "type": "image"},
                        "ramdisk": {"url": f"file://{b.initrd}", "compression": None}}},
            {"boot": {"method": "u-boot", "commands": "ramdisk", "timeout": {"minutes": 10},
                      "prompts": [READY]}},
            qemu["actions"][2],
        ],
    }


def select(doc: Results, patterns: list[str] | None) -> list[tuple[CellResult, BootEntry]]:
    """(cell, its own checks' first boot) for the cells of ``doc`` matching
    ``patterns`` (page-fs globs); a cell whose measurements were reused has no
    boot of its own in the run and is named in the error."""
    out, missing = [], []
    for cell in doc.cells:
        name = f"{cell.page_size}-{cell.fs}"
        if patterns and not any(fnmatch.fnmatch(name, p) or fnmatch.fnmatch(cell.id, p) for p in patterns):
            continue
        boot = own_boot(doc, cell) or earlier_boot(doc, cell)
        if boot is None:
            missing.append(cell.id)
        else:
            out.append((cell, boot))
    if missing:
        raise UsageError(f"no boot recorded for {', '.join(missing)}, in the run or in the run whose "
                         "measurements it reused: make the jobs from a run that booted them "
                         "(foliofarm run --fresh)")
    if not out:
        raise UsageError(f"no cell of the run matches {', '.join(patterns or [])}")
    return out


def own_boot(doc: Results, cell: CellResult) -> BootEntry | None:
    """The first boot that ran the cell's farm checks in the run of ``doc``."""
    return next((b for b in doc.boots if b.kernel == cell.kernel
                 and b.page_size == cell.page_size and b.fs == cell.fs
                 and (b.attempt or 1) == 1 and b.qemu
                 and not (b.console_log or "").endswith("-tree.console.log")), None)


def earlier_boot(doc: Results, cell: CellResult) -> BootEntry | None:
    """Where the run reused saved measurements (a series run's base), the boot
    of the run that made them, from that run's results.json beside its boots."""
    for b in doc.boots:
        if b.reused and b.kernel == cell.kernel and b.page_size == cell.page_size and b.console_log:
            try:
                earlier = read(Path(b.console_log).parent)
            except ResultsError:
                continue
            found = own_boot(earlier, cell)
            if found is not None:
                return found
    return None


def cell_checks(cell: CellResult) -> list[Check]:
    """The catalogue's checks the cell ran (the console check is the log's)."""
    known = catalogue.by_name()
    return [known[c.name] for c in cell.checks if c.name in known]


def cell_meta(doc: Results, cell: CellResult) -> dict[str, str]:
    """What reading the job's log back needs: the cell, its kernel (and its
    version, for the expectations) and its side of a base/series run."""
    m = re.match(r"\d+\.\d+", cell.kernel)
    meta = {"foliofarm.page_size": cell.page_size, "foliofarm.fs": cell.fs,
            "foliofarm.kernel": cell.kernel, "foliofarm.kernel_xy": m.group(0) if m else cell.kernel}
    if doc.sides is not None:
        for role, side in (("base", doc.sides.base), ("series", doc.sides.series)):
            if side.kernel == cell.kernel:
                meta.update({"foliofarm.side": role, "foliofarm.origin": side.origin})
    return meta


def validate(job_def: dict[str, Any]) -> None:
    """LAVA's own job schema (Debian's lava-common, in the system Python)."""
    code = ("import sys, yaml; from lava_common.schemas import validate; "
            "validate(yaml.safe_load(sys.stdin.read()), strict=True)")
    p = subprocess.run([SYSTEM_PYTHON, "-c", code], input=yaml.safe_dump(job_def), text=True,
                       capture_output=True, check=False)
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise UsageError(f"LAVA's schema refuses the job {job_def.get('job_name')}: {last}")


def write_jobs(run_dir: Path, out: Path, patterns: list[str] | None, board: str | None = None
               ) -> list[Path]:
    """One folder per cell under ``out``: job.yaml (qemu device type), its job
    disk, board.yaml with ``board`` (a U-Boot device type) and device.yaml (a
    device dictionary for lava-run here). Every job is validated first."""
    doc = read(run_dir)
    written = []
    for cell, boot in select(doc, patterns):
        b = parse_qemu(boot.qemu or "")
        chosen = cell_checks(cell)
        c = matrix.cell_of(cell.page_size, cell.fs, cell.kernel)
        where = out / cell.id
        disk = framed.job_disk(where / "job-disk.erofs", c, chosen, [d.serial for d in b.drives])
        minutes = max(10, int(sum(ch.timeout for ch in chosen) // 60) + 5)
        meta = cell_meta(doc, cell)
        jd = job(cell.id, b, chosen, disk, doc.run_id, minutes, meta)
        validate(jd)
        (where / "job.yaml").write_text(yaml.safe_dump(jd, sort_keys=False, width=1000))
        if board:
            bd = board_job(cell.id, b, chosen, disk, doc.run_id, minutes, board, meta)
            validate(bd)
            (where / "board.yaml").write_text(yaml.safe_dump(bd, sort_keys=False, width=1000))
        (where / "device.yaml").write_text(yaml.safe_dump(device_dict(b), sort_keys=False, width=1000))
        written.append(where)
    return written


def run_local(where: Path) -> tuple[float, bool]:
    """Run the job in ``where`` with lava-run and its device dictionary (no
    LAVA server: the dispatcher alone), its log kept as lava.log."""
    import os
    import time
    from foliofarm import hosttools
    hosttools.require("lava-run")
    if os.geteuid() != 0:
        raise UsageError("lava-run runs as root: run foliofarm lava --run as root, or run the "
                         "printed lava-run command yourself and save its standard error as lava.log")
    t0 = time.monotonic()
    with open(where / "lava.log", "w") as log:
        p = subprocess.run(["lava-run", "--job-id", where.name, "--output-dir", str(where / "lava-out"),
                            "--device", str(where / "device.yaml"), str(where / "job.yaml")],
                           stdout=log, stderr=subprocess.STDOUT, check=False)
    return time.monotonic() - t0, p.returncode == 0

"""A cell's guest under virtme-ng (`vng`), the loop kernel developers use to
boot a tree they have just built: `foliofarm shell CELL --vng [-e CMD]`.

vng boots the cell's kernel with a guest root shared from the host over 9p
(an arm64 root of Debian's packages: bash, udev, kmod, libc-bin and
busybox-static, plus the farm's guest programs in /ff), and brings its own
conveniences: a host directory shared read-write (--rwdir), one command with
its exit status (-e), writable tmpfs overlays on /etc, /tmp, /usr... The farm
adds the cell's disks (attached as its own boots attach them, by serial), its
CPU model, memory and NUMA layout, its kernel command line, and its guest
set-up (rootfs/ffsetup: the probe module, each disk mounted at /mnt/<serial>,
no address-space randomisation), run by the shell's rc file or before the
command.

`foliofarm run --boot-with vng` boots the farm's own checks of each cell
under vng (VngBoots, one implementation of boot/protocol.py), run framed on
vng's command channel as a LAVA job's guest runs them (framed.py) and judged
as the farm's own boots are. What vng does not give a judged run, and what the
farm does instead: the kernel's console comes only when the guest has ended
(its reports fail the cell's console result, not a check), one deadline covers
the boot (the checks' timeouts and the boot timeout), dumps come home base64
on the command channel, not on the outbox disk. The tree's checks, which need
the outbox and a deadline per test, boot on the farm's own QEMU (protocol.py's
tree_checks)."""

from __future__ import annotations

import gzip
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path
from typing import IO, Iterator

from foliofarm.results.schema import BootEntry
from foliofarm.errors import InfraError, UsageError
from foliofarm.boot import banner, splat
from foliofarm.disks import debroot, rootfs
from foliofarm.boot import framed
from foliofarm.boot.protocol import Booted, Reports, Say, Status, not_booted
from foliofarm import sandbox
from foliofarm.boot.qemu import SECCOMP, Machine
from foliofarm.boot.session import BootPlan, Measured
from foliofarm.judge.catalogue import Check
from foliofarm.judge.measurement import Measurement, error
from foliofarm.matrix import Cell
from foliofarm.paths import ROOTFS
from foliofarm.util import tmp_dir

# What the guest root is made of: bash (vng's init, virtme-init, is a bash
# script), udev (it names vng's command channel, /dev/virtio-ports/virtme.*),
# kmod (modprobe, insmod), libc-bin (getconf, ldd) and busybox for the rest.
PACKAGES = ["bash", "libc-bin", "udev", "kmod", "busybox-static"]
BUSYBOX_MAN = "usr/share/man/man1/busybox.1.gz"
GROUPS = (("root", 0), ("daemon", 1), ("bin", 2), ("sys", 3), ("adm", 4), ("tty", 5), ("disk", 6),
          ("lp", 7), ("mail", 8), ("kmem", 15), ("dialout", 20), ("cdrom", 24), ("audio", 29),
          ("utmp", 43), ("video", 44), ("input", 101), ("kvm", 102), ("render", 103),
          ("sgx", 104), ("nogroup", 65534))
# What the vng route needs of the kernel (configs/kernels/base.config has each,
# and every build verifies it): the root over 9p, vng's command channel on
# virtio consoles, its overlays (with their xattrs on tmpfs), udev's inotify.
KERNEL_NEEDS = ("CONFIG_NETWORK_FILESYSTEMS", "CONFIG_NET_9P", "CONFIG_NET_9P_VIRTIO", "CONFIG_9P_FS",
                "CONFIG_VIRTIO_CONSOLE", "CONFIG_OVERLAY_FS", "CONFIG_TMPFS_XATTR", "CONFIG_INOTIFY_USER")
# where the guest finds its kernel's artifacts (the probe module), shared read-only
KERNEL_DIR = "/opt/foliofarm/kernel"
# sourced by the interactive shell's rc file and before a command of -e
PROFILE = "etc/foliofarm-vng.sh"
SETUP = ROOTFS / "ffsetup"
BANNER = ROOTFS / "banner"
# The command line's parts that are the farm's boots' own, not vng's: vng
# picks the console and init, and turns panics into an exit itself.
NOT_FOR_VNG = ("earlycon", "console=", "rdinit=", "panic=")
# where vng lays a tmpfs overlay over the read-only root (its default --overlay-rwdir)
OVERLAID = ("tmp", "home", "srv", "opt", "var", "usr", "etc")
# between the kernel's console and the guest's output in a vng boot's console log
OUTPUT_MARK = "\n--- foliofarm: what the guest printed (vng's command channel) ---\n"


def applets(manpage: str) -> list[str]:
    """The applets of a busybox build, from its manual page's COMMANDS
    section ("Currently available applets include: ..."), as Debian ships
    it with the binary."""
    m = re.search(r"Currently available applets include:\s*\n\.PP\s*\n\.Vb \d+\n(.*?)\n\.Ve", manpage, re.S)
    if m is None:
        raise InfraError("busybox's manual page lists no applets (no 'Currently available applets "
                         "include:' block): its format changed; foliofarm/boot/vng.py reads it")
    names = [n.strip() for ln in m.group(1).splitlines()
             for n in ln.replace("\\&", "").replace("\\-", "-").split(",")]
    names = [n for n in names if n]
    bad = [n for n in names if not re.fullmatch(r"[\w.\[\]-]+", n)]
    if bad or len(names) < 50:
        raise InfraError(f"busybox's manual page's applet list does not read as one: {bad[:5] or names}")
    return names


def _finish(root: Path) -> None:
    """Complete the unpacked root: busybox's applets where Debian's packages
    have no program of that name, the files virtme-init expects in /etc, the
    farm's guest programs and set-up."""
    if not (root / "usr/bin/busybox").is_file():
        raise InfraError("Debian's busybox-static left no usr/bin/busybox")
    for name in applets(gzip.decompress((root / BUSYBOX_MAN).read_bytes()).decode()):
        if name == "busybox" or any((root / d / name).exists() or (root / d / name).is_symlink()
                                    for d in ("usr/bin", "usr/sbin")):
            continue
        (root / "usr/bin" / name).symlink_to("busybox")
    etc = root / "etc"
    (etc / "passwd").write_text("root:x:0:0:root:/root:/bin/bash\n")
    # what base-passwd's postinst would have written (group.master): udev's
    # rules and virtme-init's devpts mount (gid=tty) name these groups
    (etc / "group").write_text("".join(f"{n}:x:{g}:\n" for n, g in GROUPS))
    # systemd-tmpfiles, which virtme-init runs where it finds it, sets up a
    # systemd system; this guest runs no systemd but udev
    (root / "usr/bin/systemd-tmpfiles").unlink(missing_ok=True)
    for name in ("shadow", "fstab", "hosts", "sudoers"):
        (etc / name).touch()
    (etc / "hostname").write_text("foliofarm\n")
    # and the directories virtme-init mounts on or lays vng's overlays over
    for d in ("etc/lvm", "root", "run", "mnt", "home", "srv", "opt", "var/tmp", "var/log",
              "lib/modules", KERNEL_DIR[1:]):
        (root / d).mkdir(parents=True, exist_ok=True)
    # mount points: / is read-only to the guest (vng overlays /etc, /usr...,
    # not /mnt)
    mounts = rootfs.mounts_table()
    (etc / "foliofarm-mounts").write_text(mounts)
    for serial in [line.split()[0] for line in mounts.splitlines()] + [framed.JOB_DISK]:
        (root / "mnt" / serial).mkdir()
    for src, dest in ((SETUP, "usr/sbin/ffsetup"), (BANNER, "usr/bin/ffbanner")):
        shutil.copy2(src, root / dest)
        (root / dest).chmod(0o755)
    (root / PROFILE).write_text(
        "# foliofarm under virtme-ng: the farm's guest set-up once per boot\n"
        "# (rootfs/ffsetup), then the guest programs on the PATH\n"
        "if [ ! -e /run/foliofarm-ready ]; then\n"
        f"\tffsetup {KERNEL_DIR}/ffprobe.ko\n"
        "\tffbanner | grep FAILED >&2\n"
        "\t: > /run/foliofarm-ready\n"
        "fi\n"
        "case \":$PATH:\" in *:/ff:*) ;; *) PATH=$PATH:/ff ;; esac\n"
        "export PATH\n")
    # the interactive shell (virtme-init's `su`: bash, not a login shell)
    with open(etc / "bash.bashrc", "a") as f:
        f.write(f"\n# foliofarm\n. /{PROFILE}\n"
                "[ -n \"$PS1\" ] && echo \"foliofarm: guest programs in /ff, the cell's filesystems "
                "under /mnt\"\n")


def guest_root(cache: Path) -> Path:
    """The guest root vng shares with the guest: Debian's arm64 packages, the
    farm's guest programs (built once per their sources) in /ff."""
    progs = rootfs.build_guest_programs(cache)

    def finish(root: Path) -> None:
        _finish(root)
        shutil.copytree(progs, root / "ff")

    return debroot.unpacked(cache, PACKAGES, "vngroot", "virtme-ng's guest root", finish,
                            [Path(__file__), SETUP, BANNER], "usr/bin/bash",
                            extra_key=progs.name + rootfs.mounts_table())


def vng_command() -> str:
    """The vng of the farm's environment (requirements.txt pins virtme-ng),
    else one on the PATH."""
    beside = Path(sys.executable).parent / "vng"
    if beside.is_file():
        return str(beside)
    found = shutil.which("vng")
    if found is None:
        raise UsageError("virtme-ng is not installed: `make venv` installs the version "
                         "requirements.txt pins (or: pip install virtme-ng)")
    return found


def rwdir(arg: str) -> str:
    """vng's --rwdir GUEST=HOST for ``arg`` ([GUEST=]HOST; a bare HOST at the
    same path in the guest, as vng shares it from a host root). The guest's
    root is read-only but where vng lays its overlays: the mount point must be
    under one of them, for virtme-init to make it."""
    guest, _, host = arg.rpartition("=")
    guest = guest or host
    if not Path(host).is_dir():
        raise UsageError(f"--rwdir {arg}: no directory {host} on the host")
    if not guest.startswith("/") or Path(guest).parts[1:2] not in [(d,) for d in OVERLAID]:
        raise UsageError(f"--rwdir {arg}: the guest's root is read-only outside /{', /'.join(OVERLAID)} "
                         f"(vng's overlays): give GUEST=HOST with GUEST under one of them, such as "
                         f"/srv/{Path(host).name}={host}")
    return f"{guest}={host}"


def environment() -> dict[str, str]:
    """vng's environment: its own programs (virtme-run, which it runs by
    name) first on the PATH, as in an activated environment."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(vng_command()).parent), env.get("PATH", "")])
    return env


def run_command(cmd: list[str]) -> int:
    """Run vng with a command (-e), its output relayed to ours through pipes:
    vng has QEMU open /proc/self/fd/1 and /proc/self/fd/2 once per output
    channel, and on a regular file (output redirected to one) each open writes
    from its own offset over the others'."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment())
    assert proc.stdout is not None and proc.stderr is not None
    err = threading.Thread(target=_relay, args=(proc.stderr, sys.stderr.buffer), daemon=True)
    err.start()
    _relay(proc.stdout, sys.stdout.buffer)
    err.join()
    return proc.wait()


def _relay(src: IO[bytes], dest: IO[bytes]) -> None:
    while chunk := src.read1(65536):
        dest.write(chunk)
        dest.flush()


def kernel_args(mach: Machine) -> list[str]:
    """The farm's kernel command line for ``mach`` less what vng sets itself."""
    return [a for a in mach.append().split() if not a.startswith(NOT_FOR_VNG)]


def argv(mach: Machine, root: Path, kernel_dir: Path, command: str | None = None,
         rwdirs: list[str] | None = None, verbose: bool = False) -> list[str]:
    """vng's command line for the farm's guest ``mach``: its kernel, CPU
    model, memory, NUMA nodes, disks and kernel command line, the guest root
    ``root``, the kernel's artifacts (``kernel_dir``, the probe module) at
    KERNEL_DIR; ``command`` run with its exit status (-e), else a shell."""
    # with KVM (an arm64 host), vng itself asks for it and for -cpu host
    # QEMU's seccomp filter as in the farm's own boots (qemu.SECCOMP); not its
    # uid drop and chroot: vng's QEMU serves the guest root and --rodir over 9p
    qemu = [*([] if mach.use_kvm() else mach.accel_argv()), *mach.numa_argv(), *mach.drives_argv(),
            *(["-sandbox", SECCOMP] if sandbox.enabled() else [])]
    # --no-virtme-ng-init: vng's faster init is a host binary (x86-64 in the
    # wheel); the guest root is made for its bash init, virtme-init
    out = [vng_command(), "--run", str(mach.kernel), "--arch", "arm64", "--root", str(root),
           "--force-9p", "--no-virtme-ng-init", "--user", "root", "--name", "foliofarm",
           "--memory", f"{mach.memory_mb}M", "--cpus", str(mach.cpus),
           "--rodir", f"{KERNEL_DIR}={kernel_dir}",
           "--append", " ".join(kernel_args(mach)),
           f"--qemu-opts={shlex.join(qemu)}"]
    for d in rwdirs or []:
        out += ["--rwdir", rwdir(d)]
    if verbose:
        out.append("--verbose")
    if command is not None:
        # non-interactive bash reads no rc file: the set-up comes first
        out += ["--exec", f". /{PROFILE}\n{command}"]
    return out


def run_checks(mach: Machine, root: Path, kernel_dir: Path, cell: Cell, checks: list[Check],
               work: Path, timeout: float, live: set[subprocess.Popen] | None = None
               ) -> tuple[list[str], str, int, list[str]]:
    """Boot ``mach`` under vng and run ``checks`` of ``cell`` in it as a LAVA
    job's guest runs them (framed.py: each check's command as the farm's own
    boots send it, on a small disk, printed framed by
    tests/vmtests/lava-check.sh), after the guest's banner (rootfs/banner):
    the lines the guest printed, the kernel's console (vng --verbose), vng's
    exit status and command line. While it runs, vng is in ``live``."""
    disk = framed.job_disk(work / "ffjob.erofs", cell, checks, [*mach.disks, *mach.scratch])
    mach = replace(mach, disks={**mach.disks, framed.JOB_DISK: disk})
    command = "\n".join(["ffbanner", framed.mount_command(),
                         *(f"sh /mnt/{framed.JOB_DISK}/lava-check {c.name}" for c in checks)])
    cmd = argv(mach, root, kernel_dir, command, verbose=True)
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, errors="replace", start_new_session=True, env=environment())
    live = live if live is not None else set()
    live.add(proc)
    try:
        out, console = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, console = proc.communicate()
        console += f"\nfoliofarm: vng killed after {timeout:.0f} s\n"
    finally:
        live.discard(proc)
    return out.splitlines(), console, proc.returncode, cmd


class VngBoots:
    """`foliofarm run --boot-with vng`: the farm's own checks of each cell in
    one boot under vng (boot/protocol.py), measured as the farm's own boots
    measure them (read_boot), its console log kept at STEM.console.log."""
    name = "vng"
    tree_checks = False             # they need the outbox disk and a deadline per test

    def __init__(self, cache: Path) -> None:
        self.cache = cache
        self.root: Path | None = None
        self.stopped: str | None = None
        self.live: set[subprocess.Popen] = set()

    def open(self, say: Say, run_id: str) -> None:
        vng_command()               # installed, or say how
        self.root = guest_root(self.cache)      # made once, before the boots share it
        self.stopped = None

    def describe(self) -> str:
        return "virtme-ng"

    def boot(self, plan: BootPlan, status: Status | None = None) -> Iterator[Booted]:
        if self.stopped is not None or plan.machine is None:
            yield from not_booted(plan, self.stopped or "vng boots the farm's guest, and was given none")
            return
        if self.root is None:
            raise InfraError("vng's guest root is not made: open() the booter first")
        cell, checks = plan.pairs[0][0], [chk for _, chk in plan.pairs]
        with tmp_dir("vng") as tmp:
            lines, console, rc, cmd = run_checks(plan.machine, self.root, plan.machine.kernel.parent, cell,
                                                 checks, Path(tmp), plan.boot_timeout + sum(c.timeout for c in checks),
                                                 self.live)
        log = Path(f"{plan.log_stem}.console.log")
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(console + OUTPUT_MARK + "\n".join(lines) + "\n")
        measured, boot, reports = read_boot(lines, console, rc, shlex.join(cmd), plan.pairs, str(log))
        yield Reports(cell, reports, "under vng: when in the boot is not known")
        yield boot
        yield from measured

    def cancel(self, why: str) -> None:
        self.stopped = why
        for proc in list(self.live):    # its checks come home cut short: errors, each saying so
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def close(self) -> None:
        if self.live:
            self.cancel("the run ended")


def read_boot(lines: list[str], console: str, rc: int, command: str, pairs: list[tuple[Cell, Check]],
              console_log: str) -> tuple[list[Measured], BootEntry, list[str]]:
    """One vng boot read back: each (cell, check, measurement) from what the
    guest printed, the boot's record (its banner; an error where the guest is
    not of the cell's page size or vng returned no status), and the reports
    the kernel printed on its console (read when vng has ended: when in the
    boot is not known)."""
    cell = pairs[0][0]
    page = cell.page
    first = next((i for i, ln in enumerate(lines) if ln.startswith("FOLIOFARM-")), len(lines))
    seen, _ = banner.parse("\n".join(lines[:first]))
    right = seen.get("page_size") == str(page.bytes)
    errors = [] if right else [f"guest reports page size {seen.get('page_size')}, expected {page.bytes}"]
    if rc != 0:
        errors.append(f"vng exited {rc}" + (" (the guest ended without returning a status)" if rc == 255 else ""))
    boot = BootEntry(page_size=page.name, kernel=cell.kernel, console_log=console_log, qemu=command,
                     fs=cell.fs.name, attempt=1, taint=0, banner=seen, error="; ".join(errors) or None)
    measured = [(c, chk, measured_under_vng(lines, chk) if right else error(boot.error or ""))
                for c, chk in pairs]
    reports = list(dict.fromkeys(f"{r.kind}: {r.line}" for r in splat.scan(console)))
    return measured, boot, reports


def measured_under_vng(lines: list[str], chk: Check) -> Measurement:
    """``chk``'s measurement from what the guest printed; a file that came
    home damaged (cut off when vng was killed at its deadline) is the check's
    error, not the run's."""
    try:
        return framed.measurement(lines, chk, None, "vng's output")
    except UsageError as exc:
        return error(str(exc))

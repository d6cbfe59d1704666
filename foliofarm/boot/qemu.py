"""QEMU command lines for the arm64 virt machine.

QEMU runs a series' kernel: it is confined as the code it runs is untrusted
(confinement_argv). Its seccomp sandbox (`-sandbox on`) refuses obsolete system
calls, spawning processes and changing its own scheduling; run by root, it
then drops to a uid of its own that owns nothing on the host (one per guest:
two guests' QEMUs are not the same user to each other) and chroots into an
empty directory, once it has opened its images: a QEMU taken over by its guest
sees no host file but the ones it was given. The farm's user keeps its files
readable to it only by the descriptors QEMU opened. Without root it runs as
the farm's user with set*id refused too (`elevateprivileges=deny`, which a
drop of uid needs, so root's QEMU relies on the drop: a process of no
capability and NoNewPrivs cannot gain root back)."""

from __future__ import annotations

import os
import platform
import secrets
import subprocess
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from foliofarm import cgroups, sandbox
from foliofarm.errors import UsageError
from foliofarm.paths import cache_dir

QEMU = "qemu-system-aarch64"
# The serial of the disk that carries dumps home (rootfs/init names its device).
OUTBOX = "ffout"
OUTBOX_BYTES = 256 << 20
# The serial of the mm selftests disk (an erofs image the guest mounts at /mnt/ffmm).
SELFTESTS = "ffmm"
# The serial of the thpmaps disk (Debian's Python and the tree's tools/mm/thpmaps,
# an erofs image the guest mounts at /mnt/ffpy).
THPMAPS = "ffpy"
# The serial of a reproducer's disk (--repro: disks/reproducer.py, mounted at /mnt/ffrepro).
REPRO = "ffrepro"
# The serial of the swap disk: an empty image attached with snapshot=on, made a
# swap device by init (mkswap, swapon) in every guest.
SWAP = "ffswap"
SWAP_BYTES = 1 << 30
# QEMU's seccomp filter: what it may not do once the guest runs.
SECCOMP = "on,obsolete=deny,spawn=deny,resourcecontrol=deny"
# A guest's own uid (and gid) when the farm is root: from a range no account uses.
GUEST_IDS = (1_610_612_736, 1 << 28)


@cache
def _run_with() -> bool:
    """QEMU takes -run-with user=,chroot= (9.1 and later; -runas and -chroot go)."""
    try:
        out = subprocess.run([QEMU, "-help"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "-run-with" in out and "user=" in out


def empty_root() -> Path:
    """An empty directory, root's and read-only, that QEMU chroots into."""
    d = cache_dir() / "qemu-root"
    if not d.is_dir():
        d.mkdir(parents=True, exist_ok=True)
        d.chmod(0o555)
    if d.stat().st_mode & 0o777 != 0o555 or any(d.iterdir()):
        raise UsageError(f"{d}: QEMU's empty root must be an empty directory of mode 0555: "
                         "remove it and run again")
    return d


# What a guest's QEMU may hold above the guest's own memory (TCG's translation
# cache, its threads), and how many tasks: a total for its cgroup.
QEMU_OVERHEAD_MB = 1536
QEMU_TASKS = 256


def guest_totals(argv: list[str]) -> cgroups.Totals:
    """The cgroup totals of the QEMU that ``argv`` starts (its -m plus the overhead)."""
    memory = int(argv[argv.index("-m") + 1]) if "-m" in argv[:-1] else 2048
    return cgroups.Totals(memory + QEMU_OVERHEAD_MB, QEMU_TASKS)


def confinement_argv() -> list[str]:
    """QEMU's own confinement (the module's docstring); none with FOLIOFARM_SANDBOX=off."""
    if not sandbox.enabled():
        return []
    if os.geteuid() != 0:
        return ["-sandbox", SECCOMP + ",elevateprivileges=deny"]
    uid = GUEST_IDS[0] + secrets.randbelow(GUEST_IDS[1])
    root = empty_root()
    if _run_with():
        return ["-sandbox", SECCOMP, "-run-with", f"chroot={root},user={uid}:{uid}"]
    return ["-sandbox", SECCOMP, "-runas", f"{uid}:{uid}", "-chroot", str(root)]


# NUMA nodes' memory comes in multiples of this: a sparsemem section of the
# 64K-page kernel (SECTION_SIZE_BITS 29), so no section straddles two nodes.
NODE_ALIGN_MB = 512


def cpu_model(spec: str) -> str:
    """``spec`` as -cpu takes it (MODEL[,PROP=VALUE...]), its model one this
    QEMU emulates; else a UsageError that names them."""
    model, *props = spec.split(",")
    if not model or not all(c.isalnum() or c in "-_.=," for c in spec) or \
            any(p.count("=") != 1 or p.startswith("=") for p in props):
        raise UsageError(f"--tcg-cpu {spec!r}: give MODEL[,PROP=VALUE...], as QEMU's -cpu "
                         f"takes it (e.g. {TCG_CPU})")
    if spec != TCG_CPU and (known := cpu_models()) and model not in known:    # none: no QEMU here,
        # which the run says as it starts
        raise UsageError(f"--tcg-cpu {spec!r}: {QEMU} emulates no CPU {model!r}; it has "
                         f"{', '.join(known)}")
    return spec


@cache
def cpu_models() -> list[str]:
    """The CPU models `qemu-system-aarch64 -cpu help` lists."""
    try:
        out = subprocess.run([QEMU, "-cpu", "help"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [w.split()[0] for w in out.splitlines()[1:] if w.strip()]


def numa_layout(memory_mb: int, cpus: int, nodes: int) -> list[tuple[int, list[int]]]:
    """Each NUMA node's memory in MB and its CPUs: memory split evenly in
    NODE_ALIGN_MB steps (the last node takes what is left), CPUs dealt round
    the nodes (node i gets CPUs i, i+nodes, ...; a node may have none)."""
    if nodes < 1:
        raise UsageError("a guest has at least one NUMA node")
    if memory_mb < NODE_ALIGN_MB * nodes and nodes > 1:
        raise UsageError(f"{nodes} NUMA nodes need at least {NODE_ALIGN_MB * nodes} MB of guest "
                         f"memory ({NODE_ALIGN_MB} MB each), not {memory_mb}: raise --memory or "
                         f"lower --numa-nodes")
    each = memory_mb // nodes // NODE_ALIGN_MB * NODE_ALIGN_MB if nodes > 1 else memory_mb
    sizes = [each] * (nodes - 1) + [memory_mb - each * (nodes - 1)]
    return [(mb, list(range(i, cpus, nodes))) for i, mb in enumerate(sizes)]


def numa_argv(memory_mb: int, cpus: int, nodes: int) -> list[str]:
    """QEMU options for ``nodes`` NUMA nodes (none for one): a RAM backend per
    node; the virt machine describes them to the kernel in its device tree."""
    if nodes == 1:
        return []
    argv: list[str] = []
    for i, (mb, node_cpus) in enumerate(numa_layout(memory_mb, cpus, nodes)):
        argv += ["-object", f"memory-backend-ram,id=ffnode{i},size={mb}M",
                 "-numa", ",".join([f"node,nodeid={i},memdev=ffnode{i}",
                                    *(f"cpus={c}" for c in node_cpus)])]
    return argv


# How TCG runs a guest's vCPUs. "single": in turns on one host thread, not
# each on its own (MTTCG, "multi"). Measured on two cores with two guests at
# once (the 64K cells' mm selftests, QEMU 7.2): 188 s against 245 s, and
# khugepaged all:file 129 s against 228 s: each TLB invalidation broadcast
# must stop every vCPU thread of the guest, and on a host whose cores are all
# busy the others are often not running. The price: the vCPUs interleave at
# TCG's turns (a vCPU's turn ends when it idles, waits for an event, or after
# at most 100 ms), not instruction by instruction at once, so a race that
# needs two CPUs inside one narrow window is less likely to be hit; hunt races
# with --tcg-threads multi (or KVM on an arm64 host). The selftests' page
# parts' tests that need their threads at once take a thread per vCPU (cells.boot_threads).
TCG_THREADS = ("single", "multi")
# TCG's CPU model: 'max' has every granule (4K/16K/64K); QEMU's default pauth
# algorithm (QARMA5) is slow to emulate, the implementation-defined one is cheap.
# `foliofarm run --tcg-cpu` takes another (the A/B of docs/performance.md).
TCG_CPU = "max,pauth-impdef=on"


@dataclass
class Machine:
    kernel: Path
    initrd: Path
    disks: dict[str, Path] = field(default_factory=dict)   # serial -> image, read-only
    scratch: dict[str, Path] = field(default_factory=dict)  # serial -> image, writes discarded
    outbox: Path | None = None    # a raw file the guest writes dumps to for the host to read
    memory_mb: int = 2048
    cpus: int = 1
    numa_nodes: int = 1
    accel: str = "auto"
    tcg_threads: str = "single"   # TCG: both vCPUs on one host thread, or one each ("multi")
    tcg_cpu: str = TCG_CPU        # TCG: -cpu
    extra_append: str = ""
    interactive: bool = False     # a person at the console: QEMU's monitor on Ctrl-A

    def use_kvm(self) -> bool:
        if self.accel == "tcg":
            return False
        kvm = platform.machine() in ("aarch64", "arm64") and os.access("/dev/kvm", os.R_OK | os.W_OK)
        return kvm or self.accel == "kvm"

    def append(self) -> str:
        # loglevel=5 keeps WARNING splats (KERN_WARNING) on the console, where we scan them.
        # panic=-1 with -no-reboot turns a panic into QEMU exiting instead of a hang.
        # Short lockup and hung-task thresholds: a kernel stuck by a check is
        # reported on the console within a minute or two, inside a long
        # check's deadline (soft lockup after 2 * watchdog_thresh; a task seen
        # in D state on two scans hung_task_timeout_secs apart). Not shorter:
        # under TCG, with a kernel build and another guest on the same two
        # cores, khugepaged waited over 10 s during the mm selftests'
        # transhuge-stress on 4K in a run whose series changed nothing, and a
        # 10 s threshold reported it as a hung task. A short check's deadline
        # (the base's time plus 30-55 s) catches a hang first anyway.
        # earlycon: the UART named by the device tree's stdout-path prints from
        # the first printk, as distributions' debug boots do. Without it, a
        # kernel that dies before the PL011 driver registers its console (a
        # BUG in pagecache_init(), say) leaves an empty console log.
        args = ["earlycon", "console=ttyAMA0", "rdinit=/init", "loglevel=5", "panic=-1",
                "hung_task_panic=0", "transparent_hugepage=madvise",
                "watchdog_thresh=5", "sysctl.kernel.hung_task_timeout_secs=60"]
        if self.extra_append:
            args.append(self.extra_append)
        return " ".join(args)

    def accel_argv(self) -> list[str]:
        """The accelerator and CPU model."""
        if self.use_kvm():
            # On an arm64 host the guest runs natively; its page size is independent
            # of the host's as long as the host CPU supports that granule.
            return ["-accel", "kvm", "-cpu", "host"]
        # thread=single (TCG_THREADS): the vCPUs take turns on one host thread.
        return ["-accel", f"tcg,thread={self.tcg_threads}", "-cpu", self.tcg_cpu]

    def numa_argv(self) -> list[str]:
        return numa_argv(self.memory_mb, self.cpus, self.numa_nodes)

    def drives_argv(self) -> list[str]:
        """The disks, each a virtio-blk device named by its serial."""
        argv = []
        for serial, img in self.disks.items():
            # readonly=on: the guest can never change an image other cells share.
            argv += ["-drive", f"if=none,id={serial},file={img},format=raw,readonly=on",
                     "-device", f"virtio-blk-pci,drive={serial},serial={serial}"]
        for serial, img in self.scratch.items():
            # snapshot=on: writable for the guest, but writes land in a temporary
            # overlay that QEMU discards; the image itself is only read.
            argv += ["-drive", f"if=none,id={serial},file={img},format=raw,snapshot=on",
                     "-device", f"virtio-blk-pci,drive={serial},serial={serial}"]
        if self.outbox is not None:
            # The only disk the guest writes for the host: dumps cross it in
            # moments where the serial console takes seconds per megabyte.
            argv += ["-drive", f"if=none,id={OUTBOX},file={self.outbox},format=raw",
                     "-device", f"virtio-blk-pci,drive={OUTBOX},serial={OUTBOX}"]
        return argv

    def argv(self) -> list[str]:
        return [QEMU, "-M", "virt", *self.accel_argv(), "-smp", str(self.cpus), "-m", str(self.memory_mb),
                *self.numa_argv(),
                "-display", "none", "-no-reboot", "-nic", "none",
                *(["-serial", "mon:stdio"] if self.interactive else ["-monitor", "none", "-serial", "stdio"]),
                "-kernel", str(self.kernel), "-initrd", str(self.initrd),
                "-append", self.append(), *self.drives_argv(), *confinement_argv()]

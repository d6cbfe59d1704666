#!/usr/bin/env python3
"""Record real console lines of every kind of kernel report, for the splat
pattern tests: build the kernel (the splat variant: KASAN, KFENCE, UBSAN,
lockdep), boot it with two CPUs, load the ffsplat module and trigger each
report in turn; each trigger's console text (its kernel log lines, as the farm
reads them after a command) goes to tests/data/consoles/splats/<X.Y>/<kind>.log.
The panic comes last: it ends the boot.

    tools/record_splats.py debian:7.3
    tools/record_splats.py debian:6.12 --variant splat --only warn,bug
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from foliofarm import matrix
from foliofarm.disks import rootfs
from foliofarm.intake import source  # noqa: E402
from foliofarm.kernel.build import Builder  # noqa: E402
from foliofarm.errors import GuestError  # noqa: E402
from foliofarm.boot import splat  # noqa: E402
from foliofarm.boot.console import GuestSession  # noqa: E402
from foliofarm.boot.qemu import Machine  # noqa: E402
from foliofarm.paths import ROOT, cache_dir  # noqa: E402

# trigger word -> the report kind it must produce. Lockdep first: any taint
# turns lockdep off (kernel/panic.c add_taint()); the hung task before any Oops
# (kernel/hung_task.c stops looking once the kernel is tainted D); the panic
# last: it ends the boot.
TRIGGERS = {"lockdep": "lockdep", "sleep": "sleep-in-atomic", "hung": "hung-task",
            "kasan": "kasan", "kfence": "kfence", "ubsan": "ubsan", "softlockup": "soft-lockup",
            "rcu-stall": "rcu-stall", "warn": "warning", "bug": "bug", "oops": "oops",
            "panic": "panic"}
# The module parameter and boot options make each report come quickly; the RCU
# stall timeout is raised for the soft lockup (an RCU stall report would come
# first and hold the lockup detector back) and lowered for the RCU stall.
APPEND = "kfence.sample_interval=1"
SPIN = {"softlockup": 15, "hung": 35, "rcu-stall": 15}
RCU_STALL_S = {"softlockup": 60, "rcu-stall": 5}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kernel", help="debian:X.Y or a kernel tree")
    ap.add_argument("--variant", default="splat")
    ap.add_argument("--only", default=",".join(TRIGGERS), help="comma-separated triggers")
    ap.add_argument("--out", type=Path, default=ROOT / "tests" / "data" / "consoles" / "splats")
    args = ap.parse_args()
    cache = cache_dir()
    src = source.resolve(args.kernel, cache)
    page = matrix.page_sizes()["4k"]
    arts = Builder(cache, log=print).build(src, page, args.variant)
    initrd = rootfs.initramfs(cache, arts)
    out = args.out / src.xy
    out.mkdir(parents=True, exist_ok=True)
    wanted = [t for t in TRIGGERS if t in args.only.split(",")]
    machine = Machine(kernel=arts.image, initrd=initrd, cpus=2, memory_mb=2048,
                      accel="tcg", extra_append=APPEND)
    missing = []
    with GuestSession(machine.argv(), out / f"boot-{args.variant}.console.log", 600) as g:
        g.hang_grace = 120
        load = g.run("insmod /lib/ffsplat.ko spin_seconds=15", 60)
        if load.status:
            raise SystemExit(f"record_splats: insmod ffsplat.ko failed: {load.output}")
        for t in wanted:
            want = TRIGGERS[t]
            if t in SPIN:
                g.run(f"echo {SPIN[t]} > /sys/module/ffsplat/parameters/spin_seconds", 30)
            if t in RCU_STALL_S:
                g.run(f"echo {RCU_STALL_S[t]} > /sys/module/rcupdate/parameters/rcu_cpu_stall_timeout", 30)
            cmd = f"sh -c 'echo {t} > /sys/kernel/debug/ffsplat'"
            try:
                res = g.run(cmd, timeout=180)
                text = res.output + "\n" + res.kernel_log
                got = [s for s in res.splats if s.kind == want]
            except GuestError as exc:      # the panic: QEMU exits
                text = exc.excerpt
                got = [s for s in splat.scan(text) if s.kind == want]
            (out / f"{want}.log").write_text(text.strip("\n") + "\n")
            print(f"{t:<11} -> {want:<16} {'found: ' + got[0].line if got else 'NOT FOUND'}")
            if not got:
                missing.append(t)
            if t == "panic":
                break
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())

"""What a guest says about itself as it comes up (rootfs/banner): its
kernel and page size, whether the probe module loaded, which disk is mounted
where, its swap, NUMA nodes and CPUs, whether it is a coverage kernel (gcov);
read whole lines only."""

from __future__ import annotations

import re

# What the guest's init prints once it is ready for commands.
READY = "FOLIOFARM-READY"
CRLF = re.compile(r"\r+\n")


def normalise(text: str) -> str:
    """Console text with plain newlines: the guest tty and the host pty each turn
    \n into \r\n, so lines arrive as \r\r\n."""
    return CRLF.sub("\n", text).replace("\r", "\n")


# rootfs/banner's lines, each read whole.
BANNER_LINE = re.compile(
    r"FOLIOFARM (?:probe (?P<probe>loaded|FAILED)|outbox (?P<outbox>vd[a-z]+)"
    r"|mounted (?P<serial>[\w-]+) (?P<dev>vd[a-z]+)|mount FAILED (?P<failed>[\w-]+) vd[a-z]+"
    r"|gcov (?P<gcov>yes)"
    r"|swap (?P<swap>vd[a-z]+) (?P<swap_kb>\d+)"
    r"|nodes (?P<nodes>[\d,-]+) cpus (?P<cpus>[\d,-]+)"
    r"|kernel (?P<uname>\S+) page_size (?P<page>\d+))")


def parse(text: str) -> tuple[dict[str, str], bool]:
    """The banner lines' values (rootfs/banner prints them), and whether a
    line was garbled: the kernel's console output is not ordered with the
    shell's, and a kernel message may land in the middle of a banner line
    ("FOLIOFARM probe loadedffprobe: loading out-of-tree module taints
    kernel."). Only whole lines are read."""
    out: dict[str, str] = {}
    garbled = False
    for line in normalise(text).splitlines():
        line = line.strip()
        if "FOLIOFARM" not in line or line == READY:
            continue
        m = BANNER_LINE.fullmatch(line)
        if m is None:
            garbled = True
        elif m["probe"]:
            out["probe"] = m["probe"]
        elif m["outbox"]:
            out["outbox"] = m["outbox"]
        elif m["serial"]:
            out[f"mount:{m['serial']}"] = m["dev"]
        elif m["failed"]:
            out[f"mount:{m['failed']}"] = "FAILED"
        elif m["gcov"]:
            out["gcov"] = m["gcov"]
        elif m["swap"]:
            out["swap"] = f"{m['swap']} {m['swap_kb']} kB"
        elif m["nodes"]:
            # kernel list syntax, as sysfs prints it: "0-1", "0"
            out["numa_nodes"], out["cpus"] = m["nodes"], m["cpus"]
        else:
            out["uname"], out["page_size"] = m["uname"], m["page"]
    return out, garbled

def complete(banner: dict[str, str]) -> bool:
    """The values every boot must report were read whole."""
    return (banner.get("probe") in ("loaded", "FAILED") and "uname" in banner
            and banner.get("page_size", "").isdigit())

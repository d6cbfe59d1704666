"""Host commands foliofarm needs, and the Debian package that brings each
(configs/host-packages.txt, which `make setup` installs from)."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess

from foliofarm.errors import InfraError
from foliofarm.paths import CONFIGS


def packages() -> dict[str, list[str]]:
    """package -> commands it provides."""
    out: dict[str, list[str]] = {}
    for line in (CONFIGS / "host-packages.txt").read_text().splitlines():
        fields = line.split("#", 1)[0].split()
        if fields:
            out[fields[0]] = [c for c in fields[1:] if c != "-"]
    return out


def package_of(command: str) -> str | None:
    for pkg, cmds in packages().items():
        if command in cmds:
            return pkg
    return None


def require(*commands: str) -> None:
    """Raise InfraError naming every missing command and its Debian package."""
    missing = [c for c in commands if shutil.which(c) is None]
    if missing:
        hints = ", ".join(f"{c} (Debian package {package_of(c) or '?'})" for c in missing)
        raise InfraError(f"missing host tools: {hints}; run `make setup` or apt-get install them")


def _first_line(argv: list[str]) -> str:
    try:
        p = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return (p.stdout or p.stderr).strip().splitlines()[0] if (p.stdout or p.stderr).strip() else "unknown"


def machine() -> dict[str, str | int]:
    """What ran a run, for the report: host CPU, cores, memory, kernel, QEMU and
    the cross compiler."""
    cpu = "unknown"
    try:
        for line in open("/proc/cpuinfo", encoding="utf-8", errors="replace"):
            if line.lower().startswith(("model name", "cpu model")):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        mem_gb = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / (1 << 30), 1)
    except (ValueError, OSError):
        mem_gb = 0
    return {"cpu": cpu, "cores": os.cpu_count() or 0, "memory_gb": mem_gb,
            "host": f"{platform.system()} {platform.release()} {platform.machine()}",
            "qemu": _first_line(["qemu-system-aarch64", "--version"]),
            "compiler": _first_line(["aarch64-linux-gnu-gcc", "--version"]),
            "python": platform.python_version()}

"""Host commands foliofarm needs, and the Debian package that brings each
(configs/host-packages.txt, which `make setup` installs from)."""

from __future__ import annotations

import shutil

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

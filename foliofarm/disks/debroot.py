"""Debian arm64 roots for guests: every package apt would install for a list
of packages into an empty system, unpacked with dpkg-deb (no maintainer
scripts run), with the merged-/usr links base-files makes on a real system.
A root is cached by its packages' versions and by the code of the recipe that
finishes it, and made under a staging name, so a killed run leaves nothing a
later one trusts."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Callable

from foliofarm import hosttools, locks, matrix
from foliofarm.errors import InfraError
from foliofarm.intake.apt import PrivateApt
from foliofarm.util import StagingDir, check_free_space, code_digest, run, seal, sealed, sha256_text

# merged /usr: base-files makes these links on a real system; the interpreter
# the binaries name is /lib/ld-linux-aarch64.so.1
USR_LINKS = ("bin", "sbin", "lib")
COMPLETE = ".complete"
_mutex = threading.Lock()
_makers: dict[str, threading.Lock] = {}


def unpacked(cache: Path, packages: list[str], prefix: str, what: str,
             finish: Callable[[Path], None], recipe: list[Path], need: str,
             extra_key: str = "") -> Path:
    """The root ``cache/guest/PREFIX-KEY`` of ``packages`` and what they
    depend on. ``finish(root)`` completes it (links the packages' maintainer
    scripts would have made, the farm's own files); ``recipe`` are the modules
    and files whose content is part of the key, ``extra_key`` anything else
    that is; ``need`` is a path the finished root must have. ``what`` names
    the root in messages."""
    hosttools.require("dpkg-deb", "apt-get")
    apt = PrivateApt(cache / "apt", matrix.defaults()["guest_suite"], "arm64")
    pkgs = apt.closure(packages)
    digests = [code_digest(p) if p.suffix == ".py" else sha256_text(p.read_text()) for p in recipe]
    key = sha256_text(*(f"{n}={v}" for n, v in pkgs), code_digest(Path(__file__)), *digests,
                      extra_key)[:16]
    final = cache / "guest" / f"{prefix}-{key}"
    if sealed(final / COMPLETE):
        return final
    # made once: by one thread of a run (its page sizes' boots ask at once),
    # and by one run of those sharing the cache
    with _making(str(final)), locks.hold(locks.lock_path(cache, "root", final), what, True):
        if not sealed(final / COMPLETE):
            _make(cache, final, apt, pkgs, packages, what, finish, need)
    return final


def _making(key: str) -> threading.Lock:
    with _mutex:
        return _makers.setdefault(key, threading.Lock())


def _make(cache: Path, final: Path, apt: PrivateApt, pkgs: list[tuple[str, str]], packages: list[str],
          what: str, finish: Callable[[Path], None], need: str) -> None:
    check_free_space(final.parent, 1, what)
    with StagingDir(final) as tmp:
        for name, _version in pkgs:
            deb = apt.download(name, cache / "debs")
            run(["dpkg-deb", "-x", str(deb), str(tmp)], what=f"dpkg-deb -x {deb.name}")
        for link in USR_LINKS:
            if not (tmp / link).exists() and not (tmp / link).is_symlink():
                (tmp / link).symlink_to(f"usr/{link}")
        for d in ("proc", "sys", "dev", "tmp"):
            (tmp / d).mkdir(exist_ok=True)
        finish(tmp)
        if not (tmp / need).exists():
            raise InfraError(f"Debian's {' '.join(packages)} left no {need} in {what}")
        (tmp / COMPLETE).write_text("".join(f"{n} {v}\n" for n, v in pkgs))
        seal(tmp / COMPLETE)

"""A coverage kernel's counters brought home check by check (a guest whose
banner says "gcov yes": configs/kernels/coverage.config).

Before each farm check the guest's counters are zeroed and after it they are
saved (rootfs/ffgcov); the selftests driver saves them after each selftest
(tests/vmtests/mm-selftests.sh). After each check the host reads what was
saved: <run>/coverage/<boot>/<attempt>/<name>.tgz, each named in index.tsv
("name, check, cell, what it ran"), and the guest's copy is deleted. The
archives are the guest's bytes: read under a cap, unpacked only by
foliofarm/coverage/gcda.py."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from foliofarm import shown
from foliofarm.errors import GuestError
from foliofarm.matrix import Cell

GUEST_DIR = "/tmp/out/gcov"
# One test's counters, gzip'd (mm, arch/arm64/mm, fs and lib of a 7.3 kernel:
# about 1 MB); more is not read.
ARCHIVE_CAP = 32 << 20
INDEX = "index.tsv"
# archives one boot may give (a run of every selftest saves under a hundred)
PER_BOOT = 400
NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")


def on(g: object) -> bool:
    """The guest is a coverage kernel's."""
    return getattr(g, "banner", {}).get("gcov") == "yes"


def reset(g) -> None:
    g.run("ffgcov reset", 60)


def save(g, name: str, what: str) -> None:
    g.run(f"ffgcov save {name} {shlex.quote(what)}", 300)


def where(log_stem: Path, attempt: int) -> Path:
    """The host's folder for one boot's counters."""
    return log_stem.parent.parent / "coverage" / log_stem.name / str(attempt)


def fetch(g, into: Path, cell: Cell, check: str) -> list[str]:
    """Every archive the guest saved since the last fetch, written to
    ``into`` and named in its index; the names fetched. A guest that lost
    one costs that archive (its index line says why), never the check."""
    into.mkdir(parents=True, exist_ok=True)
    try:
        listing = g.read_file(f"{GUEST_DIR}/index", limit=1 << 20) if _exists(g) else ""
    except GuestError as exc:
        _note(into, "-", check, cell, f"lost: the guest's index: {exc}")
        return []
    got = []
    done = {ln.split("\t", 1)[0] for ln in _index_lines(into)}
    for line in listing.splitlines():
        name, _, what = line.partition("\t")
        if not NAME.fullmatch(name) or name in done:
            continue
        if len(done) >= PER_BOOT:
            _note(into, "-", check, cell, f"lost: over {PER_BOOT} archives in one boot: the rest not read")
            break
        done.add(name)
        try:
            data = g.read_bytes(f"{GUEST_DIR}/{name}.tgz", limit=ARCHIVE_CAP)
        except GuestError as exc:
            _note(into, name, check, cell, f"lost: {exc}")
            continue
        (into / f"{name}.tgz").write_bytes(data)
        _note(into, name, check, cell, what)
        g.run(f"rm -f {GUEST_DIR}/{name}.tgz", 30)
        got.append(name)
    return got


def _exists(g) -> bool:
    return g.run(f"test -f {GUEST_DIR}/index", 30).status == 0


def _index_lines(into: Path) -> list[str]:
    p = into / INDEX
    return p.read_text().splitlines() if p.is_file() else []


def _note(into: Path, name: str, check: str, cell: Cell, what: str) -> None:
    """One index line: tabs and line ends of the guest's words made visible."""
    what = " ".join(shown.visible(what).split())[:500]
    with open(into / INDEX, "a") as f:
        f.write(f"{name}\t{check}\t{cell.id}\t{what}\n")

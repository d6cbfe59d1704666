"""The matrix as data (configs/kernels/matrix.toml): page sizes, filesystems,
Debian kernels, variants, and the cells a run covers."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from foliofarm.errors import UsageError
from foliofarm.paths import KERNEL_CONFIGS


@dataclass(frozen=True)
class PageSize:
    name: str          # "4k"
    bytes: int         # 4096
    fragment: str      # Kconfig fragment file name
    cont_pte_pages: int
    anon_mthp_kb: int  # the anon mTHP size whose folios fill one contpte block

    @property
    def kb(self) -> int:
        return self.bytes // 1024


@dataclass(frozen=True)
class Filesystem:
    name: str
    mount_options: str
    rw_mount_options: str = ""   # empty: the filesystem is never mounted writable


@dataclass(frozen=True)
class Cell:
    page: PageSize
    fs: Filesystem
    kernel: str        # short kernel label, e.g. "7.3" or "7.3+series"

    @property
    def id(self) -> str:
        return f"{self.page.name}-{self.fs.name}-{self.kernel}"


@cache
def data() -> dict[str, Any]:
    from foliofarm import datafiles
    return datafiles.load(KERNEL_CONFIGS / "matrix.toml", datafiles.MatrixFile)


def page_sizes() -> dict[str, PageSize]:
    return {k: PageSize(name=k, **v) for k, v in data()["page_sizes"].items()}


def filesystems() -> dict[str, Filesystem]:
    return {k: Filesystem(name=k, **v) for k, v in data()["filesystems"].items()}


def cell_of(page: str, fs: str, kernel: str) -> Cell:
    """The cell of the page size and filesystem named ``page`` and ``fs`` (as
    results.json and a job's metadata name them), of kernel ``kernel``."""
    return Cell(page_sizes()[page], filesystems()[fs], kernel)


def page_of(nbytes: int) -> PageSize:
    """The page size of ``nbytes`` bytes (as a guest and its dumps say it)."""
    for p in page_sizes().values():
        if p.bytes == nbytes:
            return p
    raise ValueError(f"{nbytes} bytes is not a page size of the matrix "
                     f"({', '.join(str(p.bytes) for p in page_sizes().values())})")


def debian_kernels() -> dict[str, dict[str, Any]]:
    return data()["debian_kernels"]


def variants() -> dict[str, dict[str, Any]]:
    return data()["variants"]


def defaults() -> dict[str, Any]:
    return data()["defaults"]


def _pick(kind: str, requested: str | list[str], table: dict[str, Any]) -> list[Any]:
    names = requested.split(",") if isinstance(requested, str) else requested
    names = [n.strip().lower() for n in names if n.strip()]
    if not names:
        raise UsageError(f"no {kind} given; valid: {', '.join(table)}")
    bad = [n for n in names if n not in table]
    if bad:
        raise UsageError(f"unknown {kind} {', '.join(bad)}; valid: {', '.join(table)}")
    return [table[n] for n in dict.fromkeys(names)]


def select_page_sizes(requested: str | list[str]) -> list[PageSize]:
    return _pick("page size", requested, page_sizes())


def select_filesystems(requested: str | list[str]) -> list[Filesystem]:
    return _pick("filesystem", requested, filesystems())


def select_variant(requested: str) -> str:
    _pick("variant", requested, variants())
    return requested


def select_cells(globs: str, pages: list[PageSize], filesystems_: list[Filesystem]
                 ) -> tuple[list[PageSize], list[Filesystem], set[str]]:
    """--cells: globs over "page-fs" names (`64k-*`, `*-xfs`, `4k-ext4`), within
    the page sizes and filesystems selected. Returns the page sizes and
    filesystems that have a cell, and the cells' names; a glob that matches no
    cell is a usage error listing the cells there are."""
    import fnmatch
    names = [f"{p.name}-{f.name}" for p in pages for f in filesystems_]
    wanted = [g.strip().lower() for g in globs.split(",") if g.strip()]
    if not wanted:
        raise UsageError(f"--cells names no cell; cells: {', '.join(names)}")
    chosen: set[str] = set()
    for g in wanted:
        hit = fnmatch.filter(names, g)
        if not hit:
            raise UsageError(f"--cells {g!r} matches no cell; cells: {', '.join(names)}")
        chosen.update(hit)
    return ([p for p in pages if any(n.startswith(f"{p.name}-") for n in chosen)],
            [f for f in filesystems_ if any(n.endswith(f"-{f.name}") for n in chosen)], chosen)

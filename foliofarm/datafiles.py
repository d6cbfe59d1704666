"""The project's own data files, checked against their shapes when read: the
matrix (configs/kernels/matrix.toml), the console patterns (splats.toml), the
check catalogue (tests/vmtests/checks.toml) and the expectations
(tests/vmtests/expectations/*.toml). A file that is not TOML, or whose shape is
wrong, stops the run with one line naming the file and the field."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from foliofarm.errors import ConfigError


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class PageSizeRow(Strict):
    bytes: int
    fragment: str
    cont_pte_pages: int = Field(gt=0)
    anon_mthp_kb: int = Field(gt=0)

    @field_validator("bytes")
    @classmethod
    def _power_of_two(cls, v: int) -> int:
        if v < 4096 or v & (v - 1):
            raise ValueError(f"{v} is not a page size (a power of two of at least 4096)")
        return v


class FilesystemRow(Strict):
    mount_options: str
    rw_mount_options: str = ""


class DebianKernelRow(Strict):
    suite: str


class VariantRow(Strict):
    fragments: list[str]
    # directories of the tree whose C files gcov profiles alone (kernel/profiled.py)
    profile: list[str] = []


class Defaults(Strict):
    kernel: str
    page_sizes: list[str]
    filesystems: list[str]
    guest_suite: str
    guest_cpus: int = Field(default=2, ge=1)
    guest_memory_mb: int = Field(default=2048, ge=256)
    guest_numa_nodes: int = Field(default=1, ge=1)


class MatrixFile(Strict):
    page_sizes: dict[str, PageSizeRow] = Field(min_length=1)
    filesystems: dict[str, FilesystemRow] = Field(min_length=1)
    debian_kernels: dict[str, DebianKernelRow] = Field(min_length=1)
    variants: dict[str, VariantRow]
    defaults: Defaults


class SplatRow(Strict):
    kind: str
    regex: str
    fatal: bool = False
    hang: bool = False


class SplatsFile(_Open):
    splat: list[SplatRow] = Field(min_length=1)


class CheckRow(Strict):
    """A check, one row of tests/vmtests/checks.toml: everything about it."""
    program: str
    args: list[str]
    timeout: float = Field(gt=0)
    description: str = ""
    tree: Optional[Literal["selftests", "thpmaps"]] = None   # the tree's program it runs, if not the farm's
    metrics: Optional[str] = None      # its figures from its dump: a function of judge/metrics.METRICS
    figures: list[str] = []            # its key figures, shown base against series
    summary: list[tuple[str, str]] = []   # the summary table's column: (figure, how it is shown)
    in_text: bool = False              # report.txt shows its folio table whatever moved
    on_request: bool = False           # run only when asked for by name (--checks, --repro)
    # seconds on one core a first run expects, per part: "cell", and a split
    # check's "page" and "race" (the schedule's guess until it has times)
    estimate: dict[Literal["cell", "page", "race"], float] = {}
    mapping: str = "text"              # the dump's mapping its figures are of
    setup: list[str] = []              # shell lines run before it (the cell's placeholders filled)
    # the most its dump may hold: a larger one is an error, never read (boot/console.py read_file)
    dump_kb: int = Field(default=16384, gt=0)
    # the mm selftests' own (tests/vmtests/mm-selftests.sh, measure/split.py)
    per_page: Optional[bool] = None
    part: Optional[str] = None
    at_once: Optional[str] = None
    at_once_categories: Optional[str] = None
    touched: Optional[str] = None
    not_reached: Optional[str] = None       # the tests a series cannot reach (coverage/select.py)
    categories: Optional[str] = None
    test_timeout: Optional[int] = None
    hugetlb_mb: Optional[int] = None
    left_out: Optional[str] = None


class Xfail(Strict):
    kernel: str
    reason: str


class ExpectRow(_Open):
    kernel: str = "*"
    page_size: str = "*"
    fs: str = "*"
    xfail: Optional[Xfail] = None


class FigureRow(_Open):
    """How a check's figure is judged (judge/figures.py). A behaviour figure
    says which way is better and what code it guards; a timing, input or
    summary figure is shown and never judged, and says why in ``guards``."""
    kind: Literal["behaviour", "timing", "input", "summary"] = "behaviour"
    better: Optional[str] = None
    guards: str = Field(min_length=1)
    tolerance: float = 0.0


class KnownFailure(Strict):
    """A selftest known to fail on some kernels, page sizes or filesystems:
    ``test`` globs the test's name, ``inner`` one of its own results (absent:
    the whole test), ``bails`` the words it failed with (its reason: exit
    status, "Bail out!" line), so that a row covers that failure only."""
    kernel: str = "*"
    page_size: str = "*"
    fs: str = "*"
    test: str
    inner: Optional[str] = None
    bails: Optional[str] = None
    reason: str = Field(min_length=1)
    flaky: bool = False       # fails in some runs only: its failure is no news, its pass neither


class ExpectationsFile(Strict):
    expect: list[ExpectRow] = Field(default_factory=list)
    figures: dict[str, FigureRow] = Field(default_factory=dict)
    known: list[KnownFailure] = Field(default_factory=list)


def load(path: Path, model: type[BaseModel] | TypeAdapter) -> dict[str, Any]:
    """``path`` parsed as TOML and checked against ``model``; ConfigError names
    the file and what is wrong."""
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except FileNotFoundError:
        raise ConfigError(f"{path} is missing") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: not readable TOML ({exc})") from None
    try:
        model.validate_python(data) if isinstance(model, TypeAdapter) else model.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"{path}: {describe(exc)}") from None
    return data


def describe(exc: ValidationError) -> str:
    """A validation error in one line: the first field that is wrong and why."""
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{where}: {first['msg']}{more}"


# checks.toml: one table per check
CHECKS_FILE = TypeAdapter(dict[str, CheckRow])

"""The shape of results.json: the models the writer keeps a run in and the
reader gives back (read.py reads and checks a document; judged.py makes a
check's result)."""

from __future__ import annotations

from typing import Any, Optional, Union

from pydantic import Field

from foliofarm.results.outcome import Outcome, Verdict
from foliofarm.results.part import Part, Role
from foliofarm.results.seriesparts import ChangedLine, PatchCoverage, Reached, TouchedSelftest

__all__ = ["Part", "Role", "ChangedLine", "PatchCoverage", "Reached", "TouchedSelftest"]

SCHEMA_VERSION = 1

Number = Union[int, float]
# A figure: a number, a flag, text, a histogram (size -> count or share) or a
# list of numbers (per fault or per touch, None where nothing happened), or None
# where the guest could not measure it. Structured output is not a figure: it
# has a typed field of its own (a cross-check's rows, a selftests run's tests).
Figure = Union[None, bool, int, float, str, dict[str, Number], list[Optional[Number]]]


class Subtest(Part):
    name: str
    outcome: Outcome
    reason: str = ""
    inner: dict[str, int] = {}
    seconds: Optional[Number] = None
    failed: list[str] = []
    flaky: bool = False
    flaky_failed: list[str] = []     # failed results a flaky row covers: no news


class CrossCheckRow(Part):
    """One counter of a cross-check (judge/thpmaps.py): the farm's reading and
    the other tool's, and where they differ by design, why."""
    counter: str
    farm_kb: Optional[int]
    thpmaps_kb: Optional[int]
    agrees: bool
    note: str = ""


class CheckResult(Part):
    """One check's result on one cell: the judge makes it (``result``), the
    writer records it, the reader gives it back."""
    name: str
    outcome: Outcome
    reason: str = ""
    metrics: dict[str, Figure]
    excerpt: str = ""
    subtests: list[Subtest] = []
    rows: list[CrossCheckRow] = []
    boot_failed: bool = False     # the kernel died or hung while booting: nothing measured
    # a series' regression booted again on both sides (measure/confirm.py): whether
    # it was one again (False: judged "flaky"), and what the second boots found
    confirmed: Optional[bool] = None
    again: str = ""

    def written(self) -> dict[str, Any]:
        """As results.json holds it: what was given, defaults left out but for
        the four fields every result has (its name, outcome, reason, figures)."""
        out = self.model_dump(exclude_defaults=True, warnings=False)   # the writer checks it after
        return {"name": self.name, "outcome": self.outcome, "reason": self.reason,
                "metrics": self.metrics, **out}


class CellResult(Part):
    id: str
    page_size: str
    fs: str
    kernel: str
    checks: list[CheckResult]


class KernelEntry(Part):
    page_size: str
    kernel: str
    side: Optional[str] = None
    artifacts: Optional[str] = None
    built_now: Optional[bool] = None
    build_seconds: Optional[Number] = None
    reproduce: Optional[str] = None
    build_failed: Optional[bool] = None
    error: Optional[str] = None
    absent_optional: list[str] = []     # optional config symbols the tree's Kconfig does not have
    extra_config: list[str] = []        # --extra-config fragments it was built with


class BootEntry(Part):
    """One boot of a kernel (the farm's QEMU, vng, a LAVA lab's job), or
    (``reused``) the saved measurements that stood in for its boots."""
    page_size: str
    kernel: str
    console_log: Optional[str] = None
    qemu: Optional[str] = None          # the guest's command line (a LAVA job's name, a vng command)
    reused: Optional[str] = None
    measured_by: Optional[str] = None
    boot_seconds: Optional[Number] = None
    part: Optional[str] = None          # "own", "tree", "page" or "race" (measure/durations.py GuestWork)
    guest_seconds: Optional[Number] = None   # QEMU's wall time, start to end
    cpu_seconds: Optional[Number] = None     # the host CPU time QEMU used (all its threads)
    waited_seconds: Optional[Number] = None  # how long its busiest thread waited, runnable, for a core
    started_s: Optional[Number] = None       # when QEMU started, in seconds since the run began
    expected_s: Optional[Number] = None      # the seconds its part was expected to take (measure/durations.py)
    # the host's 1-minute load average per core when the guest's shell came up
    # and when the boot ended: a lockup logged on an overloaded host is the host's
    host_load: list[Number] = []
    lab_job: Optional[str] = None       # the LAVA job's page, where a lab booted it (run --lab)
    device: Optional[str] = None        # the lab's device that ran it
    lab_faults: list[str] = []          # the lab's words for each attempt before it
    lab_seconds: list[Number] = []      # the job queued, then running, by the lab's clock
    fs: Optional[str] = None            # the filesystems of the cells it served
    attempt: Optional[int] = None
    error: Optional[str] = None
    banner: dict[str, str] = {}         # what the guest said of itself (boot/banner.py)
    boot_splats: list[str] = []         # reports on its console before the first check
    taint: Optional[int] = None         # the kernel's taint mask at the shell
    ended_by: Optional[str] = None      # "fs/check" whose hang or crash ended it


class Finding(Part):
    level: str
    type: str
    message: str
    line: Union[int, str, None]


class Checkpatch(Part):
    number: int
    subject: str
    errors: int
    warnings: int
    checks: int
    findings: list[Finding]
    name: Optional[str] = None          # the patch's file or message name


class EachCommit(Part):
    number: int
    commit: str
    subject: str
    page_size: str
    ok: bool
    errors: str = ""
    built_now: Optional[bool] = None


class Side(Part):
    kernel: str
    origin: str


class Sides(Part):
    base: Side
    series: Side


class SeriesPatch(Part):
    number: int
    subject: str
    files: list[str]
    name: Optional[str] = None
    sha256: Optional[str] = None        # of the patch as applied (KCIDB's patchset hash is over these)
    message_id: Optional[str] = None


class ReproducerRecord(Part):
    """The reproducer a run ran in every cell (``--repro``): its file's name,
    kind ("c" or "sh"), content digest, own arguments and time limit."""
    name: str
    kind: str
    digest: str
    args: list[str] = Field(default_factory=list)
    seconds: Optional[int] = None       # --repro-timeout


class ScheduleRecord(Part):
    """How long the run's guests took, against what was planned for them
    (measure/schedule.py): ``planned_s`` replays the parts' expected times
    (earlier runs' records, else the catalogue's estimates), ``replayed_s``
    their times in this run, both on this host's cores and guests; ``real_s``
    when the last guest ended; all in seconds since the run began."""
    cores: int
    own_guests: int
    tree_guests: int
    parts: int
    planned_s: Number
    replayed_s: Number
    real_s: Number


class SeriesRecord(Part):
    spec: Optional[str] = None
    message_id: Optional[str] = None    # the cover letter's, else patch 1's
    kind: Optional[str] = None
    cover: Optional[str] = None
    base_commit: Optional[str] = None
    base_commit_note: Optional[str] = None
    intake_notes: list[str] = Field(default_factory=list)
    patches: list[SeriesPatch]
    commits: list[str] = Field(default_factory=list)
    base: Optional["BaseChoice"] = None   # in a followed tree: where it was applied, and why
    base_under_test: Optional[str] = None  # the base's source as the run named it
    touched_selftests: list[TouchedSelftest] = Field(default_factory=list)
    reached: list[Reached] = Field(default_factory=list)   # by the base's coverage map, per page size
    changed_functions: list[str] = Field(default_factory=list)   # "file: function" as a map sees the series
    patch_coverage: list[PatchCoverage] = Field(default_factory=list)   # run --coverage: per cell


class BaseChoice(Part):
    """The base a series' run chose in a followed tree (intake/bases.py)."""
    commit: str
    branch: str = ""
    why: str
    attempts: list[str] = Field(default_factory=list)
    text: str


class Unconfirmed(Part):
    """A figure that moved on the series' first boot and not on its second."""
    cell: str
    check: str
    metric: str
    base: Figure = None
    series: Figure = None
    confirm: Figure = None


class BootedAgain(Part):
    """A cell booted again before its results counted (measure/confirm.py)."""
    cell: str
    kernel: str
    why: str


class ErrorEntry(Part):
    stage: str
    message: str


class FigurePair(Part):
    """A figure base against series (a verdict row's key figures)."""
    metric: str
    base: Figure = None
    series: Figure = None
    delta: Optional[Number] = None


class Moved(FigurePair):
    """A figure that moved beyond the base's noise; a regression when it moved
    the wrong way beyond its declared tolerance."""
    noise: Optional[Number] = None
    regression: bool = False
    guards: str = ""


# a selftest's verdicts that are no news of their own
QUIET = (Verdict.PASS, Verdict.SKIP, Verdict.XFAIL, Verdict.NOT_REACHED)


class VerdictRow(Part):
    """One check (or one test of a selftests check) on one cell, base against
    series: judged again from the cells whenever the document is read."""
    page_size: str
    fs: str
    check: str
    verdict: Verdict
    base: Optional[Outcome] = None
    series: Optional[Outcome] = None
    base_reason: str = ""
    series_reason: str = ""
    figures: list[FigurePair] = []
    changed: list[Moved] = []
    subtest_of: Optional[str] = None

    @property
    def cell(self) -> str:
        return f"{self.page_size}-{self.fs}"

    @property
    def quiet(self) -> bool:
        """A selftest's row with nothing to say (passed, skipped or failed for a
        known reason on both sides): left out of tables, counted in its check's row."""
        return bool(self.subtest_of) and self.verdict in QUIET and not self.changed


class FlakyResult(Part):
    """A result of one kernel on one cell that passed in some of its boots
    and failed in others (judge/flaky.py): in this run's boots, or in the
    kernel's history kept in the cache (measure/history.py), with the counts."""
    kernel: str
    page_size: str
    fs: str
    check: str
    result: str                 # "check", "check: test" or "check: test: its own result"
    passed: int                 # in every boot of the kernel the history holds
    failed: int
    run_passed: Optional[int] = None    # in this run's boots
    run_failed: Optional[int] = None
    measured_in: str            # "this run" (its boots alone) or "the kernel's history"
    first: Optional[str] = None     # when the history first saw the result
    last_failed: Optional[str] = None
    judged: bool = False        # a failure of it in this run was judged flaky (not a fail)

    @property
    def cell(self) -> str:
        return f"{self.page_size}-{self.fs}"


class Milestone(Part):
    """A part of a two-sided run's verdict that became final while the rest
    ran: the farm's own checks' (seconds after the run started, their rows'
    verdicts counted, what was still running), the selftests the series
    touches (``tests``: their rows' verdicts), then the whole verdict's."""
    part: str
    seconds: Number
    checks: list[str] = Field(default_factory=list)
    tests: list[str] = Field(default_factory=list)
    verdicts: dict[str, int] = Field(default_factory=dict)
    pending: list[str] = Field(default_factory=list)
    to_confirm: int = 0


class Results(Part):
    schema_version: int = SCHEMA_VERSION
    run_id: str
    command: list[str]
    complete: bool
    started: str
    finished: Optional[str] = None
    kernels: list[KernelEntry] = Field(default_factory=list)
    boots: list[BootEntry] = Field(default_factory=list)
    errors: list[ErrorEntry] = Field(default_factory=list)
    cells: list[CellResult]
    stages: dict[str, Number] = Field(default_factory=dict)
    series: Optional[SeriesRecord] = None
    reproducer: Optional[ReproducerRecord] = None
    schedule: Optional[ScheduleRecord] = None
    checkpatch: Optional[list[Checkpatch]] = None
    each_commit: Optional[list[EachCommit]] = None
    # cell -> check -> figure -> noise (inf where a move was not repeated)
    noise: dict[str, dict[str, dict[str, Number]]] = Field(default_factory=dict)
    sides: Optional[Sides] = None
    unconfirmed: list[Unconfirmed] = Field(default_factory=list)
    booted_again: list[BootedAgain] = Field(default_factory=list)
    milestones: list[Milestone] = Field(default_factory=list)
    flaky: list[FlakyResult] = Field(default_factory=list)
    merged_from: list[str] = Field(default_factory=list)
    shard_commands: list[list[str]] = Field(default_factory=list)
    machine: dict[str, Union[str, int, float]] = Field(default_factory=dict)
    # judged again from the cells whenever a document is read (report.readback)
    verdicts: list[VerdictRow] = Field(default_factory=list)

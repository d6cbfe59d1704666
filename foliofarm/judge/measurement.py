"""What a boot measured for one check on one cell, before any judging: one
record, whichever way the guest was booted (the farm's QEMU in
boot/session.py, virtme-ng, a LAVA lab's log read by boot/framed.py), kept
in the cache as a clean base's saved measurements (measure/saved.py) and taken
by the judge (judge/checks.py)."""

from __future__ import annotations

from typing import Any, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from foliofarm.judge.catalogue import Kind
from foliofarm.results.outcome import Status

Seconds = Union[int, float]


class Record(BaseModel):
    # what the farm makes for itself: a misspelt field is an error where it is made
    model_config = ConfigDict(extra="forbid")


class TestResult(Record):
    """One test of a run as the guest printed it (judge/ktap.py): its
    status (crash: no result line, the run ended inside it), the reason (a
    SKIP's, or the exit code of a failure), the results of its own KTAP, if
    it printed any, and its time as the guest's driver took it."""
    __test__ = False       # a record, not a test for pytest to collect
    name: str
    status: Status
    reason: str = ""
    inner: list["TestResult"] = Field(default_factory=list)
    seconds: Optional[int] = None


class TestsRun(Record):
    """A selftests run's KTAP read by the kernel's parser (judge/ktap.py):
    each test as the guest printed it, whether the run finished, what the
    parser found wrong."""
    __test__ = False
    results: list[TestResult]
    planned: Optional[int] = None
    complete: bool = False
    parser_errors: list[str] = Field(default_factory=list)
    parser: str = ""


class PartOf(Record):
    """One part of a split check's measurement (measure/split.py): the boot it
    ran in, how it ended, its time."""
    kind: Kind
    where: str = ""
    seconds: Optional[Seconds] = None


class Measurement(Record):
    kind: Kind
    reason: str = ""                     # why it is no dump or KTAP (skip, error, crash)
    dump: Optional[str] = None           # the guest program's findings (kind dump)
    ktap: Optional[str] = None           # what the program printed; a selftests run's whole KTAP
    tests: Optional[TestsRun] = None     # that KTAP parsed (selftests)
    console: Optional[str] = None        # the console since it began, where the kernel cut it short
    excerpt: str = ""                    # the console's last lines around a crash
    seconds: Optional[Seconds] = None    # the check's run in the guest
    transfer_seconds: Optional[Seconds] = None   # its dump or KTAP to the host
    taint: str = ""                      # taint letters the kernel added while it ran
    taint_mask: int = 0
    splats: list[str] = Field(default_factory=list)   # the reports it printed, their first lines
    kernel_log: str = ""                 # the kernel log lines that carry them
    ended_boot: bool = False             # the kernel hung or crashed during it: its boot ended
    boot_failed: bool = False            # the kernel died or hung booting: nothing was measured
    split: dict[str, PartOf] = Field(default_factory=dict)   # a split check's parts, by part
    race: Optional[PartOf] = None        # the race part a page part was put together with
    touched: Optional[PartOf] = None     # and the part of the tests a series touches, run first

    def kept(self) -> dict[str, Any]:
        """As the cache keeps it (JSON): what was given, defaults left out."""
        return self.model_dump(mode="json", exclude_defaults=True)


def error(reason: str, **more: Any) -> Measurement:
    """The farm could not measure it (never a verdict on the kernel)."""
    return Measurement(kind=Kind.ERROR, reason=reason, **more)


def from_kept(kept: Any) -> Measurement | None:
    """A measurement as the cache kept it; None where it is not one (a file of
    another farm's shape is measured again, never judged)."""
    try:
        return Measurement.model_validate(kept)
    except ValidationError:
        return None

"""The parts of results.json's series record that say what the series
reaches (schema.py's SeriesRecord): the selftests it touches, those the
base's coverage map says it can reach, and which of its lines ran."""

from __future__ import annotations

from pydantic import Field

from foliofarm.results.part import Part


class TouchedSelftest(Part):
    """An mm selftest the series touches (intake/touched.py): a program
    run_vmtests.sh runs, its categories, and what names it (a MAINTAINERS
    section for a file the series changes, or the series changing it)."""
    program: str
    categories: list[str]
    named_by: list[str]


class Reached(Part):
    """What the series can reach on one page size (coverage/select.py): the
    mm selftests that run, each with what it reaches, and those that do not,
    each with why; or why every one runs."""
    page_size: str
    everything: str = ""
    run: dict[str, str] = Field(default_factory=dict)
    not_reached: dict[str, str] = Field(default_factory=dict)
    map: str = ""               # whose map answered, where not this base's own


class ChangedLine(Part):
    """One line a series changes that is code, and the tests that ran it."""
    file: str
    line: int
    tests: list[str] = Field(default_factory=list)


class PatchCoverage(Part):
    """Which of the series' changed lines ran on one cell (coverage/patch.py):
    ``changed`` lines that are code, ``ran`` of them executed by some test."""
    page_size: str
    cell: str
    changed: int
    ran: int
    lines: list[ChangedLine] = Field(default_factory=list)     # each changed line, capped
    unmeasured: list[str] = Field(default_factory=list)     # "file: N line(s)" no profiled object lists
    lost: list[str] = Field(default_factory=list)           # tests whose counters could not be read

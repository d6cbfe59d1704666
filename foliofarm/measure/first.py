"""The selftests a series touches, first: which of a split check's programs
run in the series' "touched" part (measure/split.py), and their verdict,
written and told as soon as it is final, minutes before the rest's.

The series' record names the programs MAINTAINERS gives the files it changes
(intake/touched.py). On the series' side each split selftests check runs
those it runs itself in a guest of its own, ranked ahead of every other part
of the tree's checks. When every page size's touched part is in and the
base's cells of the check are recorded, each touched test is judged in each
cell as the whole run will judge it (the cell's expectations, base against
series, compare.subtest_rows) and the counts are kept as a milestone
("touched selftests"). The page part still reports them when it is put
together, so the whole verdict judges every test as before."""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

from foliofarm.judge import compare
from foliofarm.judge.catalogue import Check
from foliofarm.judge.checks import judge_measurement
from foliofarm.judge.measurement import Measurement
from foliofarm.matrix import Cell
from foliofarm.measure import split
from foliofarm.results.schema import Milestone, Reached, Results, Role, VerdictRow
from foliofarm.results.writer import ResultsWriter

# The milestone's part name in results.json.
TOUCHED = "touched selftests"


def programs(doc: Results, side: Role | None, checks: list[Check]) -> dict[str, str]:
    """Per split check: the programs of the series' touched selftests it runs,
    on the series' side (none on the base's, or where nothing is touched)."""
    if side != Role.SERIES or doc.series is None or not doc.series.touched_selftests:
        return {}
    touched = [(t.program, t.categories) for t in doc.series.touched_selftests]
    out = {c.name: split.touched_programs(c, touched) for c in checks if split.splits(c)}
    return {k: v for k, v in out.items() if v}


def reached(doc: Results, side: Role | None, page: str) -> Reached | None:
    """On the series' side, what the series reaches on ``page`` (its
    schema.Reached: coverage/select.py); None on the base's, or unknown."""
    if side != Role.SERIES or doc.series is None:
        return None
    return next((r for r in doc.series.reached if r.page_size == page), None)


def here(m: Measurement) -> Measurement:
    """The touched part's tests without those it left to the other parts."""
    if m.tests is None:
        return m
    return m.model_copy(update={"tests": m.tests.model_copy(update={"results": split.ran_here(m.tests.results)})})


@dataclass
class TouchedVerdict:
    """The touched selftests' milestone of a series run over ``pages``."""
    writer: ResultsWriter
    pages: list[str]
    log: Callable[..., None]
    parts: dict[str, tuple[list[Cell], Check, Measurement, str]] = field(default_factory=dict)
    told: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, cells: list[Cell], chk: Check, m: Measurement, kernel_xy: str) -> None:
        """A page size's touched part, as measured (the series' cells of it,
        the kernel's X.Y for their expectations)."""
        with self.lock:
            self.parts[cells[0].page.name] = (cells, chk, here(m), kernel_xy)
        self()

    def __call__(self) -> None:
        with self.lock:
            if self.told or not self.parts or set(self.parts) != set(self.pages):
                return
            doc = self.writer.results()
            rows = self.rows(doc)
            if rows is None:
                return
            self.told = True
        counts = dict(Counter(str(r.verdict) for r in rows))
        tests = sorted({r.check.split(": ", 1)[1] for r in rows})
        self.writer.add_milestone(Milestone(part=TOUCHED, seconds=self.writer.seconds(), tests=tests,
                                            verdicts=counts))
        told = ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))
        self.log(f"the touched selftests' verdict is final after {self.writer.seconds():.0f} s: "
                 f"{len(tests)} tests in {len({(r.page_size, r.fs) for r in rows})} cells, {told}", "bold")

    def rows(self, doc: Results) -> list[VerdictRow] | None:
        """Each touched test in each cell, base against series; None while a
        base cell of the check is still to be recorded."""
        if doc.sides is None:
            return None
        base = {(c.page_size, c.fs): c for c in doc.cells if c.kernel == doc.sides.base.kernel}
        out: list[VerdictRow] = []
        for cells, chk, m, xy in self.parts.values():
            for cell in cells:
                b = base.get((cell.page.name, cell.fs.name))
                bc = next((x for x in b.checks if x.name == chk.name), None) if b else None
                if bc is None:
                    return None
                nc = judge_measurement(chk, m, cell, xy)
                names = {t.name for t in nc.subtests}
                bc = bc.model_copy(update={"subtests": [t for t in bc.subtests if t.name in names]})
                out += compare.subtest_rows(cell.page.name, cell.fs.name, chk.name, bc, nc)
        return out

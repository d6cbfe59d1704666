"""The farm's own checks' verdict, written and told as soon as it is final
(every cell of both sides has their outcomes), while thpmaps and the kernel's
selftests still run: a reader has the fast answer first. Rows whose figures
moved still get their confirming boot after their page size's selftests; they
are counted as to be confirmed. The run makes one for its cells and checks;
measuring calls it after each recorded outcome (Context.recorded)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Callable, Sequence

from foliofarm.judge import compare
from foliofarm.judge.catalogue import Check, is_own
from foliofarm.results.schema import Milestone
from foliofarm.results.writer import ResultsWriter
from foliofarm.results.outcome import Verdict

# The milestone's part name in results.json.
OWN = "own checks"


@dataclass
class OwnVerdict:
    writer: ResultsWriter
    checks: list[Check]
    cells: list[str]                   # "page-fs" of the run's cells
    log: Callable[..., None]
    told: bool = False

    def __call__(self) -> None:
        own = [c.name for c in self.checks if is_own(c)]
        rest = [c.name for c in self.checks if c.name not in own]
        w = self.writer
        with w.lock:
            if self.told or not own or not rest:
                return
            doc = w.results()
            if doc.sides is None:
                return
            want = [f"{cell}-{side.kernel}" for side in (doc.sides.base, doc.sides.series) for cell in self.cells]
            got = {(c.id, ch.name) for c in doc.cells for ch in c.checks}
            if not all((cid, n) in got for cid in want for n in own):
                return
            self.told = True
            rows = [r for r in compare.verdicts(doc) if r.check.split(":")[0] in own]
            counts = dict(Counter(str(r.verdict) for r in rows if not r.subtest_of))
            moved = sum(1 for r in rows if r.changed and r.verdict in (Verdict.CHANGED, Verdict.REGRESSION))
            w.add_milestone(Milestone(part=OWN, seconds=w.seconds(), checks=own, verdicts=counts,
                                      pending=rest, to_confirm=moved))
        told = ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))
        self.log(f"the farm's own checks' verdict is final after {w.seconds():.0f} s: {told}"
                 + (f" ({moved} with moved figures to be confirmed by a second boot)" if moved else "")
                 + f"; {', '.join(rest)} still running", "bold")


@dataclass
class Milestones:
    """Every milestone of a run, told after each recorded outcome
    (Context.recorded): a callable of measuring's floor, so that measuring
    never calls back up into the run's room."""
    each: Sequence[Callable[[], None]]

    def __call__(self) -> None:
        for told in self.each:
            told()

"""Results of a run, written as they arrive: results.json and junit.xml are
rewritten atomically after every check, so a killed run leaves what it had."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path


from foliofarm.matrix import Cell, filesystems, page_sizes
from foliofarm.results import judged, read, schema
from foliofarm.errors import InfraError
from foliofarm.results.arriving import ARRIVING, Moment
from foliofarm.util import write_json
from foliofarm.results.outcome import Outcome

# Tests set this: every write of results.json is read back through the
# reader's schema, not only the last.
CHECK_EVERY_WRITE = os.environ.get("FOLIOFARM_CHECK_RESULTS") == "1"


class ResultsBug(InfraError):
    """The farm wrote a document its own reader refuses."""


# The last milestone of a run whose own checks' verdict came first.
WHOLE = "whole verdict"


class ResultsWriter:
    def __init__(self, root: Path, command: list[str], run_id: str | None = None) -> None:
        # Page sizes' cells are measured on threads of their own: every change
        # to the document, and every write of it, holds this.
        self.lock = threading.RLock()
        self.run_id = run_id or time.strftime("%Y%m%d-%H%M%S") + f"-{os.getpid()}"
        self.t0 = time.monotonic()
        self.root = root
        self.dir = root / self.run_id
        self.dir.mkdir(parents=True, exist_ok=True)
        latest = root / "latest"
        tmp = root / f".latest-{os.getpid()}"
        tmp.unlink(missing_ok=True)
        tmp.symlink_to(self.run_id)
        os.replace(tmp, latest)
        self.doc = schema.Results(run_id=self.run_id, command=command, complete=False, cells=[],
                                  started=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
        self.flush()

    def cell_dir(self, cell: Cell) -> Path:
        d = self.dir / "cells" / cell.id
        d.mkdir(parents=True, exist_ok=True)
        return d

    def _cell(self, cell: Cell) -> schema.CellResult:
        with self.lock:
            for c in self.doc.cells:
                if c.id == cell.id:
                    return c
            entry = schema.CellResult(id=cell.id, page_size=cell.page.name, fs=cell.fs.name,
                                      kernel=cell.kernel, checks=[])
            self.doc.cells.append(entry)
            return entry

    def record(self, cell: Cell, outcome: schema.CheckResult, excerpt: str = "", flush: bool = True) -> None:
        """Add a check's result. It is checked against the reader's schema
        first: a result the reader would refuse (a fault of the farm, not of the
        kernel: a figure changed after the judge made it) is kept beside the
        results as it was, and recorded as an error that says so, so the
        document stays readable and the run goes on."""
        with self.lock:
            entry = outcome.written()
            if excerpt:
                entry["excerpt"] = excerpt
            wrong = judged.check_entry(entry)
            if wrong:
                kept = self.cell_dir(cell) / f"{outcome.name}.refused.json"
                write_json(kept, entry)
                entry = {"name": outcome.name, "outcome": Outcome.ERROR, "metrics": {},
                         "reason": f"foliofarm wrote a result its own results schema refuses "
                                   f"({wrong}); the result as written: {kept}"}
            self._cell(cell).checks.append(schema.CheckResult.model_validate(entry))
            if flush:
                self.flush()

    def rerecord(self, cell: Cell, outcome: schema.CheckResult, flush: bool = True) -> None:
        """Put ``outcome`` in place of the check's recorded result (judged
        again with what a later boot told: judge/flaky.py), its excerpt kept."""
        with self.lock:
            checks = self._cell(cell).checks
            old = next((i for i, c in enumerate(checks) if c.name == outcome.name), None)
            excerpt = checks[old].excerpt if old is not None else ""
            self.record(cell, outcome, excerpt, flush=False)
            if old is not None:
                checks[old] = checks.pop()
            if flush:
                self.flush()

    def set_flaky(self, kernel: str, page_size: str, found: list[schema.FlakyResult]) -> None:
        """The flaky results known of the cells of ``kernel`` for ``page_size``,
        in place of those kept before."""
        with self.lock:
            kept = [f for f in self.doc.flaky if (f.kernel, f.page_size) != (kernel, page_size)]
            self.doc.flaky = kept + list(found)
            self.flush()

    def drop_cell(self, cell: Cell) -> None:
        """Forget a cell's results (it is booted again: measure/confirm.py)."""
        with self.lock:
            self._cell(cell).checks.clear()

    def order_checks(self, cell: Cell, names: list[str]) -> None:
        """Put a cell's outcomes in ``names`` order (others, such as the console
        check, after them), whatever order they arrived in."""
        with self.lock:
            rank = {n: i for i, n in enumerate(names)}
            self._cell(cell).checks.sort(key=lambda c: rank.get(c.name, len(rank)))

    def _append(self, key: str, item: schema.Part, flush: bool = True) -> None:
        """``item`` (a model of the schema, so checked as it is made) at the
        end of the document's list ``key``."""
        with self.lock:
            getattr(self.doc, key).append(item)
            if flush:
                self.flush()

    def add_kernel(self, kernel: schema.KernelEntry) -> None:
        self._append("kernels", kernel)

    def add_boot(self, boot: schema.BootEntry) -> None:
        self._append("boots", boot)

    def add_error(self, stage: str, message: str) -> None:
        self._append("errors", schema.ErrorEntry(stage=stage, message=message))

    def add_each_commit(self, commit: schema.EachCommit) -> None:
        with self.lock:
            self.doc.each_commit = [*(self.doc.each_commit or []), commit]
            self.flush()

    def add_booted_again(self, again: schema.BootedAgain) -> None:
        self._append("booted_again", again, flush=False)

    def add_unconfirmed(self, move: schema.Unconfirmed) -> None:
        self._append("unconfirmed", move, flush=False)

    def check_result(self, cell_id: str, name: str) -> schema.CheckResult | None:
        """What is recorded for check ``name`` on cell ``cell_id`` (a copy)."""
        with self.lock:
            for c in self.doc.cells:
                if c.id == cell_id:
                    entry = next((x for x in c.checks if x.name == name), None)
                    return entry.model_copy(deep=True) if entry else None
        return None

    def mark_confirmed(self, cell_id: str, name: str, confirmed: bool, again: str) -> None:
        """A series' regression booted again: whether it stood, and what the
        second boots found (measure/confirm.py)."""
        with self.lock:
            for c in self.doc.cells:
                if c.id == cell_id:
                    for x in c.checks:
                        if x.name == name:
                            x.confirmed, x.again = confirmed, again

    def add_milestone(self, milestone: schema.Milestone) -> None:
        self._append("milestones", milestone)

    def set_sides(self, sides: schema.Sides) -> None:
        with self.lock:
            self.doc.sides = sides
            self.flush()

    def set_series(self, series: schema.SeriesRecord) -> None:
        with self.lock:
            self.doc.series = series
            self.flush()

    def set_schedule(self, record: schema.ScheduleRecord) -> None:
        with self.lock:
            self.doc.schedule = record

    def set_reproducer(self, record: schema.ReproducerRecord) -> None:
        with self.lock:
            self.doc.reproducer = record
            self.flush()

    def set_series_commits(self, commits: list[str]) -> None:
        """The commits the series became on its work branch (git am)."""
        with self.lock:
            assert self.doc.series is not None, "the series is recorded before its commits"
            self.doc.series.commits = list(commits)
            self.flush()

    def set_series_reach(self, reached: list[schema.Reached], functions: list[str]) -> None:
        """What the series can reach on each page size (coverage/select.py)."""
        with self.lock:
            assert self.doc.series is not None, "the series is recorded before its reach"
            self.doc.series.reached = list(reached)
            self.doc.series.changed_functions = list(functions)
            self.flush()

    def set_patch_coverage(self, found: list[schema.PatchCoverage]) -> None:
        """Which changed lines ran, per cell (coverage/patch.py)."""
        with self.lock:
            assert self.doc.series is not None, "the series is recorded before its coverage"
            self.doc.series.patch_coverage = list(found)
            self.flush()

    def set_checkpatch(self, found: list[schema.Checkpatch]) -> None:
        with self.lock:
            self.doc.checkpatch = list(found)
            self.flush()

    def set_machine(self, **about: str | int | float) -> None:
        """What the run ran on (the host, the guest's shape, a LAVA lab)."""
        with self.lock:
            self.doc.machine.update(about)

    def add_seconds(self, stage: str, seconds: float, digits: int = 2) -> None:
        """Time spent in a named stage of the run (``<stage>_s``), summed over repeats."""
        with self.lock:
            stages = self.doc.stages
            stages[f"{stage}_s"] = round(stages.get(f"{stage}_s", 0.0) + seconds, digits)

    def set_noise(self, noise: dict[str, dict[str, dict[str, float]]]) -> None:
        """Cell -> check -> figure -> its noise over the base's clean boots
        (each check's figures replaced as a whole)."""
        with self.lock:
            for cell, by_check in noise.items():
                self.doc.noise.setdefault(cell, {}).update(by_check)

    def add_noise(self, noise: dict[str, dict[str, dict[str, float]]]) -> None:
        """Cell -> check -> figure -> noise, figure by figure (a move a second
        boot did not repeat: measure/confirm.py)."""
        with self.lock:
            for cell, by_check in noise.items():
                for check, figs in by_check.items():
                    self.doc.noise.setdefault(cell, {}).setdefault(check, {}).update(figs)

    def order_cells(self) -> None:
        """Cells in matrix order within each kernel (page size, then filesystem),
        kernels in the order they were measured: cells arrive in any order when
        several guests run at once."""
        with self.lock:
            kernels = list(dict.fromkeys(c.kernel for c in self.doc.cells))
            pages = {p: i for i, p in enumerate(page_sizes())}
            fss = {f: i for i, f in enumerate(filesystems())}
            self.doc.cells.sort(key=lambda c: (kernels.index(c.kernel), pages.get(c.page_size, 99),
                                               fss.get(c.fs, 99)))

    def seconds(self) -> float:
        """Since the run started."""
        return round(time.monotonic() - self.t0, 1)

    def results(self) -> schema.Results:
        """What is recorded so far, as the reader's models (a copy: the run
        goes on writing)."""
        with self.lock:
            return self.doc.model_copy(deep=True)

    def finish(self, complete: bool, verdicts: list[schema.VerdictRow] | None = None) -> None:
        """The run's end, written for the last time: whether every measurement
        could be made and, for a two-sided run, the verdicts the run judged
        (run/closing.py: judging is the run's, the writer only keeps them)."""
        with self.lock:
            if self.doc.milestones:
                self.doc.milestones.append(schema.Milestone(part=WHOLE, seconds=self.seconds()))
            self.order_cells()
            self.doc.complete = complete
            self.doc.finished = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            if verdicts is not None:
                self.doc.verdicts = list(verdicts)
            self.flush(final=True)

    def flush(self, final: bool = False) -> None:
        """Rewrite results.json and junit.xml. After each check: compact, not
        synced to the disk; a host crash may lose the last few (a killed run
        keeps every outcome; `foliofarm report` judges its verdicts). At the end
        of the run: indented, synced, read back through the reader's schema.
        (Every check's flush is a rewrite of the whole file; indenting and
        checking each time cost seconds a run.)"""
        with self.lock:
            for out in ARRIVING:
                out.write(self.dir, self.doc, Moment(final=final))
            if final or CHECK_EVERY_WRITE:
                # the writer never leaves what `foliofarm report` refuses (written
                # first: nothing is lost, and the message names the field)
                try:
                    path = self.dir / "results.json"
                    read.check(json.loads(path.read_text()), str(path))
                except read.ResultsError as exc:
                    raise ResultsBug(f"foliofarm wrote a results.json its own reader refuses: {exc}") from None

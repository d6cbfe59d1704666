"""Results of a run, written as they arrive: results.json and junit.xml are
rewritten atomically after every check, so a killed run leaves what it had."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from foliofarm.results.outcome import Outcome
from foliofarm.matrix import Cell, filesystems, page_sizes
from foliofarm.results import schema
from foliofarm.errors import InfraError
from foliofarm.results.junit import junit_xml
from foliofarm.results.schema import SCHEMA_VERSION
from foliofarm.util import write_atomic, write_json

# Tests set this: every write of results.json is read back through the
# reader's schema, not only the last.
CHECK_EVERY_WRITE = os.environ.get("FOLIOFARM_CHECK_RESULTS") == "1"


class ResultsBug(InfraError):
    """The farm wrote a document its own reader refuses."""


# The last milestone of a run whose own checks' verdict came first.
WHOLE = "whole verdict"


class ResultsWriter:
    def __init__(self, root: Path, command: list[str], run_id: str | None = None,
                 strict_style: bool = False) -> None:
        self.strict_style = strict_style
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
        self.doc: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "run_id": self.run_id,
            "command": command,
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "complete": False,
            "kernels": [],
            "boots": [],
            "errors": [],
            "cells": [],
        }
        self.flush()

    def cell_dir(self, cell: Cell) -> Path:
        d = self.dir / "cells" / cell.id
        d.mkdir(parents=True, exist_ok=True)
        return d

    def _cell(self, cell: Cell) -> dict[str, Any]:
        with self.lock:
            for c in self.doc["cells"]:
                if c["id"] == cell.id:
                    return c
            entry = {"id": cell.id, "page_size": cell.page.name, "fs": cell.fs.name,
                     "kernel": cell.kernel, "checks": []}
            self.doc["cells"].append(entry)
            return entry

    def record(self, cell: Cell, outcome: Outcome, excerpt: str = "", flush: bool = True) -> None:
        """Add a check's result. It is checked against the reader's schema
        first: a result the reader would refuse (a fault of the farm, not of the
        kernel) is kept beside the results as it was, and recorded as an error
        that says so, so the document stays readable and the run goes on."""
        with self.lock:
            entry = outcome.as_dict()
            if excerpt:
                entry["excerpt"] = excerpt
            wrong = schema.check_entry(entry)
            if wrong:
                kept = self.cell_dir(cell) / f"{outcome.name}.refused.json"
                write_json(kept, entry)
                entry = {"name": outcome.name, "outcome": "error", "metrics": {},
                         "reason": f"foliofarm wrote a result its own results schema refuses "
                                   f"({wrong}); the result as written: {kept}"}
            self._cell(cell)["checks"].append(entry)
            if flush:
                self.flush()

    def drop_cell(self, cell: Cell) -> None:
        """Forget a cell's results (it is booted again: measure/confirm.py)."""
        with self.lock:
            self._cell(cell)["checks"].clear()

    def order_checks(self, cell: Cell, names: list[str]) -> None:
        """Put a cell's outcomes in ``names`` order (others, such as the console
        check, after them), whatever order they arrived in."""
        with self.lock:
            rank = {n: i for i, n in enumerate(names)}
            self._cell(cell)["checks"].sort(key=lambda c: rank.get(c["name"], len(rank)))

    def add(self, key: str, item: Any) -> None:
        with self.lock:
            self.doc.setdefault(key, []).append(item)
            self.flush()

    def order_cells(self) -> None:
        """Cells in matrix order within each kernel (page size, then filesystem),
        kernels in the order they were measured: cells arrive in any order when
        several guests run at once."""
        with self.lock:
            kernels = list(dict.fromkeys(c["kernel"] for c in self.doc["cells"]))
            pages = {p: i for i, p in enumerate(page_sizes())}
            fss = {f: i for i, f in enumerate(filesystems())}
            self.doc["cells"].sort(key=lambda c: (kernels.index(c["kernel"]), pages.get(c["page_size"], 99),
                                                  fss.get(c["fs"], 99)))

    def seconds(self) -> float:
        """Since the run started."""
        return round(time.monotonic() - self.t0, 1)

    def results(self) -> schema.Results:
        """What is recorded so far, as the reader's models."""
        with self.lock:
            return schema.typed(self.doc)

    def finish(self, complete: bool, verdicts: list[dict[str, Any]] | None = None) -> None:
        """The run's end, written for the last time: whether every measurement
        could be made and, for a two-sided run, the verdicts the run judged
        (run/closing.py: judging is the run's, the writer only keeps them)."""
        with self.lock:
            if self.doc.get("milestones"):
                self.doc["milestones"].append({"part": WHOLE, "seconds": self.seconds()})
            self.order_cells()
            self.doc["complete"] = complete
            self.doc["finished"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            if verdicts is not None:
                self.doc["verdicts"] = verdicts
            self.flush(final=True)

    def flush(self, final: bool = False) -> None:
        """Rewrite results.json and junit.xml. After each check: compact, not
        synced to the disk; a host crash may lose the last few (a killed run
        keeps every outcome; `foliofarm report` judges its verdicts). At the end
        of the run: indented, synced, read back through the reader's schema.
        (Every check's flush is a rewrite of the whole file; indenting and
        checking each time cost seconds a run.)"""
        with self.lock:
            write_atomic(self.dir / "results.json",
                         json.dumps(self.doc, indent=2 if final else None) + "\n", durable=final)
            write_atomic(self.dir / "junit.xml", junit_xml(self.doc), durable=final)
            if final or CHECK_EVERY_WRITE:
                # the writer never leaves what `foliofarm report` refuses (written
                # first: nothing is lost, and the message names the field)
                try:
                    schema.check(json.loads(json.dumps(self.doc)), str(self.dir / "results.json"))
                except schema.ResultsError as exc:
                    raise ResultsBug(f"foliofarm wrote a results.json its own reader refuses: {exc}") from None

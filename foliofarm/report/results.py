"""Results of a run, written as they arrive: results.json and junit.xml are
rewritten atomically after every check, so a killed run leaves what it had."""

from __future__ import annotations

import json
import os
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from foliofarm.judge import compare
from foliofarm.judge.checks import Outcome
from foliofarm.matrix import Cell, filesystems, page_sizes
from foliofarm import schema
from foliofarm.errors import InfraError
from foliofarm.schema import SCHEMA_VERSION
from foliofarm.util import write_atomic, write_json

# Tests set this: every write of results.json is read back through the
# reader's schema, not only the last.
CHECK_EVERY_WRITE = os.environ.get("FOLIOFARM_CHECK_RESULTS") == "1"


class ResultsBug(InfraError):
    """The farm wrote a document its own reader refuses."""


FAILING = {"fail"}
ERRORS = {"error"}


def exit_code(doc: schema.Results | dict[str, Any]) -> int:
    """0 all passed, 1 a check failed, 3 an error or an incomplete run."""
    doc = schema.typed(doc)
    outcomes = [c.outcome for cell in doc.cells for c in cell.checks]
    if not doc.complete or any(o in ERRORS for o in outcomes) or doc.errors:
        return 3
    if any(o in FAILING for o in outcomes):
        return 1
    return 0


def junit_class(name: str) -> str:
    """A classname CI servers group as one class under the package "foliofarm":
    Jenkins splits classnames at their dots, and "4k-xfs-7.3" has one."""
    return "foliofarm." + name.replace(".", "_")


# Verdicts as test cases: which fail the run (failure), which are the farm's
# own trouble (error), which are not a result (skipped).
VERDICT_FAILURE = {"regression", "build-broken"}
VERDICT_ERROR = {"error", "incomplete"}
VERDICT_SKIPPED = {"skip", "xfail"}


def junit_xml(doc: dict[str, Any]) -> str:
    """One test suite per cell (a case per check, with its guest time), and for a
    two-sided run one suite of the verdicts (a case per cell and check)."""
    suites = ET.Element("testsuites", name="foliofarm", id=str(doc["run_id"]))
    for cell in doc["cells"]:
        checks = cell["checks"]
        suite = ET.SubElement(suites, "testsuite", name=cell["id"], tests=str(len(checks)),
                              failures=str(sum(c["outcome"] == "fail" for c in checks)),
                              errors=str(sum(c["outcome"] == "error" for c in checks)),
                              skipped=str(sum(c["outcome"] in ("skip", "xfail") for c in checks)),
                              time=_seconds(sum(_guest_seconds(c) for c in checks)))
        for c in checks:
            case = ET.SubElement(suite, "testcase", classname=junit_class(cell["id"]), name=c["name"],
                                 time=_seconds(_guest_seconds(c)))
            msg = c.get("reason") or c["outcome"]
            if c["outcome"] == "fail":
                ET.SubElement(case, "failure", message=msg).text = msg
            elif c["outcome"] == "error":
                ET.SubElement(case, "error", message=msg).text = c.get("excerpt", msg)
            elif c["outcome"] in ("skip", "xfail"):
                ET.SubElement(case, "skipped", message=f"{c['outcome']}: {msg}")
            out = ET.SubElement(case, "system-out")
            out.text = " ".join(f"{k}={v}" for k, v in c["metrics"].items()
                                if not isinstance(v, dict))
    verdicts = doc.get("verdicts") or []
    if verdicts:
        sides = doc.get("sides") or {}
        name = f"verdicts {sides.get('base', {}).get('kernel')} -> {sides.get('series', {}).get('kernel')}"
        suite = ET.SubElement(suites, "testsuite", name=name, tests=str(len(verdicts)),
                              failures=str(sum(r["verdict"] in VERDICT_FAILURE for r in verdicts)),
                              errors=str(sum(r["verdict"] in VERDICT_ERROR for r in verdicts)),
                              skipped=str(sum(r["verdict"] in VERDICT_SKIPPED for r in verdicts)))
        for r in verdicts:
            case = ET.SubElement(suite, "testcase", classname=junit_class(f"verdicts.{r['page_size']}-{r['fs']}"),
                                 name=r["check"])
            figs = r.get("changed") or [f for f in r.get("figures") or [] if f.get("base") != f.get("series")]
            moved = "; ".join(f"{f['metric']} {f['base']} -> {f['series']}" for f in figs[:8])
            msg = f"{r['verdict']}: base {r['base']}, series {r['series']}" + (f"; {moved}" if moved else "")
            if r["verdict"] in VERDICT_FAILURE:
                ET.SubElement(case, "failure", message=msg).text = r.get("series_reason") or msg
            elif r["verdict"] in VERDICT_ERROR:
                ET.SubElement(case, "error", message=msg).text = msg
            elif r["verdict"] in VERDICT_SKIPPED:
                ET.SubElement(case, "skipped", message=msg)
            else:
                ET.SubElement(case, "system-out").text = msg
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def _guest_seconds(c: dict[str, Any]) -> float:
    v = (c.get("metrics") or {}).get("guest_seconds")
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0.0


def _seconds(x: float) -> str:
    return f"{x:.3f}"


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

    def finish(self, complete: bool) -> int:
        with self.lock:
            if self.doc.get("milestones"):
                self.doc["milestones"].append({"part": WHOLE, "seconds": self.seconds()})
            self.order_cells()
            self.doc["complete"] = complete
            self.doc["finished"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            self.flush(final=True)
            if self.doc.get("sides"):
                return compare.exit_code(self.doc, self.strict_style)
            return exit_code(self.doc)

    def flush(self, final: bool = False) -> None:
        """Rewrite results.json and junit.xml. After each check: compact, not
        synced to the disk and without the verdicts, which are derived from the
        cells (a killed run keeps every outcome; `foliofarm report` judges its
        verdicts); a host crash may lose the last few. At the end of the run:
        indented, with the verdicts, synced. (Every check's flush is a rewrite
        of the whole file; judging and indenting each time cost seconds a run.)"""
        with self.lock:
            if final and self.doc.get("sides"):
                self.doc["verdicts"] = compare.verdicts(self.doc)
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

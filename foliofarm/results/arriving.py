"""A run's outputs: each a file (or a folder of them) in the run's folder,
what it is for, and the one function that writes it. The outputs written with
every result (results.json, junit.xml: a killed run leaves them) are here,
where the writer calls them; report/outputs.py lists them with those written
once at the end. Adding a format is a function and one line in a list."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from foliofarm.results.junit import junit_xml
from foliofarm.results.read import written
from foliofarm.results.schema import Results
from foliofarm.util import write_atomic


@dataclass
class Moment:
    """What an output is written with besides the document: whether it is
    the run's last write (compact and unsynced before), and at the end, the
    run's options (repro.sh) and the plots drawn while the run went on."""
    final: bool = False
    opts: Any = None
    drawn: dict[tuple[str, str], bytes] = field(default_factory=dict)
    made: dict[str, Any] = field(default_factory=dict)     # what one output made that a later one uses


@dataclass(frozen=True)
class Output:
    name: str                                                   # in the run's folder
    what: str
    write: Callable[[Path, Results, Moment], list[Path]]        # -> what it wrote
    arriving: bool = False                                      # rewritten with every result


def results_json(run_dir: Path, doc: Results, at: Moment) -> list[Path]:
    f = run_dir / "results.json"
    write_atomic(f, json.dumps(written(doc), indent=2 if at.final else None) + "\n", durable=at.final)
    return [f]


def junit(run_dir: Path, doc: Results, at: Moment) -> list[Path]:
    f = run_dir / "junit.xml"
    write_atomic(f, junit_xml(doc), durable=at.final)
    return [f]


ARRIVING = (
    Output("results.json", "every result as it arrives: the one document the rest is read from",
           results_json, arriving=True),
    Output("junit.xml", "the results as CI servers read them (a suite per cell, the verdicts)",
           junit, arriving=True),
)

"""The one way a results.json is read back: checked against the schema (an
earlier farm's document upgraded, a later one's refused), its models typed.
Verdicts are as recorded; a reader that wants them judged again from the
cells (a killed run has none) passes the document to judge/compare.py judged."""

from __future__ import annotations

from pathlib import Path

from foliofarm.results import schema
from foliofarm.results.schema import Results


def read(path: Path) -> Results:
    """``path`` (a results.json, or the run folder holding one) as its models;
    ResultsError naming the file and what is wrong with it."""
    path = Path(path)
    if path.is_dir():
        path = path / "results.json"
    return schema.typed(schema.load(path))

"""The one way a results.json is read back: checked against the schema (an
earlier farm's document upgraded, a later one's refused), its models typed;
and the one way the writer writes one. Verdicts are as recorded; a reader
that wants them judged again from the cells (a killed run has none) passes
the document to judge/compare.py judged.

A truncated, foreign or newer file is refused with one line naming the file
and what is wrong, never a traceback deep in the report code. Documents
written before results.json carried ``schema_version`` have the same shape as
version 1 and are read as such."""

from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from foliofarm.datafiles import describe
from foliofarm.errors import UsageError
from foliofarm.results.schema import SCHEMA_VERSION, Results


def read(path: Path) -> Results:
    """``path`` (a results.json, or the run folder holding one) as its models;
    ResultsError naming the file and what is wrong with it."""
    path = Path(path)
    if path.is_dir():
        path = path / "results.json"
    return typed(load(path))


class ResultsError(UsageError):
    """A results.json the farm cannot read back."""


def upgrade(doc: dict[str, Any]) -> dict[str, Any]:
    """A document of an earlier farm in today's shape, in place: thpmaps wrote
    its rows among the figures (metrics.rows) before they had a field."""
    cells = doc.get("cells")
    for cell in cells if isinstance(cells, list) else []:
        checks = cell.get("checks") if isinstance(cell, dict) else None
        for c in checks if isinstance(checks, list) else []:
            metrics = c.get("metrics") if isinstance(c, dict) else None
            if isinstance(metrics, dict) and isinstance(metrics.get("rows"), list) and "rows" not in c:
                c["rows"] = metrics.pop("rows")
    return doc


def check(doc: Any, where: str) -> dict[str, Any]:
    """``doc`` (parsed JSON) if it is a results document this farm can read;
    else ResultsError with one line: the file and what is wrong."""
    if isinstance(doc, dict):
        upgrade(doc)
    if not isinstance(doc, dict) or "cells" not in doc or "run_id" not in doc:
        raise ResultsError(f"{where}: not a foliofarm results.json (no run_id and cells)")
    version = doc.get("schema_version", SCHEMA_VERSION)
    if not isinstance(version, int) or isinstance(version, bool):
        raise ResultsError(f"{where}: schema_version {version!r} is not a number")
    if version > SCHEMA_VERSION:
        raise ResultsError(f"{where}: written by a newer foliofarm (schema {version}, this one "
                           f"reads up to {SCHEMA_VERSION}): render it with that version")
    try:
        model = Results.model_validate(doc)
    except ValidationError as exc:
        raise ResultsError(f"{where}: {describe(exc)}") from None
    return normalised(model, doc)


def normalised(model: Results, doc: dict[str, Any]) -> dict[str, Any]:
    """The document as the schema reads it: every optional field of a cell,
    a check, a test, a kernel... present with its default, so what reads it
    further (the report, JUnit, merging) never meets a field the schema lets
    a document leave out. Top-level parts the document does not have stay
    absent: their absence means something (no series, no sides)."""
    out = model.model_dump()
    return {k: v for k, v in out.items() if k in doc or v is not None}


# what every results.json holds, whatever its run recorded
ALWAYS = ("schema_version", "run_id", "command", "started", "complete", "kernels", "boots", "errors", "cells")


def written(doc: Results) -> dict[str, Any]:
    """``doc`` as the writer writes it (JSON data): what the run recorded,
    defaults left out but for the parts every document has."""
    out = doc.model_dump(exclude_defaults=True, warnings=False)
    out.update({k: getattr(doc, k) for k in ALWAYS if k not in out})     # the lists there, if empty
    out["cells"] = [{**c.model_dump(exclude_defaults=True), "checks": [x.written() for x in c.checks]}
                    for c in doc.cells]
    return out


def plain(doc: Results) -> dict[str, Any]:
    """The document as JSON data, as the reader gives it (normalised): the
    parts it does not have left out."""
    return {k: v for k, v in doc.model_dump().items() if v is not None}


def typed(doc: dict[str, Any]) -> Results:
    """A document (as parsed JSON, or as the writer keeps it) as its models."""
    return Results.model_validate(upgrade(doc))


# the most a gzipped results.json may unpack to (the largest a 3x3 run with
# every selftest wrote is a few MB): a bomb is refused, not unpacked
GZ_LIMIT = 256 << 20


def text_of(path: Path) -> str:
    """``path``'s text; a ``.gz`` one unpacked, to GZ_LIMIT at most."""
    if path.suffix != ".gz":
        return path.read_text(encoding="utf-8")
    try:
        with gzip.open(path, "rb") as f:
            data = f.read(GZ_LIMIT + 1)
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise ResultsError(f"{path}: not a whole gzip file ({exc})") from None
    if len(data) > GZ_LIMIT:
        raise ResultsError(f"{path}: unpacks to more than {GZ_LIMIT >> 20} MB: not a results.json")
    return data.decode("utf-8")


def load(path: Path) -> dict[str, Any]:
    """Read and check a results.json (or results.json.gz) a user handed over."""
    try:
        text = text_of(path)
    except FileNotFoundError:
        raise ResultsError(f"{path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ResultsError(f"{path}: cannot read it as text ({exc})") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        cut = text.lstrip()[:1] in ("{", "[") and exc.pos >= len(text.rstrip()) - 1
        raise ResultsError(f"{path}: {'cut short' if cut else 'not JSON'} ({exc.msg} at line "
                           f"{exc.lineno} column {exc.colno})") from None
    return check(doc, str(path))

"""Documents the farm keeps in its cache and runs at once share, each read
and written whole under a lock beside it: the kernels' histories of results
(measure/history.py), the parts' recorded times (measure/durations.py)."""

from __future__ import annotations

import fcntl
import json
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator


@contextmanager
def locked_beside(path: Path) -> Iterator[None]:
    """``path``'s lock (PATH.lock, flock'd exclusively) held: for a document
    in the cache that runs at once read and write whole."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path.with_suffix(".lock"), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def read_kept(path: Path, version: int, empty: dict[str, Any]) -> dict[str, Any]:
    """A JSON document the farm keeps in its cache, of ``version`` with the
    keys of ``empty`` (dicts and lists as there); ``empty`` where there is
    none or it is not one this farm wrote (a damaged file is started again,
    never trusted)."""
    try:
        doc = json.loads(path.read_text())
        if (isinstance(doc, dict) and doc.get("version") == version
                and all(isinstance(doc.get(k), type(v)) for k, v in empty.items())):
            return doc
    except (OSError, ValueError):
        pass
    return {"version": version, **empty}

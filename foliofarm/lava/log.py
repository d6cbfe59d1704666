"""A LAVA job's log read back: its records, and the guest's console (the
log's "target" lines), where each check's framed output and file
(boot/framed.py, tests/vmtests/lava-check.sh) are read into the measurement
the farm's own boot would have made: by a run's lab boots (remote.py) and by
`foliofarm report --lava` (run/lab_jobs.py).

The log is what `lava-run` prints (one JSON object per line) or what a LAVA
server's job log gives (a YAML list of the same objects), saved as
``lava.log`` in the job's folder (jobs.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from foliofarm.errors import UsageError

LOG = "lava.log"


def entries(path: Path) -> list[dict[str, Any]]:
    """The log's records: JSON lines (lava-run) or a YAML list (a server's)."""
    text = path.read_text(errors="replace")
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                out.append(json.loads(line))
                continue
            except ValueError:
                pass
            try:    # lava-run's own records carry YAML tags now and then ("size": ! "123")
                rec = yaml.safe_load(line)
            except yaml.YAMLError:
                continue
            if isinstance(rec, dict):
                out.append(rec)
    if out:
        return out
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise UsageError(f"{path}: neither lava-run's JSON lines nor a LAVA job log in YAML: {exc}") from None
    if not isinstance(doc, list):
        raise UsageError(f"{path}: not a LAVA job log (a list of records)")
    return [e for e in doc if isinstance(e, dict)]


def console(records: list[dict[str, Any]]) -> list[str]:
    """The guest's console lines, in order."""
    return [str(r.get("msg", "")) for r in records if r.get("lvl") == "target"]

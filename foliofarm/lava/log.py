"""A LAVA job's log read back: the guest's console (the log's "target" lines),
each check's framed output and file (guest.py, tests/vmtests/lava-check.sh)
turned into the measurement the farm's own boot would have made
(guest/session.py), and judged by the same code with the same expectations
into a results folder `foliofarm report` renders; jobs of a run's base and
series sides are judged base against series.

The log is what `lava-run` prints (one JSON object per line) or what a LAVA
server's job log gives (a YAML list of the same objects), saved as
``lava.log`` in the job's folder (jobs.py)."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import re
import zlib
from pathlib import Path
from typing import Any

import yaml

from foliofarm import matrix
from foliofarm.errors import UsageError
from foliofarm.guest import ktap, splat
from foliofarm.guest.measure import console_outcome
from foliofarm.guest.session import without_dump
from foliofarm.judge import checks as catalogue
from foliofarm.judge.checks import Check, Kind, judge_measurement
from foliofarm.matrix import Cell
from foliofarm.paths import cache_dir
from foliofarm.report.results import ResultsWriter

LOG = "lava.log"
BEGIN = re.compile(r"^FOLIOFARM-BEGIN (\S+)\s*$")
END = re.compile(r"^FOLIOFARM-END (\S+) status=(\d+) taint=(\d+),(\d+) seconds=(\d+)\s*$")
FILE = re.compile(r"^FOLIOFARM-FILE (\S+) size=(\d+) md5=([0-9a-f]{32})\s*$")
FILE_END = re.compile(r"^FOLIOFARM-FILE-END (\S+)\s*$")
B64 = re.compile(r"^[A-Za-z0-9+/=]+$")


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


def measurement(lines: list[str], chk: Check, parser: Any) -> dict[str, Any]:
    """``chk``'s measurement from the console ``lines``, as guest/session.py
    makes it from a boot the farm drives."""
    start = next((i for i, ln in enumerate(lines) if (m := BEGIN.match(ln)) and m.group(1) == chk.name), None)
    if start is None:
        return {"kind": Kind.ERROR, "reason": f"{chk.name} never started in the LAVA job (its log has no "
                                              f"FOLIOFARM-BEGIN {chk.name})"}
    end = next((i for i in range(start + 1, len(lines)) if (m := END.match(lines[i])) and m.group(1) == chk.name),
               None)
    body = lines[start + 1:end] if end is not None else lines[start + 1:]
    text = "\n".join(body) + "\n"
    reports = splat.scan(text)
    trouble = {"splats": [f"{s.kind}: {s.line}" for s in reports],
               "kernel_log": "\n".join(s.excerpt for s in reports)[-6000:]}
    if end is None:
        return {"kind": Kind.CRASH, "reason": "the kernel hung or crashed: the LAVA job's log ends inside it",
                "excerpt": text[-4000:], "console": text, "ended_boot": True, "taint": "", "taint_mask": 0,
                **trouble, **({"tests": parsed(parser, text)} if chk.options.get("kind") == "selftests" else {})}
    m = END.match(lines[end])
    assert m is not None
    status, before, after, seconds = int(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5))
    new = after & ~before
    base = {"seconds": float(seconds), "taint": splat.taint_letters(new), "taint_mask": new, **trouble}
    content = file_of(lines, end, chk.name)
    if chk.options.get("kind") == "selftests":
        if status != 0 or content is None:
            return {**base, "kind": Kind.ERROR, "ktap": text,
                    "reason": f"the selftests driver exited {status}: {text.strip()[-300:]}"}
        return {**base, "kind": Kind.KTAP, "ktap": content, "tests": parsed(parser, content)}
    if (ended := without_dump(text, status)) is not None:
        return {**base, "ktap": text, **ended}
    if content is None:
        return {**base, "kind": Kind.ERROR, "ktap": text, "reason": "its dump is not in the LAVA job's log"}
    return {**base, "kind": Kind.DUMP, "ktap": text, "dump": content}


def file_of(lines: list[str], after: int, name: str) -> str | None:
    """The file a check left, as the guest printed it after its END line
    (base64 of gzip; lines of the kernel's own among it are left out), checked
    against its md5sum; None if it printed none."""
    i = next((j for j in range(after + 1, len(lines)) if (m := FILE.match(lines[j])) and m.group(1) == name), None)
    if i is None:
        return None
    m = FILE.match(lines[i])
    assert m is not None
    j = next((k for k in range(i + 1, len(lines)) if (e := FILE_END.match(lines[k])) and e.group(1) == name), None)
    if j is None:
        raise UsageError(f"{name}: the LAVA job's log ends inside its file (FOLIOFARM-FILE without -END)")
    data = "".join(ln.strip() for ln in lines[i + 1:j] if B64.match(ln.strip()))
    try:
        raw = gzip.decompress(base64.b64decode(data))
    except (ValueError, OSError, EOFError, zlib.error) as exc:
        raise UsageError(f"{name}: its file in the LAVA job's log does not decode ({exc})") from None
    if len(raw) != int(m.group(2)) or hashlib.md5(raw).hexdigest() != m.group(3):
        raise UsageError(f"{name}: its file in the LAVA job's log is damaged (size or md5 differ)")
    return raw.decode(errors="replace")


def parsed(parser: Any, text: str) -> dict[str, Any]:
    run = ktap.parse(text, parser)
    return {"results": [r.as_dict() for r in run.results], "planned": run.planned,
            "complete": run.complete, "parser_errors": run.errors[:20], "parser": "kunit_parser"}


def read_jobs(job_dirs: list[Path], out: Path, command: list[str]) -> Path:
    """Judge the LAVA jobs in ``job_dirs`` (each with its job.yaml and lava.log)
    into a results folder under ``out``; returns the run's folder."""
    from foliofarm.intake import source
    parser = None
    writer = ResultsWriter(out, command)
    known = catalogue.catalogue()
    sides: dict[str, Any] = {}
    for d in job_dirs:
        job = yaml.safe_load((d / "job.yaml").read_text())
        meta = job.get("metadata") or {}
        if not (d / LOG).is_file():
            raise UsageError(f"{d} has no {LOG}: save the LAVA job's log there (lava-run's standard "
                             "error, or the server's job log)")
        page, fs, kernel = meta["foliofarm.page_size"], meta["foliofarm.fs"], meta["foliofarm.kernel"]
        cell = Cell(matrix.page_sizes()[page], matrix.filesystems()[fs], kernel)
        if meta.get("foliofarm.side"):
            sides[meta["foliofarm.side"]] = {"kernel": kernel, "origin": meta.get("foliofarm.origin", kernel)}
        lines = console(entries(d / LOG))
        all_splats: list[str] = []
        for name in meta["foliofarm.checks"].split(","):
            chk = known[name]
            if chk.options.get("kind") == "selftests" and parser is None:
                parser = ktap.load_parser(ktap.parser_dir(cache_dir(), lambda: source.resolve(
                    f"debian:{ktap.PARSER_KERNEL}", cache_dir()).tree))
            m = measurement(lines, chk, parser)
            all_splats += m.get("splats", [])
            cdir = writer.cell_dir(cell)
            for key, suffix in (("ktap", "ktap"), ("dump", "dump")):
                if m.get(key):
                    (cdir / f"{name}.{suffix}").write_text(m[key])
            writer.record(cell, judge_measurement(chk, m, meta["foliofarm.kernel_xy"], page, fs),
                          excerpt=m.get("excerpt", ""))
        writer.record(cell, console_outcome(list(dict.fromkeys(all_splats))))
        writer.add("boots", {"page_size": page, "kernel": kernel, "fs": fs, "attempt": 1,
                             "console_log": str(d / LOG), "qemu": f"LAVA job {job.get('job_name')}"})
    if {"base", "series"} <= set(sides):
        writer.doc["sides"] = sides
    writer.finish(True)
    return writer.dir

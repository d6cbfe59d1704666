"""`foliofarm report --lava DIR...`: LAVA jobs the farm wrote (`foliofarm
lava`), run by a lab or by lava-run, judged from their logs into a results
folder `foliofarm report` renders: each check's framed output read back
(lava/log.py, boot/framed.py) into the measurement the farm's own boot would
have made, judged by the same code with the same expectations; jobs of a run's
base and series sides are judged base against series."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from foliofarm import matrix
from foliofarm.boot.framed import measurement
from foliofarm.errors import UsageError
from foliofarm.judge import catalogue, ktap
from foliofarm.judge.checks import console_outcome, judge_measurement
from foliofarm.lava.log import LOG, console, entries
from foliofarm.paths import cache_dir
from foliofarm.results.schema import BootEntry, Sides
from foliofarm.results.writer import ResultsWriter
from foliofarm.run.closing import close


def read_jobs(job_dirs: list[Path], out: Path, command: list[str]) -> Path:
    """Judge the LAVA jobs in ``job_dirs`` (each with its job.yaml and lava.log)
    into a results folder under ``out``; returns the run's folder."""
    from foliofarm.intake import source
    parser = None
    writer = ResultsWriter(out, command)
    known = catalogue.by_name()
    sides: dict[str, Any] = {}
    for d in job_dirs:
        job = yaml.safe_load((d / "job.yaml").read_text())
        meta = job.get("metadata") or {}
        if not (d / LOG).is_file():
            raise UsageError(f"{d} has no {LOG}: save the LAVA job's log there (lava-run's standard "
                             "error, or the server's job log)")
        page, fs, kernel = meta["foliofarm.page_size"], meta["foliofarm.fs"], meta["foliofarm.kernel"]
        cell = matrix.cell_of(page, fs, kernel)
        if meta.get("foliofarm.side"):
            sides[meta["foliofarm.side"]] = {"kernel": kernel, "origin": meta.get("foliofarm.origin", kernel)}
        lines = console(entries(d / LOG))
        all_splats: list[str] = []
        for name in meta["foliofarm.checks"].split(","):
            chk = known[name]
            if chk.tree == "selftests" and parser is None:
                parser = ktap.load_parser(ktap.parser_dir(cache_dir(), lambda: source.resolve(
                    f"debian:{ktap.PARSER_KERNEL}", cache_dir()).tree))
            m = measurement(lines, chk, parser)
            all_splats += m.splats
            cdir = writer.cell_dir(cell)
            for text, suffix in ((m.ktap, "ktap"), (m.dump, "dump")):
                if text:
                    (cdir / f"{name}.{suffix}").write_text(text)
            writer.record(cell, judge_measurement(chk, m, cell, meta["foliofarm.kernel_xy"]), excerpt=m.excerpt)
        writer.record(cell, console_outcome(list(dict.fromkeys(all_splats))))
        writer.add_boot(BootEntry(page_size=page, kernel=kernel, fs=fs, attempt=1, console_log=str(d / LOG),
                                  qemu=f"LAVA job {job.get('job_name')}"))
    if {"base", "series"} <= set(sides):
        writer.set_sides(Sides.model_validate(sides))
    close(writer, True)
    return writer.dir

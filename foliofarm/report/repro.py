"""repro.sh in each cell's results folder: re-runs just that cell with the same
inputs (kernel, series or compared kernel, checks, config, guest), booting
afresh, from the checkout that made the results."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path
from typing import Any

from foliofarm.paths import ROOT
from foliofarm.results.schema import Results
from foliofarm.util import UMASK, write_atomic


def _spec(value: str) -> str:
    """A path given relative to where the run started, made absolute; other
    specs (debian:X.Y, BASE..TIP, PATH@REF) as given."""
    p = Path(value).expanduser()
    if value.startswith("debian:") or not p.exists():
        return value
    return str(p.resolve())


def argv(opts: Any, page: str, fs: str) -> list[str]:
    out = [sys.executable, "-m", "foliofarm", "run", "--kernel", _spec(opts.kernel),
           "--cells", f"{page}-{fs}",
           "--variant", opts.variant, "--accel", opts.accel,
           "--tcg-threads", getattr(opts, "tcg_threads", "single"),
           *(["--tcg-cpu", opts.tcg_cpu] if getattr(opts, "tcg_cpu", None) else []),
           "--cpus", str(opts.cpus),
           "--memory", str(opts.memory_mb), "--numa-nodes", str(opts.numa_nodes),
           "--boot-timeout", f"{opts.boot_timeout:g}", "--fresh"]
    named = [c.name for c in opts.checks if c.name != "repro"]
    if named or getattr(opts, "repro", None) is None:
        out += ["--checks", ",".join(named)]
    if getattr(opts, "repro", None) is not None:   # the reproducer adds its own check
        out += ["--repro", _spec(str(opts.repro))]
        if opts.repro_args:
            out += ["--repro-args", opts.repro_args]
        if getattr(opts, "repro_seconds", None):
            out += ["--repro-timeout", str(opts.repro_seconds)]
    for item in opts.extra_config:
        out += ["-K", item]
    if opts.series:
        out += ["--series", _spec(opts.series)]
    if opts.compare:
        out += ["--compare", _spec(opts.compare)]
    if getattr(opts, "lab", None) is not None:      # the token stays where it was (file or environment)
        out += ["--lab", opts.lab.api.url, "--lab-device-type", opts.lab.device_type]
    elif getattr(opts, "boot_with", "qemu") != "qemu":
        out += ["--boot-with", opts.boot_with]
    return out


def write(run_dir: Path, doc: Results, opts: Any) -> list[Path]:
    """One repro.sh per cell of ``doc``; a series run's two sides share theirs."""
    written = []
    for cell in doc.cells:
        cdir = run_dir / "cells" / cell.id
        cdir.mkdir(parents=True, exist_ok=True)
        cmd = argv(opts, cell.page_size, cell.fs)
        script = (
            "#!/bin/sh\n"
            f"# Re-runs cell {cell.page_size}-{cell.fs} of foliofarm run {doc.run_id} with the\n"
            "# same inputs (kernel, series, checks, config, guest), booting afresh.\n"
            "# Results go to $RESULTS (default: repro/ beside this script); extra\n"
            "# arguments are passed to foliofarm run.\n"
            f"here=$(cd \"$(dirname \"$0\")\" && pwd)\n"
            f"cd {shlex.quote(str(ROOT))} || exit 3\n"
            f"exec {shlex.join(cmd)} --results \"${{RESULTS:-$here/repro}}\" \"$@\"\n")
        f = cdir / "repro.sh"
        write_atomic(f, script)
        os.chmod(f, 0o777 & ~UMASK)
        written.append(f)
    return written

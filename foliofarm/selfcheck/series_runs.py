"""make bench's pre-submit runs, kept as each ends. RESULTS/bench-series.json
names `make run`'s own run and each series run (its seconds, exit status and
results folder), written when a run ends, so that a bench stopped part way
keeps what it had, and `--resume` goes on from there: each run named is read
back from its folder's results.json (and judged again), and a run whose folder
is gone is run again."""

from __future__ import annotations

import json
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from foliofarm.errors import InfraError
from foliofarm.judge import catalogue
from foliofarm.results.schema import Results
from foliofarm.run import child
from foliofarm.util import write_json

FILE = "bench-series.json"


@dataclass
class Timed:
    seconds: float
    rc: int
    doc: Results
    folder: Path           # the run's own folder (its results.json)

    def parts(self) -> tuple[float, int, Results]:
        return self.seconds, self.rc, self.doc


def entry(t: Timed | None) -> dict[str, Any] | None:
    return None if t is None else {"seconds": round(t.seconds, 1), "exit": t.rc, "results": str(t.folder)}


def save(path: Path, kernel: str, base: Timed | None, runs: list[Timed]) -> None:
    """The runs so far, written whole (a killed bench leaves the last). A run
    killed by a signal (exit < 0: the bench was stopped) is not kept: the
    bench stops, and --resume makes that run again."""
    stopped = [r for r in [base, *runs] if r is not None and r.rc < 0]
    runs = [r for r in runs if r.rc >= 0]
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json(path, {"kernel": kernel, "make_run": entry(base if base and base.rc >= 0 else None),
                      "runs": [entry(r) for r in runs]})
    if stopped:
        raise SystemExit(f"foliofarm-bench: a run was stopped (exit {stopped[0].rc}, {stopped[0].folder}); "
                         "`make bench BENCH_ARGS='--series-only --resume'` makes it again")


def timed(e: dict[str, Any] | None, lost: list[str]) -> Timed | None:
    if e is None:
        return None
    doc = child.read_back(Path(e["results"]))
    if doc is None:
        lost.append(e["results"])
        return None
    return Timed(float(e["seconds"]), int(e["exit"]), doc, Path(e["results"]))


def load(path: Path, kernel: str) -> tuple[Timed | None, list[Timed], list[str]]:
    """What an earlier bench of ``kernel`` kept: make run's run, the series
    runs, and the folders named but gone (those runs are made again)."""
    if not path.exists():
        return None, [], []
    try:
        d = json.loads(path.read_text())
        had = d["kernel"], d["make_run"], list(d["runs"])
    except (ValueError, KeyError, TypeError) as e:
        raise InfraError(f"{path} cannot be read ({e}): remove it to bench from the start") from e
    if had[0] != kernel:
        raise InfraError(f"{path} holds runs of kernel {had[0]}, not {kernel}: "
                         f"bench --kernel {had[0]} --resume, or remove it to bench {kernel} from the start")
    lost: list[str] = []
    base = timed(had[1], lost)
    runs = [t for e in had[2] if (t := timed(e, lost)) is not None]
    return base, runs, lost


def timed_run(args: list[str], env: dict[str, str] | None = None,
              check_names: str | None = None) -> Timed:
    """One `foliofarm run` (the farm's own checks unless ``check_names``;
    "" for the default, every check) timed from start to exit: (seconds,
    exit status, its results) and its folder."""
    results = Path(tempfile.mkdtemp(prefix="ffbench-"))
    chosen = catalogue.own() if check_names is None else check_names
    t0 = time.monotonic()
    rc, doc = child.run_to_end([*(["--checks", chosen] if chosen else []), *args], results,
                        env=dict(os.environ, **(env or {})))
    seconds = time.monotonic() - t0
    if doc is None or rc is None:
        raise InfraError(f"`foliofarm run {' '.join(args)}` left no results (exit {rc}) in {results}")
    return Timed(seconds, rc, doc, (results / "latest").resolve())


def final_after(doc: Results, part: str) -> float | None:
    """When the run's ``part`` (the own checks, the touched selftests) was
    final (its milestone), in seconds."""
    return next((m.seconds for m in doc.milestones if m.part == part), None)

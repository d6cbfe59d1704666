"""make bench --series-only: the verdict by reach, one series per mm area.

Each series of tests/bench/areas.toml (the page cache's readahead, khugepaged,
arm64's contiguous PTEs: a change in one function and none in behaviour, made
unique to the run so that it compiles for real) runs against the base as
`make run` leaves it, every default check, on the full matrix: once with
selection (the mm selftests it reaches on the base's coverage map: coverage/)
and once with `--selftests all`, ``runs`` times each. Per series and mode:
the whole verdict (the median), when the farm's own checks' verdict was
final, the selftests each page size ran and why the rest did not, the guests'
CPU work over the cores (the work limit), and the ratios to the targets.

The runs are named in RESULTS/bench-areas.json as each ends, each run's
results.json kept gzipped beside it (RESULTS/bench-areas/); `--resume` goes on
from there (a run whose folder and kept copy are both gone is made again). The
kept copies let the medians span machines: bench-areas.json and its folder,
copied into another machine's RESULTS, are read back there."""

from __future__ import annotations

import gzip
import json
import tempfile
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from foliofarm import shown
from foliofarm.errors import InfraError
from foliofarm.intake import source
from foliofarm.measure import schedule
from foliofarm.measure.milestone import OWN
from foliofarm.paths import cache_dir
from foliofarm.results.schema import Results
from foliofarm.run import child
from foliofarm.selfcheck import patches
from foliofarm.selfcheck.series_runs import Timed, final_after, timed_run
from foliofarm.util import write_json

FILE = "bench-areas.json"
KEPT = "bench-areas"          # beside it: each run's results.json, gzipped
MODES = {"reached": [], "all": ["--selftests", "all"]}
# the whole verdict's targets: a series in the page cache's core, in one area
TARGET_S = {"readahead": 480.0}
AREA_TARGET_S = 300.0
OWN_LIMIT_RATIO = 1.2


def selected(doc: Results) -> dict[str, dict[str, Any]]:
    """Per page size: the selftests the series' side ran by reach and those it
    did not, or why every one ran."""
    out: dict[str, dict[str, Any]] = {}
    for r in (doc.series.reached if doc.series else []):
        out[r.page_size] = ({"everything": r.everything} if r.everything else
                            {"ran": len(r.run), "not_reached": len(r.not_reached),
                             "ran_names": sorted(r.run), **({"map": r.map} if r.map else {})})
    return out


def entry(t: Timed) -> dict[str, Any]:
    work = sum(float(b.cpu_seconds) for b in t.doc.boots if b.cpu_seconds is not None)
    verdicts: dict[str, int] = {}
    for v in t.doc.verdicts:
        if not v.subtest_of:
            verdicts[v.verdict] = verdicts.get(v.verdict, 0) + 1
    jobs = schedule.jobs_of(t.doc.boots)
    plans = {p.cores: p for p in schedule.for_hosts(jobs, 4096, (16,))} if jobs else {}
    own = sum(float(b.cpu_seconds) for b in t.doc.boots
              if b.cpu_seconds is not None and b.part == "own" and "+series" in b.kernel)
    return {"seconds": round(t.seconds, 1), "exit": t.rc, "results": str(t.folder),
            "own_seconds": final_after(t.doc, OWN), "guest_cpu_seconds": round(work, 1),
            "own_cpu_seconds": round(own, 1),
            # the planner from this run's parts: the whole verdict on a 16-core host
            "planned_16_cores_seconds": round(plans[16].wall, 1) if 16 in plans else None,
            "planned_16_cores_bound_seconds": round(plans[16].bound(jobs), 1) if 16 in plans else None,
            "selected": selected(t.doc), "verdicts": verdicts,
            "incremental_build_seconds": {k.page_size: k.build_seconds for k in t.doc.kernels
                                          if k.side == "series" and k.built_now}}


def keep(t: Timed, results: Path, name: str) -> str:
    """A copy of the run's results.json, gzipped, in RESULTS/bench-areas/:
    its name there, relative to RESULTS."""
    rel = f"{KEPT}/{name.replace(' ', '-')}.json.gz"
    (results / KEPT).mkdir(parents=True, exist_ok=True)
    data = (t.folder / "results.json").read_bytes()
    (results / rel).write_bytes(gzip.compress(data, mtime=0))
    return rel


def readable(e: dict[str, Any], results: Path) -> bool:
    """The run ``e`` reads back: from its folder, or from its kept copy."""
    return (child.read_back(Path(e["results"])) is not None or
            (bool(e.get("kept")) and child.read_back(results / e["kept"]) is not None))


def load(path: Path) -> dict[str, list[dict[str, Any]]]:
    """The runs an earlier bench kept, less those that read back from
    neither their folder nor their kept copy."""
    if not path.exists():
        return {}
    try:
        kept = json.loads(path.read_text())["runs"]
    except (ValueError, KeyError, TypeError) as e:
        raise InfraError(f"{path} cannot be read ({e}): remove it to bench the areas from the start") from e
    return {k: [e for e in v if readable(e, path.parent)] for k, v in kept.items()}


def run_areas(ui: Console, kernel: str, results: Path, runs: int, resume: bool,
              cores: int) -> dict[str, Any]:
    """Every area series in both modes, ``runs`` times each, kept as each ends."""
    kept = results / FILE
    done = load(kept) if resume else {}
    tree = source.resolve(kernel, cache_dir()).tree
    if not done.get("base"):
        # the base as `make run` leaves it (--noise: two clean boots): every
        # cell not saved yet measured, so that no series run below measures it
        ui.log(shown.rich_text(f"the base {kernel}, every default check (what is saved is reused)"))
        t = timed_run(["--kernel", kernel, "--noise"], check_names="")
        done["base"] = [{"seconds": round(t.seconds, 1), "exit": t.rc, "results": str(t.folder)}]
        write_json(kept, {"kernel": kernel, "runs": done})
    for mode, extra in MODES.items():          # every area with selection first
        for row in patches.areas():
            key = f"{row['name']} {mode}"
            while len(done.get(key, [])) < runs:
                ui.log(shown.rich_text(f"area {row['name']} ({row['area']}), selftests {mode}: "
                                       f"run {len(done.get(key, [])) + 1} of {runs}"))
                with tempfile.TemporaryDirectory(prefix="ffarea-") as tmp:
                    series = patches.unique_area_patch(tree, row, Path(tmp))
                    t = timed_run(["--kernel", kernel, "--series", str(series), *extra], check_names="")
                if t.rc < 0:
                    raise SystemExit(f"foliofarm-bench: a run was stopped ({t.folder}); "
                                     "`make bench BENCH_ARGS='--series-only --resume'` makes it again")
                e = entry(t)
                e["kept"] = keep(t, results, f"{key} {len(done.get(key, [])) + 1}")
                done.setdefault(key, []).append(e)
                write_json(kept, {"kernel": kernel, "runs": done})
    return area_figures(done, cores)


def median(xs: list[float]) -> float | None:
    xs = sorted(x for x in xs if x is not None)
    return xs[len(xs) // 2] if xs else None


def area_figures(done: dict[str, list[dict[str, Any]]], cores: int) -> dict[str, Any]:
    """Per area and mode, the medians and their ratios; per area, what
    selection saved (the all mode's median over the reached mode's)."""
    out: dict[str, Any] = {}
    for row in patches.areas():
        target = TARGET_S.get(row["name"], AREA_TARGET_S)
        area: dict[str, Any] = {"area": row["area"], "target_seconds": target}
        for mode in MODES:
            rs = done.get(f"{row['name']} {mode}", [])
            if not rs:
                continue
            sec = median([r["seconds"] for r in rs])
            mid = min(rs, key=lambda r: abs(r["seconds"] - sec))
            own_s = median([r["own_seconds"] for r in rs])
            # the own checks' limit: the series' incremental builds one after
            # another (each takes both cores), then its own boots' CPU over the cores
            own_limit = sum(mid["incremental_build_seconds"].values()) + mid["own_cpu_seconds"] / cores
            area[mode] = {"seconds": sec, "runs_seconds": [r["seconds"] for r in rs],
                          "ratio_to_target": round(sec / target, 2),
                          "own_seconds": own_s, "own_limit_seconds": round(own_limit, 1),
                          "own_ratio_to_limit": round(own_s / own_limit, 2) if own_s and own_limit else None,
                          "own_limit_target_ratio": OWN_LIMIT_RATIO,
                          "work_limit_seconds": round(mid["guest_cpu_seconds"] / cores, 1),
                          "ratio_to_work_limit": round(sec / (mid["guest_cpu_seconds"] / cores), 2)
                          if mid["guest_cpu_seconds"] else None,
                          "planned_16_cores_seconds": mid.get("planned_16_cores_seconds"),
                          "planned_16_cores_bound_seconds": mid.get("planned_16_cores_bound_seconds"),
                          "selected": mid["selected"], "verdicts": mid["verdicts"],
                          "exit": max(r["exit"] for r in rs),
                          "incremental_build_seconds": mid["incremental_build_seconds"]}
        if "reached" in area and "all" in area:
            area["all_over_reached"] = round(area["all"]["seconds"] / area["reached"]["seconds"], 2)
        out[row["name"]] = area
    return out


def rows(t: Table, report: dict[str, Any]) -> None:
    """bench.json's areas as rows of the bench's table."""
    for name, a in report.items():
        for mode in MODES:
            m = a.get(mode)
            if not m:
                continue
            sel = "; ".join(f"{p}: every selftest ({s['everything'][:60]})" if "everything" in s
                            else f"{p}: {s['ran']} ran, {s['not_reached']} not reached"
                            for p, s in m["selected"].items()) or "no selection (--selftests all)"
            said = [f"{m['seconds']} s, median of {m['runs_seconds']} (target {a['target_seconds']:.0f} s, "
                    f"ratio {m['ratio_to_target']})",
                    f"own checks {m['own_seconds']} s ({m['own_ratio_to_limit']} of its limit "
                    f"{m['own_limit_seconds']} s, target {OWN_LIMIT_RATIO})",
                    f"work limit {m['work_limit_seconds']} s (ratio {m['ratio_to_work_limit']})",
                    f"16 cores by the planner {m['planned_16_cores_seconds']} s "
                    f"(bound {m['planned_16_cores_bound_seconds']} s)", sel, f"verdicts {m['verdicts']}"]
            t.add_row(shown.rich_text(f"area {name}, selftests {mode}"), shown.rich_text("; ".join(said)))
        if "all_over_reached" in a:
            t.add_row(shown.rich_text(f"area {name}: all / reached"), shown.rich_text(str(a["all_over_reached"])))

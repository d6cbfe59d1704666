"""make bench: how long the farm takes, as ratios against the work it wraps.

- warm re-run of the full matrix with nothing changed (target: under 30 s, no build,
  the clean boots' measurements reused and judged again), and the same with --fresh
  (every kernel booted, every check run again);
- per kernel: the farm's build time (recorded when it was built, cold) beside the
  time of a raw `make` of the same config and tree; with --cold a raw cold
  `make Image` of each config is timed now, in a fresh O= directory without
  ccache, and a whole cold run of the matrix in a cache that holds only the
  downloads (every build, ccache entry, image and boot anew): the ratio of the
  run to the three raw makes (target: within 1.1x);
- per kernel: the farm's warm path (artifact lookup) beside a raw no-op `make`
  in its build directory: the farm's overhead when nothing changed;
- boot-to-ready time per page size, and where the --fresh re-run's time went
  (images, builds, boots, checks, dump transfer, judging, report, and how far they
  overlapped); each check's guest time per page size;
- pre-submit: time from `foliofarm run --series` to the whole verdict, every
  default check (the kernel's mm selftests included), for a two-patch mm series
  (benign.mbox made unique, so that mm/filemap.c really recompiles, and
  touch-thp.mbox, whose file names selftests in MAINTAINERS:
  selfcheck/patches.py) on the full matrix with the base as `make run` leaves it
  (target: under 300 s), the median of three runs, with where its time went
  and against the work it did (wall / (guest CPU seconds / cores)), its
  schedule (planned, replayed, real) and the planner's figure for 2 to 32
  cores; in the same runs, when the farm's own checks' verdict was final
  (under 30 s) and the selftests the patch touches (under 180 s); and the
  first series run after `make run` against that median (no base boots);
- the verdict by reach (selfcheck/areas.py): a series in each of three mm areas
  (readahead, khugepaged, contpte), with selection and with --selftests all
  (--series-only runs them after the two-patch series; --areas alone).

Results go to RESULTS/bench.json and a table on the terminal; the pre-submit runs are named in
RESULTS/bench-series.json as each ends (`--resume` goes on from them: selfcheck/series_runs.py)."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from foliofarm import matrix, shown
from foliofarm.intake import source
from foliofarm.kernel.build import Builder
from foliofarm.measure import schedule
from foliofarm.measure.first import TOUCHED
from foliofarm.measure.milestone import OWN
from foliofarm.paths import ROOT, cache_dir
from foliofarm.results.schema import Results
from foliofarm.selfcheck import areas, series_runs
from foliofarm.selfcheck.patches import unique_mm_patch
from foliofarm.selfcheck.series_runs import Timed, final_after, timed_run
from foliofarm.util import write_json

WARM_TARGET_S = 30.0
SERIES_TARGET_S = 300.0      # the whole verdict, every check
OWN_TARGET_S = 30.0          # the farm's own checks' verdict
TOUCHED_TARGET_S = 180.0     # the selftests the series touches
SERIES_RUNS = 3


def breakdown(doc: Results, wall_s: float) -> dict[str, float]:
    """Seconds per stage of the work one run did, from its results.json: disk
    images, kernel builds, boots to the shell, the guest programs, moving dumps
    to the host, judging, the report (cells whose saved measurements were reused
    count only for judging). Builds overlap boots and two guests run at once,
    so the stages add up to more than the wall time: "overlap" is their sum
    over the wall time; "unaccounted" the wall time no stage covers at all
    when the stages are laid end to end (0 when they overlap)."""
    stages = doc.stages
    reused = {(b.kernel, b.page_size) for b in doc.boots if b.reused}
    checks = [c.metrics for cell in doc.cells
              if (cell.kernel, cell.page_size) not in reused for c in cell.checks]
    out = {
        "images": stages.get("images_s", 0.0),
        "builds": sum(k.build_seconds or 0 for k in doc.kernels if k.built_now),
        "boots": sum(b.boot_seconds or 0 for b in doc.boots if not b.reused),
        "checks": sum(m.get("guest_seconds") or 0 for m in checks),
        "dump transfer": sum(m.get("transfer_seconds") or 0 for m in checks),
        "judging": stages.get("judge_s", 0.0),
        "report": stages.get("report_s", 0.0),
    }
    out = {k: round(v, 1) for k, v in out.items()}
    busy = sum(out.values())
    out["wall"] = round(wall_s, 1)
    out["overlap"] = round(busy / wall_s, 2) if wall_s else 0.0
    out["unaccounted"] = round(max(0.0, wall_s - busy), 1)
    return out


def raw_make(builder: Builder, src: source.KernelSource, bdir: Path, use_ccache: bool,
             targets: tuple[str, ...] = ("Image", "modules")) -> float:
    env = dict(os.environ, ARCH="arm64", CROSS_COMPILE="aarch64-linux-gnu-")
    argv = builder.make_argv(src, bdir, *targets)
    if not use_ccache:
        argv = [a if not a.startswith("CC=") else "CC=aarch64-linux-gnu-gcc" for a in argv]
    t0 = time.monotonic()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.monotonic() - t0


# What a cold run may take from the warm cache: what was downloaded and
# unpacked (Debian's packages and the kernel source), never what the farm makes.
DOWNLOADED = ("apt", "debs", "src")
COLD_TARGET_RATIO = 1.1


def cold_run(ui: Console, kernel: str, cache: Path, warm_s: float, raw_s: float) -> dict:
    """The full matrix in a cache holding only the downloads (DOWNLOADED): every
    kernel, ccache entry, guest program, image and measurement made anew, set
    beside raw cold makes of the same three configs (``raw_s``, their sum)."""
    with tempfile.TemporaryDirectory(prefix="ffcold-") as tmp:
        for name in DOWNLOADED:
            if (cache / name).exists():
                (Path(tmp) / name).symlink_to(cache / name)
        ui.log("cold run: every build, image and boot anew (downloads reused)")
        cold_s, cold_rc, doc = timed_run(["--kernel", kernel], env={"FOLIOFARM_CACHE": tmp}).parts()
    ratio = cold_s / raw_s if raw_s else None
    return {"seconds": round(cold_s, 1), "exit": cold_rc, "raw_cold_makes_s": round(raw_s, 1),
            "ratio_to_raw_makes": round(ratio, 3) if ratio else None,
            "target_ratio": COLD_TARGET_RATIO,
            "ratio_warm_to_cold": round(warm_s / cold_s, 4),
            "breakdown": breakdown(doc, cold_s)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="foliofarm selfcheck bench", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernel", default=matrix.defaults()["kernel"])
    ap.add_argument("--results", type=Path, default=ROOT / "results" / "bench")
    ap.add_argument("--cold", action="store_true",
                    help="also time a cold run in a fresh cache and raw cold makes (slow: "
                         "three kernel builds twice)")
    ap.add_argument("--series-only", action="store_true",
                    help="only the pre-submit figures (make run, then the series runs): about an hour")
    ap.add_argument("--areas", action="store_true",
                    help="only the area series (tests/bench/areas.toml), with selection and with "
                         "--selftests all: hours on two cores")
    ap.add_argument("--area-runs", type=int, default=3, help="runs of each area series in each mode")
    ap.add_argument("--resume", action="store_true",
                    help=f"go on from the runs RESULTS/{series_runs.FILE} names (a bench stopped part way)")
    args = ap.parse_args(argv)
    ui = Console()
    report: dict = {"kernel": args.kernel, "machine": {"cpus": os.cpu_count()}}
    kept = args.results / series_runs.FILE
    if args.areas or args.series_only:
        if args.series_only:
            report["series_to_verdict"] = series_to_verdict(ui, args.kernel, kept, args.resume)
        report["areas"] = areas.run_areas(ui, args.kernel, args.results, args.area_runs, args.resume,
                                          os.cpu_count() or 1)
        args.results.mkdir(parents=True, exist_ok=True)
        write_json(args.results / "bench.json", report)
        ui.print(table(report))
        ui.log(shown.rich_text(f"written {args.results / 'bench.json'}"))
        return 0 if report.get("series_to_verdict", {}).get("exit", 0) == 0 and all(
            m["exit"] == 0 for a in report["areas"].values() for m in (a.get("reached"), a.get("all")) if m) else 1
    warm = warm_runs(ui, args.kernel, report)
    cache = cache_dir()
    report["kernels"] = kernel_builds(ui, args.kernel, cache, warm, args.cold)
    report["series_to_verdict"] = series_to_verdict(ui, args.kernel, kept, args.resume)
    if args.cold:
        report["cold_run"] = cold_run(ui, args.kernel, cache, report["warm_run"]["seconds"],
                                      sum(k["raw_cold_make_s"] for k in report["kernels"]))
    args.results.mkdir(parents=True, exist_ok=True)
    write_json(args.results / "bench.json", report)
    ui.print(table(report))
    ui.log(shown.rich_text(f"written {args.results / 'bench.json'}"))
    ok = (report["warm_run"]["exit"] == report["warm_fresh_run"]["exit"] == 0
          and not report["warm_run"]["rebuilt"] and report["series_to_verdict"]["exit"] == 0)
    return 0 if ok else 1


def warm_runs(ui: Console, kernel: str, report: dict) -> dict:
    """Make sure the matrix is built, then time a warm re-run with nothing
    changed and one that boots every kernel again (--fresh); the warm run's
    results."""
    ui.log("priming: one full run so that everything is cached")
    prime_s, prime_rc, prime = timed_run(["--kernel", kernel]).parts()
    report["prime_run"] = {"seconds": round(prime_s, 1), "exit": prime_rc,
                           "built": [k.page_size for k in prime.kernels if k.built_now]}
    ui.log("warm re-run of the full matrix")
    warm_s, warm_rc, warm = timed_run(["--kernel", kernel]).parts()
    rebuilt = [k.page_size for k in warm.kernels if k.built_now]
    report["warm_run"] = {"seconds": round(warm_s, 1), "exit": warm_rc, "rebuilt": rebuilt,
                          "target_seconds": WARM_TARGET_S,
                          "ratio_to_target": round(warm_s / WARM_TARGET_S, 2)}
    ui.log("warm re-run of the full matrix, every kernel booted again (--fresh)")
    fresh_s, fresh_rc, fresh = timed_run(["--kernel", kernel, "--fresh"]).parts()
    report["warm_fresh_run"] = {"seconds": round(fresh_s, 1), "exit": fresh_rc,
                                "ratio_to_reused": round(fresh_s / warm_s, 2)}
    boots: dict[str, list[float]] = {}
    for b in fresh.boots:
        if b.boot_seconds:
            boots.setdefault(b.page_size, []).append(b.boot_seconds)
    report["boot_to_ready"] = {p: round(sum(v) / len(v), 2) for p, v in boots.items()}
    report["fresh_breakdown"] = breakdown(fresh, fresh_s)
    # guest time of each check per page size (mean over the filesystems)
    per_check: dict[str, dict[str, list[float]]] = {}
    for cell in fresh.cells:
        for c in cell.checks:
            if "guest_seconds" in c.metrics:
                per_check.setdefault(c.name, {}).setdefault(cell.page_size, []).append(
                    c.metrics["guest_seconds"])
    report["check_seconds"] = {name: {p: round(sum(v) / len(v), 2) for p, v in pages.items()}
                               for name, pages in per_check.items()}
    return warm


def kernel_builds(ui: Console, kernel: str, cache: Path, warm: Results, cold: bool) -> list[dict]:
    """Per kernel: farm vs raw make. A first make brings the build directory
    to the tree as it is now (a series applied and reverted since rewrote the
    files it touched), the second is the no-op that is timed."""
    src = source.resolve(kernel, cache)
    builder = Builder(cache)
    kernels = []
    for k in warm.kernels:
        meta = json.loads((Path(k.artifacts or "") / "build.json").read_text())
        bdir = Path(meta["build_dir"])
        t0 = time.monotonic()
        builder.build(src, matrix.page_sizes()[k.page_size], meta["variant"])
        farm_warm = time.monotonic() - t0
        raw_make(builder, src, bdir, use_ccache=True)
        raw_noop = raw_make(builder, src, bdir, use_ccache=True)
        entry = {"page_size": k.page_size, "farm_cold_build_s": meta.get("seconds"),
                 "farm_warm_s": round(farm_warm, 2), "raw_noop_make_s": round(raw_noop, 1),
                 "warm_ratio": round(farm_warm / raw_noop, 3)}
        if cold:
            ui.log(shown.rich_text(f"raw cold `make -j{os.cpu_count()} Image` of the {k.page_size} config, no ccache"))
            with tempfile.TemporaryDirectory(prefix="ffraw-") as tmp:
                shutil.copy2(bdir / ".config", Path(tmp) / ".config")
                raw = raw_make(builder, src, Path(tmp), use_ccache=False, targets=("Image",))
            entry["raw_cold_make_s"] = round(raw, 1)
            entry["cold_overhead_ratio"] = round((meta.get("seconds") or 0) / raw, 3)
        kernels.append(entry)
    return kernels


def series_to_verdict(ui: Console, kernel: str, kept: Path, resume: bool = False) -> dict:
    """Pre-submit, every default check (the kernel's mm selftests included): a
    two-patch mm series (selfcheck/patches.py) against the base as `make run` leaves it, to verdict.
    First `make run`'s own run (every cell measured afresh, twice: --noise),
    then SERIES_RUNS + 1 series runs, each with a patch of its own: the first
    is the first series after make run, the median of the others the series
    verdict time (two cores shared by make and two guests make single runs
    vary), and in each the moment the farm's own checks' verdict was final.
    Each run is named in ``kept`` as it ends; ``resume`` goes on from there."""
    base, runs, lost = series_runs.load(kept, kernel) if resume else (None, [], [])
    for folder in lost:
        ui.log(shown.rich_text(f"{kept} names {folder}, which is gone: that run is made again"))
    if base is None:
        ui.log("make run: the base measured afresh, booted twice for its noise, every check")
        base = timed_run(["--kernel", kernel, "--fresh", "--noise"], check_names="")
        series_runs.save(kept, kernel, base, runs)
    for i in range(len(runs), SERIES_RUNS + 1):
        ui.log(shown.rich_text(f"series run {i + 1} of {SERIES_RUNS + 1}: a two-patch mm series, every check, full matrix"))
        with tempfile.TemporaryDirectory(prefix="ffseries-") as tmp:
            runs.append(timed_run(["--kernel", kernel, "--series", str(unique_mm_patch(Path(tmp), touching=True))],
                                  check_names=""))
        series_runs.save(kept, kernel, base, runs)
    return series_figures(base, runs)


def series_figures(base: Timed, runs: list[Timed]) -> dict:
    """The figures: the first series run after make run, the rest's median, and where its time went."""
    first, rest = runs[0], runs[1:]
    med = sorted(rest, key=lambda r: r.seconds)[len(rest) // 2]
    ser_s, ser = med.seconds, med.doc
    owns, touched = (sorted(x for r in rest if (x := final_after(r.doc, part)) is not None) for part in (OWN, TOUCHED))
    own_s, touched_s = (xs[len(xs) // 2] if xs else None for xs in (owns, touched))
    verdicts: dict[str, int] = {}
    for v in ser.verdicts:
        if not v.subtest_of:
            verdicts[v.verdict] = verdicts.get(v.verdict, 0) + 1
    return {"make_run_seconds": round(base.seconds, 1), "make_run_exit": base.rc,
            "seconds": round(ser_s, 1), "exit": max(r.rc for r in runs),
            "runs_seconds": [round(r.seconds, 1) for r in rest], "target_seconds": SERIES_TARGET_S,
            "ratio_to_target": round(ser_s / SERIES_TARGET_S, 2),
            "own_seconds": own_s, "own_runs_seconds": owns, "own_target_seconds": OWN_TARGET_S,
            "own_ratio_to_target": own_s and round(own_s / OWN_TARGET_S, 2), "touched_seconds": touched_s,
            "touched_runs_seconds": touched, "touched_ratio_to_target": touched_s and round(touched_s / TOUCHED_TARGET_S, 2),
            "first_after_make_run_seconds": round(first.seconds, 1),
            "first_ratio_to_median": round(first.seconds / ser_s, 2),
            "first_base_booted": sum(1 for b in first.doc.boots
                                     if not b.reused and "+series" not in b.kernel),
            "incremental_build_seconds": {k.page_size: k.build_seconds for k in ser.kernels
                                          if k.side == "series" and k.built_now},
            "base_reused": sum(1 for b in ser.boots if b.reused),
            "breakdown": breakdown(ser, ser_s),
            **work_limit(ser, ser_s),
            "verdicts": verdicts}


def work_limit(doc: Results, wall_s: float) -> dict:
    """The run against the work it did: its guests' CPU seconds over the
    host's cores is as fast as it could be here (wall / that: 1.0 is every
    core busy from start to end); where the guests' time went per part; the
    run's planned, replayed and real times (its schedule record); and the
    planner's expected time for hosts of 2 to 32 cores from its parts."""
    cores = os.cpu_count() or 1
    work = sum(float(b.cpu_seconds) for b in doc.boots if b.cpu_seconds is not None)
    parts: dict[str, float] = {}
    for b in doc.boots:
        if b.part and b.cpu_seconds is not None:
            parts[f"{b.page_size} {b.part}"] = round(parts.get(f"{b.page_size} {b.part}", 0) + b.cpu_seconds, 1)
    jobs = schedule.jobs_of(doc.boots)
    words = str(doc.machine.get("guest", "")).split(" MB")[0].split()     # "2 vCPU(s), 4096 MB, ..."
    mem = int(words[-1]) if words and words[-1].isdigit() else 4096
    return {"guest_cpu_seconds": round(work, 1), "cores": cores,
            "work_limit_seconds": round(work / cores, 1),
            "ratio_to_work_limit": round(wall_s / (work / cores), 2) if work else None,
            "guest_cpu_by_part": parts,
            "schedule": doc.schedule.model_dump() if doc.schedule else None,
            "planner": schedule.table(jobs, schedule.for_hosts(jobs, mem)) if jobs else []}


def table(report: dict) -> Table:
    """bench.json as a table of ratios and where the time went."""
    t = Table(title="foliofarm bench")
    t.add_column("measure")
    t.add_column("value")
    if "series_to_verdict" in report:
        series_rows(t, report["series_to_verdict"])
    areas.rows(t, report.get("areas", {}))
    if "warm_run" not in report:       # --series-only
        return t
    w, f = report["warm_run"], report["warm_fresh_run"]
    t.add_row("warm full-matrix re-run", shown.rich_text(f"{w['seconds']:.1f} s (target {WARM_TARGET_S:.0f} s, "
              f"ratio {w['ratio_to_target']:.2f}); rebuilt: {w['rebuilt'] or 'nothing'}"))
    t.add_row("warm re-run, every kernel booted (--fresh)",
              shown.rich_text(f"{f['seconds']:.1f} s ({f['ratio_to_reused']}x the reused re-run)"))
    t.add_row("  where its time went", shown.rich_text(", ".join(f"{k} {v} s" for k, v in report["fresh_breakdown"].items())))
    for p, s in report["boot_to_ready"].items():
        t.add_row(shown.rich_text(f"boot to ready {p}"), shown.rich_text(f"{s} s"))
    for name, pages in report["check_seconds"].items():
        t.add_row(shown.rich_text(f"check {name}"), shown.rich_text(", ".join(f"{p}: {s} s" for p, s in pages.items())))
    for k in report["kernels"]:
        t.add_row(shown.rich_text(f"kernel {k['page_size']}"),
                  shown.rich_text(f"farm cold build {k['farm_cold_build_s']} s; farm warm {k['farm_warm_s']} s vs raw "
                  f"no-op make {k['raw_noop_make_s']} s (ratio {k['warm_ratio']})"
                  + (f"; raw cold make {k['raw_cold_make_s']} s (overhead ratio "
                     f"{k['cold_overhead_ratio']})" if "raw_cold_make_s" in k else "")))
    if "cold_run" in report:
        c = report["cold_run"]
        t.add_row("cold full-matrix run", shown.rich_text(f"{c['seconds']} s against {c['raw_cold_makes_s']} s of raw "
                  f"cold makes of the three configs: ratio {c['ratio_to_raw_makes']} (target "
                  f"{COLD_TARGET_RATIO}); warm/cold {c['ratio_warm_to_cold']}"))
        t.add_row("  where its time went", shown.rich_text(", ".join(f"{k} {v} s" for k, v in c["breakdown"].items())))
    return t


def series_rows(t: Table, sv: dict) -> None:
    t.add_row("pre-submit: two-patch mm series to the whole verdict, every check",
              shown.rich_text(f"{sv['seconds']} s, median of {sv['runs_seconds']} (target {SERIES_TARGET_S:.0f} s, "
              f"ratio {sv['ratio_to_target']}); "
              f"incremental builds {sv['incremental_build_seconds']}; base reused on "
              f"{sv['base_reused']} page sizes; verdicts {sv['verdicts']}"))
    t.add_row("  the farm's own checks' verdict final after",
              shown.rich_text(f"{sv['own_seconds']} s, median of {sv['own_runs_seconds']} (target {OWN_TARGET_S:.0f} s, "
              f"ratio {sv['own_ratio_to_target']})"))
    t.add_row("  the touched selftests' verdict final after", shown.rich_text(f"{sv.get('touched_seconds')} s, median of "
              f"{sv.get('touched_runs_seconds')} (target {TOUCHED_TARGET_S:.0f} s, ratio {sv.get('touched_ratio_to_target')})"))
    t.add_row("  the first series after make run",
              shown.rich_text(f"{sv['first_after_make_run_seconds']} s ({sv['first_ratio_to_median']}x the median; "
              f"base cells booted again: {sv['first_base_booted']}); make run itself "
              f"{sv['make_run_seconds']} s"))
    t.add_row("  where its time went", shown.rich_text(", ".join(f"{k} {v} s" for k, v in sv["breakdown"].items())))
    if sv.get("ratio_to_work_limit"):
        t.add_row("  against the work it did", shown.rich_text(f"{sv['guest_cpu_seconds']} guest CPU seconds over {sv['cores']} "
                  f"cores: {sv['work_limit_seconds']} s; wall / that {sv['ratio_to_work_limit']}; by part "
                  + ", ".join(f"{k} {v} s" for k, v in sv["guest_cpu_by_part"].items())))
    if sv.get("schedule"):
        sc = sv["schedule"]
        t.add_row("  its schedule", shown.rich_text(f"planned {sc['planned_s']} s, replayed {sc['replayed_s']} s, "
                  f"real {sc['real_s']} s ({sc['own_guests']}+{sc['tree_guests']} guests)"))
    for row in sv.get("planner", [])[1:]:
        t.add_row(shown.rich_text(f"  planner: {row[0]} cores, {row[1]} guests"),
                  shown.rich_text(f"own checks {row[2]} s, whole {row[3]} s (bound {row[4]} s, ratio {row[5]})"))


if __name__ == "__main__":
    raise SystemExit(main())

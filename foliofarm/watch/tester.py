"""One series tested: `foliofarm run --series` as a child process
(run/child.py), and what it came to. The child runs in a session of its own
(its builds and guests with it), dies with the watcher (PR_SET_PDEATHSIG), and
its process group is recorded so that a watcher restarted after a kill can
stop what was left."""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from foliofarm.errors import UsageError
from foliofarm.paths import ROOT
from foliofarm.results import schema
from foliofarm.results.read import ResultsError, read
from foliofarm.run import child
from foliofarm.util import kill_group
from foliofarm.results.outcome import NEWS, Verdict

# How a run ended, for the watcher.
JUDGED, NOT_APPLIED, NOT_BUILT, INFRA = "judged", "not-applied", "not-built", "infra"
TIMED_OUT = "timed-out"          # stopped at the run's limit: not tried again
# Worst first: a page size's verdict is the worst of its cells' checks.
SEVERITY = (Verdict.BUILD_BROKEN, Verdict.REGRESSION, Verdict.ERROR, Verdict.INCOMPLETE, Verdict.CHANGED,
            Verdict.FAIL, Verdict.FLAKY, Verdict.XPASS, Verdict.FIXED, Verdict.XFAIL, Verdict.PASS, Verdict.SKIP, Verdict.NOT_REACHED)
# How the farm names a message of the series folder the watcher writes (loop.patch_folder).
SERIES_FILE = re.compile(r"\b\d{4}\.eml\b|\bv\d+-[\w.-]*")


@dataclass
class Tested:
    """What a series' run came to, for the watcher."""
    kind: str
    rc: int
    run_dir: Path | None = None
    said: str = ""                                   # the farm's own words, on a refusal or failure
    pages: dict[str, list[Any]] = field(default_factory=dict)   # page size -> [worst verdict, count]
    base: str = ""                                   # in a followed tree: where it was applied, why


def check_options(argv: list[str]) -> None:
    """The run options of the configuration, tried once with --dry-run: a
    mistake there is the watcher's, and must not read as a series refused."""
    p = subprocess.run(child.command([*argv, "--dry-run"]), capture_output=True, text=True, cwd=ROOT,
                       env=child_env())
    if p.returncode:
        said = "\n".join(ln for ln in p.stderr.splitlines() if ln.strip())[-600:]
        raise UsageError(f"the watcher's run options {' '.join(argv)} are refused by "
                         f"`foliofarm run`: {said}")


# What of the watcher's environment a series' run is given: nothing else (a
# login, a token, whatever the service was started with) reaches it.
PASSED_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "TZ", "TMPDIR", "XDG_CACHE_HOME", "FOLIOFARM_CACHE",
              "FOLIOFARM_SANDBOX", "FOLIOFARM_JOBS", "FOLIOFARM_SERIES_DISK_MB",
              "FOLIOFARM_MAX_SERIES_KB", "CCACHE_MAXSIZE")


def child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in PASSED_ENV}
    env["PYTHONPATH"] = str(ROOT)
    return env


def test_series(mbox: Path, results: Path, argv: list[str], log: Path,
        started: Callable[[int], None], seconds: float | None = None) -> Tested:
    """`foliofarm run --series MBOX --results RESULTS ARGV`; ``started`` is told
    the child's pid (its process group) as soon as it exists. After
    ``seconds`` the run is stopped with everything it started."""
    results.mkdir(parents=True, exist_ok=True)
    # run beside the series, named relative to it: the report (and the reply)
    # says "+ v2-mm-foo", not a path on this host
    series = os.path.relpath(mbox, results)
    with open(log, "ab") as out:
        run = child.start(["--series", series, *argv], results, env=child_env(), cwd=results,
                          output=out, die_with_parent=True)
        started(run.pid)
        rc = run.wait(seconds)
    run.stop()                     # anything the run left behind
    if rc is None:
        return Tested(TIMED_OUT, -9, None, said=f"the run was stopped at its limit of "
                      f"{seconds / 60:g} minutes ([series] run_minutes), with everything it started")
    return tested(rc, results, log)


stop_group = kill_group


def said(log: Path) -> str:
    """What the farm said when it stopped: from its last `foliofarm:` line on."""
    try:
        lines = log.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    starts = [i for i, ln in enumerate(lines) if ln.startswith("foliofarm: ")]
    return "\n".join(lines[starts[-1]:]).removeprefix("foliofarm: ").strip() if starts else ""


def recorded_error(run_dir: Path | None) -> str:
    """The error a run recorded in its results.json (the farm's words, unwrapped)."""
    try:
        doc = read(run_dir) if run_dir else None
    except ResultsError:
        return ""
    return "\n".join(e.message for e in doc.errors).strip() if doc else ""


def base_commit(run_dir: Path | None) -> str:
    """The commit a followed tree's series was tested on ("" for another run)."""
    try:
        doc = read(run_dir) if run_dir else None
    except ResultsError:
        return ""
    return doc.series.base.commit if doc and doc.series and doc.series.base else ""


def tested(rc: int, results: Path, log: Path) -> Tested:
    """What a finished run came to: judged (0 or 1, with its verdicts), the
    series refused at intake (2: it does not apply, or is no series), or the
    farm's own failure (3, or killed)."""
    run_dir = (results / "latest").resolve() if (results / "latest").exists() else None
    if rc == 2:
        words = recorded_error(run_dir) or said(log)
        # the series' fault only where the farm names it (a message of the series
        # folder): any other refusal is the watcher's own trouble, never the author's
        if SERIES_FILE.search(words):
            return Tested(NOT_APPLIED, rc, run_dir, said=words)
        return Tested(INFRA, rc, run_dir, said=words or "the run refused its options")
    doc = child.read_back(run_dir) if rc in (0, 1) and run_dir is not None else None
    if doc is None:
        return Tested(INFRA, rc, run_dir, said=said(log) or f"the run exited {rc}")
    failed = [k for k in doc.kernels if k.side == "series" and k.build_failed]
    broken = sorted({k.page_size for k in failed})
    why = next((ln for k in failed for ln in (k.error or "").splitlines() if "limit" in ln), "")
    return Tested(NOT_BUILT if broken else JUDGED, rc, run_dir,
                   said=(f"does not build with {', '.join(broken)} pages" + (f": {why}" if why else ""))
                   if broken else "", pages=page_verdicts(doc),
                   base=doc.series.base.text if doc.series and doc.series.base else "")


# Verdicts that are news for the author: worth a mail when [reply] when = "news".


def news(run_dir: Path) -> list[str]:
    """What a judged run found that the author would want mailed: every
    regression (a new splat or warning is the console check's), build break and
    figure moved beyond noise, as "cell check: verdict"."""
    doc = child.read_back(run_dir)
    return [] if doc is None else [f"{v.page_size}-{v.fs} {v.check}: {v.verdict}" for v in doc.verdicts
            if v.verdict in NEWS]


def page_verdicts(doc: schema.Results) -> dict[str, list[Any]]:
    """Page size -> [its worst verdict, how many checks had it]; quiet
    selftest rows (counted in their check's row) left out."""
    out: dict[str, list[Any]] = {}
    for v in doc.verdicts:
        if v.quiet:
            continue
        rank = SEVERITY.index(v.verdict) if v.verdict in SEVERITY else len(SEVERITY)
        cur = out.get(v.page_size)
        if cur is None or rank < SEVERITY.index(cur[0]):
            out[v.page_size] = [v.verdict, 1]
        elif v.verdict == cur[0]:
            cur[1] += 1
    return out


def report_text(run_dir: Path, say: Callable[[str], None]) -> str:
    """The run's report.txt; where the run could not write it (a rendering
    that failed), made again here from its results.json, which every run
    writes as results arrive: a series is answered from its results, never
    marked failed because a report did not render."""
    try:
        return (run_dir / "report.txt").read_text(errors="replace")
    except OSError as exc:
        said = f"{run_dir / 'report.txt'} not readable ({exc.strerror})"
    from foliofarm.report import readback, text
    try:
        out = text.render(readback(run_dir))
        say(f"{said}: the reply made from its results.json")
        return out
    except Exception as exc:      # noqa: BLE001 - the verdicts alone, below
        said += f"; report.txt from results.json failed too ({str(exc)[:200]})"
    from foliofarm.results.outcome import Verdict
    from foliofarm.results.read import load
    doc = load(run_dir / "results.json")
    rows = [f"  {r.get('cell')} {r.get('check')}: {r.get('verdict')}" for r in doc.get("verdicts") or []
            if r.get("verdict") != Verdict.PASS and not r.get("subtest_of")]
    say(f"{said}: the reply gives the verdicts from results.json")
    return "\n".join(["foliofarm: the report could not be rendered; the verdicts that are not a pass:",
                      *(rows or ["  none"]), ""])

"""One series tested: `foliofarm run --series` as a child process, and what it
came to. The child runs in a session of its own (its builds and guests with
it), dies with the watcher (PR_SET_PDEATHSIG), and its process group is
recorded so that a watcher restarted after a kill can stop what was left."""

from __future__ import annotations

import ctypes
import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from foliofarm.results import schema
from foliofarm.errors import UsageError
from foliofarm.paths import ROOT
from foliofarm.util import kill_group

# How a run ended, for the watcher.
JUDGED, NOT_APPLIED, NOT_BUILT, INFRA = "judged", "not-applied", "not-built", "infra"
TIMED_OUT = "timed-out"          # stopped at the run's limit: not tried again
# Worst first: a page size's verdict is the worst of its cells' checks.
SEVERITY = ("build-broken", "regression", "error", "incomplete", "changed", "fail", "flaky", "xpass",
            "fixed", "xfail", "pass", "skip")
PR_SET_PDEATHSIG = 1
# How the farm names a message of the series folder the watcher writes (loop.patch_folder).
SERIES_FILE = re.compile(r"\b\d{4}\.eml\b|\bv\d+-[\w.-]*")


@dataclass
class Outcome:
    kind: str
    rc: int
    run_dir: Path | None = None
    said: str = ""                                   # the farm's own words, on a refusal or failure
    pages: dict[str, list[Any]] = field(default_factory=dict)   # page size -> [worst verdict, count]
    base: str = ""                                   # in a followed tree: where it was applied, why


def _die_with_parent() -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


def farm_argv(argv: list[str]) -> list[str]:
    return [sys.executable, "-m", "foliofarm", "run", *argv]


def check_options(argv: list[str]) -> None:
    """The run options of the configuration, tried once with --dry-run: a
    mistake there is the watcher's, and must not read as a series refused."""
    p = subprocess.run(farm_argv([*argv, "--dry-run"]), capture_output=True, text=True, cwd=ROOT,
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


def run(mbox: Path, results: Path, argv: list[str], log: Path,
        started: Callable[[int], None], seconds: float | None = None) -> Outcome:
    """`foliofarm run --series MBOX --results RESULTS ARGV`; ``started`` is told
    the child's pid (its process group) as soon as it exists. After
    ``seconds`` the run is stopped with everything it started."""
    results.mkdir(parents=True, exist_ok=True)
    # run beside the series, named relative to it: the report (and the reply)
    # says "+ v2-mm-foo", not a path on this host
    series = os.path.relpath(mbox, results)
    with open(log, "ab") as out:
        proc = subprocess.Popen(farm_argv(["--series", series, "--results", str(results), *argv]),
                                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                cwd=results, env=child_env(), start_new_session=True,
                                preexec_fn=_die_with_parent)
        started(proc.pid)
        try:
            rc = proc.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            stop_group(proc.pid)
            proc.wait()
            return Outcome(TIMED_OUT, -9, None, said=f"the run was stopped at its limit of "
                           f"{seconds / 60:g} minutes ([series] run_minutes), with everything "
                           "it started")
    stop_group(proc.pid)           # anything the run left behind
    return outcome(rc, results, log)


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
        doc = schema.load(run_dir / "results.json") if run_dir else {}
    except UsageError:
        return ""
    return "\n".join(e.get("message", "") for e in doc.get("errors", [])).strip()


def base_commit(run_dir: Path | None) -> str:
    """The commit a followed tree's series was tested on ("" for another run)."""
    try:
        doc = schema.load(run_dir / "results.json") if run_dir else {}
    except UsageError:
        return ""
    return ((doc.get("series") or {}).get("base") or {}).get("commit", "")


def outcome(rc: int, results: Path, log: Path) -> Outcome:
    """What a finished run came to: judged (0 or 1, with its verdicts), the
    series refused at intake (2: it does not apply, or is no series), or the
    farm's own failure (3, or killed)."""
    run_dir = (results / "latest").resolve() if (results / "latest").exists() else None
    if rc == 2:
        words = recorded_error(run_dir) or said(log)
        # the series' fault only where the farm names it (a message of the series
        # folder): any other refusal is the watcher's own trouble, never the author's
        if SERIES_FILE.search(words):
            return Outcome(NOT_APPLIED, rc, run_dir, said=words)
        return Outcome(INFRA, rc, run_dir, said=words or "the run refused its options")
    if rc not in (0, 1) or run_dir is None or not (run_dir / "results.json").is_file():
        return Outcome(INFRA, rc, run_dir, said=said(log) or f"the run exited {rc}")
    from foliofarm.report import readback
    doc = schema.typed(readback(run_dir / "results.json"))
    failed = [k for k in doc.kernels if k.side == "series" and k.build_failed]
    broken = sorted({k.page_size for k in failed})
    why = next((ln for k in failed for ln in (k.error or "").splitlines() if "limit" in ln), "")
    return Outcome(NOT_BUILT if broken else JUDGED, rc, run_dir,
                   said=(f"does not build with {', '.join(broken)} pages" + (f": {why}" if why else ""))
                   if broken else "", pages=page_verdicts(doc),
                   base=doc.series.base.text if doc.series and doc.series.base else "")


# Verdicts that are news for the author: worth a mail when [reply] when = "news".
NEWS = ("build-broken", "regression", "changed")


def news(run_dir: Path) -> list[str]:
    """What a judged run found that the author would want mailed: every
    regression (a new splat or warning is the console check's), build break and
    figure moved beyond noise, as "cell check: verdict"."""
    from foliofarm.report import readback
    doc = schema.typed(readback(run_dir / "results.json"))
    return [f"{v.page_size}-{v.fs} {v.check}: {v.verdict}" for v in doc.verdicts
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

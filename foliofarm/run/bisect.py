"""`foliofarm bisect`: the first commit where one check regresses on one cell.

    foliofarm bisect --kernel PATH --good REF --bad REF --cell 4k-xfs --check exec-text
    foliofarm bisect --kernel debian:7.3 --series S.mbox --cell 4k-xfs --check exec-text
    foliofarm bisect --kernel debian:7.3 --series S.mbox --cell 64k-xfs --repro R.c

`git bisect run` drives it; each step is a farm run of just that cell and check
at the commit git checked out (`python -m foliofarm bisect --step STATE`), on
the farm's own build cache: one build directory for the tree, so each step
rebuilds incrementally, and each commit's kernel and measurements are kept. A
commit is bad when the check fails there, the kernel reports trouble while it
runs, or one of its figures moved the wrong way from the good commit's beyond
its declared tolerance (the same judgement as a series' `regression`); a commit
that does not build is skipped (125). With `--repro FILE` (and `--repro-args`)
the check is the reproducer's (`run --repro`): a commit is bad where it exits
other than 0 or the kernel reports trouble while it runs; the figures it
prints are shown, not judged (which way is worse is the reproducer's to say,
by its exit status). The good and bad ends are measured first:
a good end that is not good, or a bad end that is not bad, is said and nothing
is bisected. The tree is bisected in a worktree in the cache (a local tree) or
on the series' work branch (a Debian tree), held for the whole bisection, and
left as it was. Writes RESULTS/<id>/bisect.json and bisect.md."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Iterator

from foliofarm import locks
from foliofarm.intake import apply, git, series, source
from foliofarm.errors import InfraError, UsageError
from foliofarm.disks import reproducer
from foliofarm.judge import catalogue, figures
from foliofarm.paths import ROOT, cache_dir
from foliofarm.run import child
from foliofarm.run.shell import parse_cell
from foliofarm.util import write_atomic, write_json
from foliofarm.results.outcome import Outcome, Verdict

GOOD, BAD, SKIP, ABORT = 0, 1, 125, 128


def measure(state: dict[str, Any], commit: str, label: str,
            env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run the farm on the tree as checked out now: just the cell and the check.
    Returns the step's record (commit, subject, verdict, outcome, figures).
    ``env``: with the bisection's locks handed down (a step under `git bisect
    run` inherits them)."""
    tree = Path(state["tree"])
    out = Path(state["results"]) / "steps" / f"{label}-{commit[:12]}"
    picked = (["--repro", state["repro"], "--repro-args", state["repro_args"]] if state.get("repro")
              else ["--checks", state["check"]])
    args = ["--kernel", str(tree), "--cells", state["cell"], *picked, "--variant", state["variant"]]
    t0 = time.monotonic()
    log = out.with_suffix(".log")
    log.unlink(missing_ok=True)
    rc, doc = child.run_to_end(args, out, log=log, env=env)
    subject = git.git(tree, "log", "-1", "--format=%s", commit, environment="user").stdout.strip()
    rec: dict[str, Any] = {"commit": commit, "subject": subject,
                           "seconds": round(time.monotonic() - t0, 1), "results": str(out / "latest"),
                           "log": str(log)}
    if doc is None:
        return {**rec, "verdict": Verdict.ERROR, "reason": f"the farm run left no results (exit {rc})"}
    if any(k.build_failed for k in doc.kernels):
        return {**rec, "verdict": Verdict.SKIP, "reason": "does not build"}
    by = {c.name: c for c in (doc.cells[0].checks if doc.cells else [])}
    found = by.get(state["check"])
    if found is None or found.outcome == Outcome.ERROR:
        return {**rec, "verdict": Verdict.ERROR, "reason": found.reason if found else "not measured"}
    chk = found.model_dump()
    rec.update(outcome=chk["outcome"], reason=chk["reason"], metrics=chk["metrics"])
    console = by.get("console")
    if chk["outcome"] in (Outcome.FAIL, Outcome.XFAIL) or (console is not None and console.outcome == Outcome.FAIL):
        return {**rec, "verdict": "bad", "why": chk["reason"] or (console.reason if console else "")}
    if state.get("good_metrics") is not None:
        moved = figures.compare(state["check"], state["good_metrics"], chk["metrics"], None)
        wrong = [m for m in moved if m.get("regression")]
        rec["moved"] = moved
        if wrong:
            return {**rec, "verdict": "bad", "why": "; ".join(
                f"{m['metric']} {m['base']} -> {m['series']}" for m in wrong[:6])}
    return {**rec, "verdict": "good"}


def step(state_file: Path) -> int:
    """One `git bisect run` step: judge the commit checked out now."""
    state = json.loads(state_file.read_text())
    commit = git.git(Path(state["tree"]), "rev-parse", "HEAD", environment="user").stdout.strip()
    rec = measure(state, commit, "step")
    with open(state_file.with_suffix(".steps.jsonl"), "a", encoding="utf-8") as f:
        f.write(json.dumps(rec) + "\n")
    print(f"foliofarm bisect: {commit[:12]} {rec['subject']}: {rec['verdict']}"
          + (f" ({rec.get('why') or rec.get('reason')})" if rec["verdict"] != "good" else ""), flush=True)
    return {"good": GOOD, "bad": BAD, "skip": SKIP}.get(rec["verdict"], ABORT)


def _tree(args: argparse.Namespace, cache: Path) -> Iterator[tuple[Path, str, str, list[Path]]]:
    """(tree to bisect, good commit, bad commit, lock files held), held for the block."""
    src = source.resolve(args.kernel, cache)
    if args.series:
        if src.spec.startswith("debian:"):
            ser = series.load(args.series)
            with apply.applied(src, ser, cache=cache) as ap:
                yield src.tree, ap.commits[0] + "^", ap.commits[-1], [locks.lock_path(cache, "tree", src.tree)]
            return
        ser = series.load(args.series, src.tree)
        wt_dir = source.worktree_dir(src, cache)
        with locks.tree(cache, wt_dir, exclusive=True):
            wt = source.worktree(src, cache, ser.base_rev or src.ref or "HEAD")
            with apply.applied(wt, ser) as ap:
                yield wt.tree, ap.commits[0] + "^", ap.commits[-1], [locks.lock_path(cache, "tree", wt_dir)]
        return
    if not src.versioned:
        raise UsageError(f"{src.tree} is not a git tree: bisect needs one")
    for ref in (args.good, args.bad):
        if git.git(src.tree, "rev-parse", "--verify", "-q", f"{ref}^{{commit}}", check=False,
                   environment="user").returncode:
            raise UsageError(f"{ref!r} does not resolve to a commit in {src.tree}")
    good = git.git(src.tree, "rev-parse", f"{args.good}^{{commit}}", environment="user").stdout.strip()
    bad = git.git(src.tree, "rev-parse", f"{args.bad}^{{commit}}", environment="user").stdout.strip()
    if git.git(src.tree, "merge-base", "--is-ancestor", good, bad, check=False,
               environment="user").returncode:
        raise UsageError(f"--good {args.good} is not an ancestor of --bad {args.bad}")
    wt_dir = source.worktree_dir(src, cache)
    with locks.tree(cache, wt_dir, exclusive=True):
        wt = source.worktree(src, cache, bad)
        yield wt.tree, good, bad, [locks.lock_path(cache, "tree", wt_dir)]


def _end(state: dict[str, Any], tree: Path, commit: str, end: str, env: dict[str, str]) -> dict[str, Any]:
    """Measure one end of the range; it must be what it is said to be."""
    git.git(tree, "checkout", "-q", "--detach", commit, environment="user")
    rec = measure(state, commit, end, env)
    print(f"foliofarm bisect: {end} end {commit[:12]}: {rec['verdict']}", file=sys.stderr)
    if rec["verdict"] != end:
        raise UsageError(f"the {end} end {commit[:12]} is {rec['verdict']} for {state['check']} on "
                         f"{state['cell']} ({rec.get('why') or rec.get('reason', '')}): nothing to "
                         f"bisect; see {rec['log']}")
    return rec


def bisect(args: argparse.Namespace) -> int:
    page, fs, _ = parse_cell(args.cell)
    repro = args.repro.resolve() if args.repro is not None else None
    if repro is not None:       # C that does not compile: its lines, before anything builds
        reproducer.disk(cache_dir(), reproducer.load(repro))
        args.check = "repro"
    elif args.check not in catalogue.by_name():
        raise UsageError(f"unknown check {args.check!r}; valid: {', '.join(catalogue.by_name())}")
    if not args.series and not (args.good and args.bad):
        raise UsageError("give --good REF and --bad REF in --kernel PATH, or --series S")
    cache = cache_dir()
    out = (args.results / time.strftime("bisect-%Y%m%d-%H%M%S")).resolve()
    out.mkdir(parents=True, exist_ok=True)
    gen = _tree(args, cache)
    tree, good, bad, held = next(gen)
    try:
        good = git.git(tree, "rev-parse", good, environment="user").stdout.strip()
        bad = git.git(tree, "rev-parse", bad, environment="user").stdout.strip()
        state: dict[str, Any] = {"tree": str(tree), "cell": f"{page.name}-{fs.name}", "check": args.check,
                                 "variant": args.variant, "results": str(out), "good_metrics": None,
                                 "repro": str(repro) if repro else None, "repro_args": args.repro_args}
        env = {**os.environ, **git.IDENTITY, **locks.handed_down(*held), "PYTHONPATH": str(ROOT)}
        g = _end(state, tree, good, "good", env)
        state["good_metrics"] = g["metrics"]
        b = _end(state, tree, bad, "bad", env)
        state_file = out / "state.json"
        write_json(state_file, state)
        git.git(tree, "bisect", "reset", check=False, environment="user")
        git.git(tree, "bisect", "start", bad, good, environment="user")
        try:
            run = git.git(tree, "bisect", "run", sys.executable, "-m", "foliofarm", "bisect", "--step",
                          str(state_file), check=False, environment="user",
                          extra={k: v for k, v in env.items() if os.environ.get(k) != v})
            log = git.git(tree, "bisect", "log", check=False, environment="user").stdout
        finally:
            git.git(tree, "bisect", "reset", check=False, environment="user")
        write_atomic(out / "git-bisect-run.log", run.stdout + run.stderr)
        first = next((ln.split()[0] for ln in run.stdout.splitlines() if ln.endswith("is the first bad commit")), None)
        steps = [json.loads(ln) for ln in (out / "state.steps.jsonl").read_text().splitlines()] \
            if (out / "state.steps.jsonl").exists() else []
        if first is None:
            raise InfraError(f"git bisect run found no first bad commit:\n{run.stdout[-2000:]}{run.stderr[-1000:]}")
        result = summary(state, first, g, b, steps, tree)
        result["git_bisect_log"] = log
        write_json(out / "bisect.json", result)
        write_atomic(out / "bisect.md", markdown(result))
        print(markdown(result))
        print(f"foliofarm bisect: {out / 'bisect.md'}", file=sys.stderr)
        return 0
    finally:
        gen.close()


def summary(state: dict[str, Any], first: str, good: dict[str, Any], bad: dict[str, Any],
            steps: list[dict[str, Any]], tree: Path) -> dict[str, Any]:
    by = {s["commit"]: s for s in [good, bad, *steps]}
    first_rec = by.get(first, {})
    parent = git.git(tree, "rev-parse", f"{first}^", check=False, environment="user").stdout.strip()
    last_good = by.get(parent) if by.get(parent, {}).get("verdict") == "good" else good
    moved = figures.compare(state["check"], last_good.get("metrics") or {}, first_rec.get("metrics") or {}, None)
    subject = first_rec.get("subject") or \
        git.git(tree, "log", "-1", "--format=%s", first, environment="user").stdout.strip()
    return {"cell": state["cell"], "check": state["check"], "first_bad": first, "subject": subject,
            "why": first_rec.get("why", ""), "good": last_good["commit"], "good_subject": last_good.get("subject"),
            "figures": moved, "steps": [{k: s.get(k) for k in ("commit", "subject", "verdict", "why", "seconds")}
                                        for s in [good, bad, *steps]]}


def markdown(r: dict[str, Any]) -> str:
    lines = [f"# foliofarm bisect: {r['check']} on {r['cell']}", "",
             f"First bad commit: {r['first_bad'][:12]} {r['subject']!r}" + (f" ({r['why']})" if r["why"] else ""),
             "", f"Figures at the last good commit {r['good'][:12]} and at the first bad one:", "",
             "| figure | good | bad | delta |", "|---|---:|---:|---:|"]
    lines += [f"| {'!' if f.get('regression') else ''}{f['metric']} | {f['base']} | {f['series']} | "
              f"{'' if f['delta'] is None else f['delta']} |" for f in r["figures"]]
    lines += ["", "Steps:", "", "| commit | subject | verdict |", "|---|---|---|"]
    lines += [f"| {s['commit'][:12]} | {s['subject']} | {s['verdict']} |" for s in r["steps"]]
    return "\n".join(lines) + "\n"

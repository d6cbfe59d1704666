"""What a two-sided run builds and boots: base and base+series (each commit too
with --each-commit), or one kernel version against another. Measuring a side
is the caller's (`Sides.measure`); this module decides the order, applies the
series and keeps the results' series, sides and per-commit records."""

from __future__ import annotations

from concurrent.futures import Future
from pathlib import Path
from typing import Any, Callable, Protocol

from foliofarm import locks, matrix, series
from foliofarm.intake import source
from foliofarm.kernel.build import Builder
from foliofarm.errors import BuildError, UsageError
from foliofarm.results import ResultsWriter
from foliofarm.util import settle


class Sides(Protocol):
    """The run, as the plan sees it."""
    writer: ResultsWriter
    cache: Path
    builder: Builder
    page_sizes: list[matrix.PageSize]
    variant: str
    log: Callable[..., None]
    status: Callable[[str], Any]

    def measure(self, src: source.KernelSource, side: str | None,
                builds: list[Future[Any]] | None = None) -> bool: ...

    def start_builds(self, src: source.KernelSource) -> list[Future[Any]]: ...

    def base_is_built(self, src: source.KernelSource) -> bool: ...

    def tree_disks_done(self, src: source.KernelSource) -> None: ...


def label(src: source.KernelSource, variant: str) -> str:
    return src.label + ("" if variant == "default" else f"-{variant}")


def set_sides(run: Sides, base: source.KernelSource, new: source.KernelSource) -> None:
    run.writer.doc["sides"] = {
        "base": {"kernel": label(base, run.variant), "origin": base.origin},
        "series": {"kernel": label(new, run.variant), "origin": new.origin}}
    run.writer.flush()


def compare(run: Sides, src: source.KernelSource, other_spec: str, kernel_spec: str) -> bool:
    """--compare: the same matrix on two kernels, the second judged against the first."""
    with run.status(f"preparing kernel source {other_spec}"):
        other = source.resolve(other_spec, run.cache)
    if other.label == src.label:
        raise UsageError(f"--compare {other_spec} is the same kernel version as --kernel "
                         f"{kernel_spec} ({src.label}); compare two versions, or use --series")
    set_sides(run, src, other)
    with source.checked_out(src, run.cache, run.log) as a:
        ok = run.measure(a, "base")
    with source.checked_out(other, run.cache, run.log) as b:
        return run.measure(b, "series") and ok


def with_series(run: Sides, src: source.KernelSource, spec: str, each_commit: bool) -> bool:
    """--series: read and apply the series once (a series that does not apply
    stops here, before anything is built), checkpatch it, measure the base, then
    base+series (and every commit with --each-commit)."""
    ser = series.load(spec, None if src.spec.startswith("debian:") else src.tree)
    if src.spec.startswith("debian:"):
        return _with_series(run, src, ser, each_commit)
    # Never apply in the developer's checkout: use a worktree in the cache, held
    # from its checkout at the base to the series side's last build.
    if ser.kind != "range" and src.versioned and source.is_dirty(src.tree):
        run.log(f"{src.tree} has uncommitted changes; the base is its HEAD commit", "yellow")
    if not src.versioned:
        raise UsageError(f"{src.tree} is not a git tree: a series needs one (git am)")
    with locks.tree(run.cache, source.worktree_dir(src, run.cache), exclusive=True, log=run.log):
        return _with_series(run, source.worktree(src, run.cache, ser.base_rev or src.ref or "HEAD"),
                            ser, each_commit)


def _with_series(run: Sides, src: source.KernelSource, ser: series.Series, each_commit: bool) -> bool:
    w = run.writer
    run.log(f"series: {ser.describe()}")
    w.doc["series"] = {"spec": ser.spec, "kind": ser.kind, "cover": ser.cover,
                       "base_commit": ser.base_commit, "base_under_test": src.origin,
                       "patches": [{"number": p.number, "subject": p.subject, "name": p.name,
                                    "files": list(p.files + p.new_files)} for p in ser.patches]}
    if ser.notes:
        w.doc["series"]["intake_notes"] = list(ser.notes)
        for n in ser.notes:
            run.log(f"series intake: {n}", None)
    if note := series.base_commit_note(ser, src):
        w.doc["series"]["base_commit_note"] = note
        run.log(note, "yellow")
    w.flush()
    with run.status("applying the series (trial)"):
        with series.applied(src, ser, cache=run.cache) as ap:
            w.doc["series"]["commits"] = ap.commits
    with run.status("checkpatch.pl"):
        w.doc["checkpatch"] = series.checkpatch(src.tree, ser)
    w.flush()
    for p in w.doc["checkpatch"]:
        run.log(f"checkpatch {p['number']}/{len(ser.patches)} {p['subject']}: "
                f"{p['errors']} errors, {p['warnings']} warnings, {p['checks']} checks")
    if not each_commit and run.base_is_built(src):
        return _series_over_built_base(run, src, ser)
    ok = run.measure(src, "base")
    with series.applied(src, ser, cache=run.cache) as ap:
        set_sides(run, src, ap.source)
        if each_commit:
            build_each_commit(run, ap)
        ok = run.measure(ap.source, "series") and ok
    return ok


def _series_over_built_base(run: Sides, src: source.KernelSource, ser: series.Series) -> bool:
    """The base is built for every page size (no make): take its artifacts while
    the tree is at the base, then apply the series and start its builds, and
    judge the base (its saved measurements, or boots) while the series' first
    page size builds."""
    base_builds = run.start_builds(src)
    for f in base_builds:
        f.exception()       # cache look-ups: the tree must be at the base for them
    # and the disks made from the tree (selftests, thpmaps): with one page size
    # they are still queued when its kernel is found, and would otherwise be
    # made from the series' tree and keyed as the base's
    run.tree_disks_done(src)
    with series.applied(src, ser, cache=run.cache) as ap:
        set_sides(run, src, ap.source)
        builds = run.start_builds(ap.source)
        try:
            ok = run.measure(src, "base", base_builds)
        except BaseException:
            settle(builds)    # the series' tree stays applied until its build is done
            raise
        return run.measure(ap.source, "series", builds) and ok


def build_each_commit(run: Sides, ap: series.Applied) -> None:
    """Build every commit before the tip for every page size (the tip is the
    series side's own build); stop at the first that breaks."""
    w = run.writer
    try:
        for k, commit in enumerate(ap.commits[:-1], 1):
            series.checkout(ap.source, commit)
            subject = w.doc["series"]["patches"][k - 1]["subject"]
            for page in run.page_sizes:
                entry = {"number": k, "commit": commit, "subject": subject, "page_size": page.name}
                try:
                    with run.status(f"--each-commit: building {k}/{len(ap.commits)} {page.name}"):
                        arts = run.builder.build(ap.source, page, run.variant)
                    entry.update(ok=True, built_now=arts.built)
                    w.add("each_commit", entry)
                except BuildError as exc:
                    entry.update(ok=False, errors=str(exc))
                    w.add("each_commit", entry)
                    run.log(f"commit {k}/{len(ap.commits)} {subject!r} does not build "
                            f"for {page.name}\n{exc}", "red")
                    return
            run.log(f"commit {k}/{len(ap.commits)} builds for every page size")
    finally:
        series.checkout(ap.source, ap.commits[-1])


def tip_built(w: ResultsWriter, page: matrix.PageSize, error: str | None) -> None:
    """With --each-commit, the series' last commit is the series side's own
    build: record it beside the others (unless an earlier commit broke)."""
    commits = (w.doc.get("series") or {}).get("commits") or []
    if not commits or any(not e["ok"] for e in w.doc.get("each_commit", [])):
        return
    entry = {"number": len(commits), "commit": commits[-1],
             "subject": w.doc["series"]["patches"][-1]["subject"], "page_size": page.name,
             "ok": error is None}
    if error is not None:
        entry["errors"] = error
    w.add("each_commit", entry)


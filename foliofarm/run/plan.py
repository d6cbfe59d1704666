"""What a run builds and boots, in order: one kernel; base and base+series
(each commit too with --each-commit); or one kernel version against another.

The plan is a generator of steps: `Build` (queue a source's kernels for every
page size) and `Measure` (build, if not queued, and measure a source on its
cells, as one side). The runner is a loop that carries each step out and sends
back what it got (a `Build`'s queued builds); the plan never calls the runner,
so a test can drive it alone. The plan applies the series, keeps the source
trees as each step needs them, and writes the results' series, sides and
per-commit records."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Generator

from foliofarm import locks, matrix
from foliofarm.boot.qemu import TCG_CPU
from foliofarm.coverage import diffreach, patch
from foliofarm.lava.remote import LabBoots
from foliofarm.errors import BuildError, UsageError
from foliofarm.intake import apply, bases, checkpatch, series, source, touched
from foliofarm.judge.catalogue import Check
from foliofarm.kernel.build import Builder
from foliofarm.results.writer import ResultsWriter
from foliofarm.results.schema import (BaseChoice, Checkpatch, EachCommit, Reached, Role, SeriesPatch, SeriesRecord, Side,
                                      Sides, TouchedSelftest)


@dataclass
class RunOptions:
    kernel: str
    page_sizes: list[matrix.PageSize]
    filesystems: list[matrix.Filesystem]
    checks: list[Check]
    results: Path
    variant: str = "default"
    series: str | None = None        # an mbox, a patch directory or BASE..TIP
    compare: str | None = None       # a second kernel, run and judged against --kernel
    each_commit: bool = False
    selftests: str = "reached"       # a series' side: "reached" (by the base's coverage map) or "all"
    strict_style: bool = False
    fresh: bool = False              # boot and measure again even if the measurements are cached
    noise: bool = False              # a plain run also boots its kernel twice (the noise a series run needs)
    accel: str = "auto"
    tcg_threads: str = "single"      # TCG: vCPUs in turns on one thread, or each its own
    tcg_cpu: str = TCG_CPU           # TCG: the guests' -cpu
    boot_timeout: float = 300
    build_timeout: float | None = None   # a build stage's wall clock (None: kernel.build's default)
    timeout: float | None = None     # the whole run's wall clock
    allow_binary: bool = False       # take a series' binary patches
    guests: int = 1                  # boots of the farm's own checks at once
    tree_guests: int | None = None   # and of the tree's checks (default: guests)
    boot_with: str = "qemu"          # what boots the own checks here: the farm's QEMU, or "vng"
    lab: LabBoots | None = None      # --lab: a LAVA lab boots them (a booter of boot/protocol.py)
    repro: Path | None = None        # --repro FILE: a reproducer, run in every cell (the repro check)
    repro_args: str = ""             # --repro-args: its arguments, as given
    repro_seconds: int | None = None  # --repro-timeout: killed in a guest after that long
    cells: set[str] | None = None    # --cells: "page-fs" names; None: every page x fs
    jobs: int | None = None          # make -j (default: the host's cores)
    cpus: int = 1                    # guest vCPUs
    memory_mb: int = 2048            # guest memory
    numa_nodes: int = 1              # guest NUMA nodes
    extra_config: list[str] = field(default_factory=list)   # -K CONFIG_FOO=y
    dry_run: bool = False
    plan_cores: list[int] = field(default_factory=list)   # --plan-cores: the planner's host sizes
    command: list[str] = field(default_factory=list)

    @property
    def two_sided(self) -> bool:
        return self.series is not None or self.compare is not None


@dataclass(frozen=True)
class Build:
    """Queue ``source``'s kernel for every page size (and the disks made from
    its tree); the reply is the queued builds, for a later `Measure`.
    ``free_tree``: reply only once nothing more reads the tree (it is about to
    change under them)."""
    source: source.KernelSource
    free_tree: bool = False

    @property
    def stage(self) -> str:
        return "queue_builds"


@dataclass(frozen=True)
class Measure:
    """Build ``source`` for every page size (or take ``builds``, queued by a
    `Build`) and measure it on its cells as ``role``; the reply is whether
    everything could be measured."""
    source: source.KernelSource
    role: Role | None
    builds: Any = None

    @property
    def stage(self) -> str:
        return f"measure_{self.role or 'run'}"


Step = Build | Measure
Steps = Generator[Step, Any, None]


@dataclass
class Ground:
    """What the plan works with: the results, the cache, the builder (for
    --each-commit's builds and to ask what is built), and the run's output."""
    writer: ResultsWriter
    cache: Path
    builder: Builder
    page_sizes: list[matrix.PageSize]
    variant: str
    log: Callable[..., None]
    status: Callable[[str], Any]
    reach: bool = True     # a series runs the selftests it reaches (coverage/), not all


def label(src: source.KernelSource, variant: str) -> str:
    return src.label + ("" if variant == "default" else f"-{variant}")


def steps(g: Ground, opts: RunOptions, src: source.KernelSource) -> Steps:
    """Every step of the run ``opts`` asks for, on the resolved ``src``."""
    if opts.compare is not None:
        yield from compare(g, src, opts.compare, opts.kernel)
    elif opts.series is not None:
        yield from with_series(g, src, opts.series, opts.each_commit, opts.allow_binary)
    else:
        with source.checked_out(src, g.cache, g.log) as tree:
            yield Measure(tree, None)


def set_sides(g: Ground, base: source.KernelSource, new: source.KernelSource) -> None:
    g.writer.set_sides(Sides(base=Side(kernel=label(base, g.variant), origin=base.origin),
                             series=Side(kernel=label(new, g.variant), origin=new.origin)))


def compare(g: Ground, src: source.KernelSource, other_spec: str, kernel_spec: str) -> Steps:
    """--compare: the same matrix on two kernels, the second judged against the first."""
    with g.status(f"preparing kernel source {other_spec}"):
        other = source.resolve(other_spec, g.cache)
    if other.label == src.label:
        raise UsageError(f"--compare {other_spec} is the same kernel version as --kernel "
                         f"{kernel_spec} ({src.label}); compare two versions, or use --series")
    set_sides(g, src, other)
    with source.checked_out(src, g.cache, g.log) as a:
        yield Measure(a, Role.BASE)
    with source.checked_out(other, g.cache, g.log) as b:
        yield Measure(b, Role.SERIES)


def with_series(g: Ground, src: source.KernelSource, spec: str, each_commit: bool,
                allow_binary: bool = False) -> Steps:
    """--series: read the series, checkpatch it, measure the base, then
    base+series (and every commit with --each-commit); a series that does not
    apply stops the run before any kernel is built."""
    ser = series.load(spec, None if src.spec.startswith("debian:") else src.tree, allow_binary)
    base = None
    if bases.is_followed(src.spec) and not bases.Followed.parse(src.spec).commit:
        src, base = choose_base(g, src, ser)
    if src.spec.startswith("debian:"):
        yield from _with_series(g, src, ser, each_commit, base)
        return
    # Never apply in the developer's checkout: use a worktree in the cache, held
    # from its checkout at the base to the series side's last build.
    if ser.kind != "range" and src.versioned and source.is_dirty(src.tree):
        g.log(f"{src.tree} has uncommitted changes; the base is its HEAD commit", "yellow")
    if not src.versioned:
        raise UsageError(f"{src.tree} is not a git tree: a series needs one (git am)")
    with locks.tree(g.cache, source.worktree_dir(src, g.cache), exclusive=True, log=g.log):
        yield from _with_series(g, source.worktree(src, g.cache, ser.base_rev or src.ref or "HEAD"),
                                ser, each_commit, base)


def choose_base(g: Ground, src: source.KernelSource, ser: series.Series
                ) -> tuple[source.KernelSource, BaseChoice]:
    """A followed tree without a commit (--base): the base the series was
    written for (intake/bases.py), recorded; one it applies to nowhere is
    refused with every attempt's reason."""
    f = bases.Followed.parse(src.spec)
    subject = re.search(rb"^Subject: (.*)$", ser.patches[0].raw, re.M)
    choice = bases.choose(src.tree, f.branches, [p.mbox() for p in ser.patches], ser.base_commit,
                          bases.tags(subject.group(1).decode(errors="replace") if subject else ""))
    if choice.commit is None:
        raise UsageError(f"{ser.spec}: {choice.describe()}")
    g.log(f"series base: {choice.describe()}")
    base = BaseChoice(commit=choice.commit, branch=choice.branch, why=choice.why,
                      attempts=choice.attempts, text=choice.describe())
    return replace(src, ref=choice.commit, origin=f"{f.where} at {choice.commit[:12]}"
                   + (f" ({choice.branch})" if choice.branch else ""),
                   version=source.makefile_version(src.tree, choice.commit)), base


def record_series(g: Ground, src: source.KernelSource, ser: series.Series,
                  base: BaseChoice | None = None) -> None:
    """The series as read, in the results (its commits and checkpatch's findings
    follow: record_commits, run_checkpatch)."""
    g.log(f"series: {ser.describe()}")
    patches = [SeriesPatch(number=p.number, subject=p.subject, name=p.name, files=list(p.files + p.new_files),
                           sha256=hashlib.sha256(p.raw).hexdigest(),
                           **({"message_id": p.message_id} if p.message_id else {}))
               for p in ser.patches]
    more: dict[str, Any] = {}
    if ser.message_id:
        more["message_id"] = ser.message_id
    if base:
        more["base"] = base
    if ser.notes:
        more["intake_notes"] = list(ser.notes)
        for n in ser.notes:
            g.log(f"series intake: {n}", None)
    found = touched.touched(src.tree, [f for p in ser.patches for f in p.files + p.new_files], src.ref)
    g.log(f"series touches: {found.said()}", None)
    more["touched_selftests"] = [TouchedSelftest(program=k, categories=v, named_by=found.why[k])
                                 for k, v in found.programs.items()]
    if note := apply.base_commit_note(ser, src):
        more["base_commit_note"] = note
        g.log(note, "yellow")
    g.writer.set_series(SeriesRecord(spec=ser.spec, kind=ser.kind, cover=ser.cover, base_commit=ser.base_commit,
                                     base_under_test=src.origin, patches=patches, **more))


def record_commits(g: Ground, ap: apply.Applied, base_state: str = "") -> None:
    """The series' commits, and with ``base_state`` (the base tree's, as its
    coverage map is keyed) what the series can reach on each page size."""
    g.writer.set_series_commits(ap.commits)
    if base_state and ap.commits and not g.reach:
        g.writer.set_series_reach([Reached(page_size=p.name, everything="--selftests all")
                                   for p in g.page_sizes], [])
    elif base_state and ap.commits:
        diffreach.record(g.writer, g.log, g.cache, ap.source.tree, ap.source.xy, base_state,
                               ap.commits, [p.name for p in g.page_sizes])


def measure_patch(g: Ground, ap: apply.Applied) -> None:
    """On the coverage variant (run --coverage): which of the series' changed
    lines each check and selftest ran, per cell (coverage/patch.py)."""
    if g.variant == "coverage" and ap.commits:
        with g.status("patch coverage: reading the series' counters"):
            patch.record(g.writer, g.log, ap.source.tree, ap.commits, label(ap.source, g.variant))


def run_checkpatch(g: Ground, src: source.KernelSource, ser: series.Series) -> None:
    """The tree's checkpatch.pl on every patch, the tree at its base."""
    with g.status("checkpatch.pl"):
        found = [Checkpatch.model_validate(p) for p in checkpatch.check(src.tree, ser)]
    g.writer.set_checkpatch(found)
    for p in found:
        g.log(f"checkpatch {p.number}/{len(ser.patches)} {p.subject}: "
              f"{p.errors} errors, {p.warnings} warnings, {p.checks} checks")


def _with_series(g: Ground, src: source.KernelSource, ser: series.Series, each_commit: bool,
                 base: dict[str, Any] | None = None) -> Steps:
    record_series(g, src, ser, base)
    base_state = src.state()
    if not each_commit and base_is_built(g, src):
        yield from _series_over_built_base(g, src, ser, base_state)
        return
    # The base is still to be built (minutes): apply the series on trial
    # first, so that one that does not apply stops the run before that.
    with g.status("applying the series (trial)"):
        with apply.applied(src, ser, cache=g.cache) as ap:
            record_commits(g, ap, base_state)
    run_checkpatch(g, src, ser)
    yield Measure(src, Role.BASE)
    with apply.applied(src, ser, cache=g.cache) as ap:
        set_sides(g, src, ap.source)
        if each_commit:
            build_each_commit(g, ap)
        yield Measure(ap.source, Role.SERIES)
        measure_patch(g, ap)
        if each_commit:
            tip_built(g)


def base_is_built(g: Ground, src: source.KernelSource) -> bool:
    """Every page size of ``src`` is in the artifact cache: building it runs no make."""
    return all(g.builder.is_cached(src, page, g.variant) for page in g.page_sizes)


def _series_over_built_base(g: Ground, src: source.KernelSource, ser: series.Series, base_state: str) -> Steps:
    """The base is built for every page size (no make): take its artifacts while
    the tree is at the base (and the disks made from it: selftests, thpmaps),
    then apply the series and queue its builds, and judge the base (its saved
    measurements, or boots) while the series' first page size builds. The
    series is applied once: one that does not apply stops the run there,
    before any kernel is built (taking the base builds nothing)."""
    base_builds = yield Build(src, free_tree=True)
    run_checkpatch(g, src, ser)
    with apply.applied(src, ser, cache=g.cache) as ap:
        record_commits(g, ap, base_state)
        set_sides(g, src, ap.source)
        builds = yield Build(ap.source)
        yield Measure(src, Role.BASE, base_builds)
        yield Measure(ap.source, Role.SERIES, builds)
        measure_patch(g, ap)


def build_each_commit(g: Ground, ap: apply.Applied) -> None:
    """Build every commit before the tip for every page size (the tip is the
    series side's own build); stop at the first that breaks."""
    w = g.writer
    recorded = w.results().series
    patches = recorded.patches if recorded else []
    try:
        for k, commit in enumerate(ap.commits[:-1], 1):
            apply.checkout(ap.source, commit)
            subject = patches[k - 1].subject
            for page in g.page_sizes:
                entry = {"number": k, "commit": commit, "subject": subject, "page_size": page.name}
                try:
                    with g.status(f"--each-commit: building {k}/{len(ap.commits)} {page.name}"):
                        arts = g.builder.build(ap.source, page, g.variant)
                    w.add_each_commit(EachCommit(**entry, ok=True, built_now=arts.built))
                except BuildError as exc:
                    w.add_each_commit(EachCommit(**entry, ok=False, errors=str(exc)))
                    g.log(f"commit {k}/{len(ap.commits)} {subject!r} does not build "
                          f"for {page.name}\n{exc}", "red")
                    return
            g.log(f"commit {k}/{len(ap.commits)} builds for every page size")
    finally:
        apply.checkout(ap.source, ap.commits[-1])


def tip_built(g: Ground) -> None:
    """With --each-commit, the series' last commit is the series side's own
    build: record it beside the others, per page size as the series side's
    kernels record it (unless an earlier commit broke)."""
    doc = g.writer.results()
    commits = doc.series.commits if doc.series else []
    if not commits or any(not e.ok for e in doc.each_commit or []):
        return
    for k in doc.kernels:
        if k.side != Role.SERIES:
            continue
        broke = {"errors": k.error or ""} if k.build_failed else {}
        g.writer.add_each_commit(EachCommit(number=len(commits), commit=commits[-1],
                                            subject=doc.series.patches[-1].subject, page_size=k.page_size,
                                            ok=not k.build_failed, **broke))

"""`run --dry-run`: what a run would do, from what is cached now, and
--plan-cores: its boots replayed on hosts of each size (measure/schedule.py)."""

from __future__ import annotations

from pathlib import Path

from foliofarm.intake import series, source
from foliofarm.kernel.build import Builder
from foliofarm.kernel.kconfig import extra_fragment
from foliofarm.measure import durations, schedule
from foliofarm.run.plan import RunOptions


def dry_run(opts: RunOptions, cache: Path) -> list[str]:
    """What the run would do, from what is cached now; nothing is fetched,
    built, booted or written."""
    o = opts
    out: list[str] = []
    sides = [("base", o.kernel), ("series", f"{o.kernel} + {o.series}")] if o.series else \
        [("base", o.kernel), ("series", o.compare)] if o.compare else [("", o.kernel)]
    tree, said = cached_source(o.kernel, cache)
    out.append(said)
    builder = Builder(cache, jobs=o.jobs, extra=extra_fragment(cache, o.extra_config))
    cells = [f"{p.name}-{f.name}" for p in o.page_sizes for f in o.filesystems
             if o.cells is None or f"{p.name}-{f.name}" in o.cells]
    if o.series:
        out += series.describe_read(series.load(o.series, None if tree is None or
                                                o.kernel.startswith("debian:") else tree.tree,
                                                o.allow_binary))
    base_built = {page.name: bool(tree is not None and tree.versioned and not tree.ref
                                  and builder.is_cached(tree, page, o.variant))
                  for page in o.page_sizes}
    for side, what in sides:
        for page in o.page_sizes:
            n = sum(c.startswith(f"{page.name}-") for c in cells)
            if side == "series" and o.series:
                build = ("would build base + series over the base's build directory (only what "
                         "the series touches recompiles)" if base_built[page.name]
                         else "would build base + series after the base")
            elif side == "series":
                build = "would build, or cached"
            elif base_built[page.name]:
                build = "already built (cached)"
            else:
                build = "would build"
            split = " and one for the selftests run once per page size" if any(
                c.options.get("per_page") for c in o.checks) else ""
            out.append(f"{side or 'run'} {what} {page.name}: kernel {build}; {n} cell(s), one boot each{split}"
                       + (" (saved clean measurements reused unless --fresh)" if side != "series" else ""))
    if o.series and o.variant == "coverage":
        out.append("patch coverage (--coverage): both sides built with gcov; after the series' boots, "
                   "which of its changed lines each check and selftest ran, per cell")
    out.append(f"cells: {', '.join(cells)}")
    out.append(f"checks: {', '.join(c.name for c in o.checks)}; {o.guests} guest(s) at a time "
               f"(and {o.tree_guests or o.guests} for the tree's checks), "
               f"{o.cpus} vCPU(s), {o.memory_mb} MB and {o.numa_nodes} NUMA node(s) each, make -j{builder.jobs}"
               + (f", extra config {' '.join(o.extra_config)}" if o.extra_config else ""))
    if o.two_sided:
        out.append("the base is booted twice for the noise of each figure unless a second clean "
                   "boot is saved; the series side boots again for figures that moved")
    elif o.noise:
        out.append("each kernel is booted twice for the noise of each figure (--noise) unless a "
                   "second clean boot is saved")
    if o.plan_cores:
        out += planner(o, tree.xy if tree is not None else o.kernel.split(":", 1)[-1], cache)
    return out


def cached_source(spec: str, cache: Path) -> tuple[source.KernelSource | None, str]:
    """The kernel source a run would use, if it is here now (a Debian package
    is never fetched by a dry run), and a line saying so."""
    if not spec.startswith("debian:"):
        tree = source.resolve(spec, cache)
        return tree, f"kernel {spec}: {tree.origin}"
    pkg = f"linux-source-{spec.split(':', 1)[1]}"
    found = sorted((cache / "src").glob(f"{pkg}_*/linux")) if (cache / "src").is_dir() else []
    if not found:
        return None, f"kernel {spec}: would fetch {pkg}"
    tree = source.KernelSource(spec=spec, tree=found[-1],
                               version=source.makefile_version(found[-1]), origin=pkg)
    return tree, f"kernel {spec}: source cached at {found[-1]}"


def planner(o: RunOptions, xy: str, cache: Path) -> list[str]:
    """--plan-cores: the run's boots replayed on hosts of each size, from the
    times kept in the cache (measure/schedule.py)."""
    machine = durations.machine_key(o.cpus, o.memory_mb, o.accel, "lava" if o.lab else o.boot_with)
    jobs = schedule.planned_jobs(durations.read(durations.path_of(cache)), xy,
                                 [(p.name, f.name) for p in o.page_sizes for f in o.filesystems
                                  if o.cells is None or f"{p.name}-{f.name}" in o.cells], o.checks, machine)
    return schedule.plan_lines(jobs, o.memory_mb, o.plan_cores)

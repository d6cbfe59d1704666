"""`foliofarm coverage`: the base's coverage map (foliofarm/coverage/).

  make     run the coverage kernel of each page size (--boots times: every
           own check and every mm selftest, gcov counters read after each)
           and keep the map in the cache
  add      read runs of the coverage variant already made into the map
  reach    which tests execute a file, a function or a line, per page size
  select   which mm selftests a series can reach, per page size, and why
           the others cannot"""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path
from typing import Any

from foliofarm import matrix
from foliofarm.coverage import cmap, diffreach
from foliofarm.errors import UsageError
from foliofarm.intake import apply, series as series_mod, source
from foliofarm.kernel.build import Builder
from foliofarm.paths import ROOT, cache_dir
from foliofarm.run import child
from foliofarm.shown import terminal

VARIANT = "coverage"


def add_parser(sub: Any, d: dict[str, Any]) -> None:
    ap = sub.add_parser("coverage", help="which kernel code each check and selftest executes on a base",
                        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.set_defaults(func=lambda args, argv: ap.print_help() or 2, prefix="foliofarm coverage")
    cs = ap.add_subparsers(dest="coverage_cmd")

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--kernel", default=d["kernel"], help=f"the base (default {d['kernel']})")
        p.add_argument("--page-sizes", default=",".join(d["page_sizes"]),
                       help="comma-separated, of " + ", ".join(matrix.page_sizes()))

    mk = cs.add_parser("make", help="run the coverage kernels and keep the map")
    common(mk)
    mk.add_argument("--boots", type=int, default=2, help="runs whose union is the map (default 2)")
    mk.add_argument("--mm-selftests", default=None,
                    help="run_vmtests.sh categories, every program of them (default: the tests a run "
                         "runs by default; a test the map has no record of always runs)")
    mk.add_argument("--fs", default=",".join(d["filesystems"]), help="the cells' filesystems (default all)")
    mk.add_argument("--results", type=Path, default=ROOT / "results" / "coverage")
    mk.add_argument("--if-missing", action="store_true",
                    help="only the page sizes whose map is missing or holds a test seen in fewer boots "
                         "(make run's way: once per base)")
    mk.set_defaults(func=cmd_make)
    ad = cs.add_parser("add", help="read coverage runs already made into the map")
    common(ad)
    ad.add_argument("runs", nargs="+", type=Path, help="run folders of `run --variant coverage`")
    ad.set_defaults(func=cmd_add)
    rc = cs.add_parser("reach", help="which tests execute FILE, FILE:FUNCTION or FILE:LINE")
    common(rc)
    rc.add_argument("what")
    rc.set_defaults(func=cmd_reach)
    se = cs.add_parser("select", help="the mm selftests a series reaches, per page size")
    common(se)
    se.add_argument("--series", required=True, help="an mbox, a directory of patches or BASE..TIP")
    se.set_defaults(func=cmd_select)


def _pages(args: argparse.Namespace) -> list[str]:
    pages = [p for p in args.page_sizes.split(",") if p]
    bad = [p for p in pages if p not in matrix.page_sizes()]
    if bad:
        raise UsageError(f"--page-sizes {','.join(bad)}: give some of {', '.join(matrix.page_sizes())}")
    return pages


def _base(args: argparse.Namespace) -> source.KernelSource:
    src = source.resolve(args.kernel, cache_dir())
    if not src.versioned:
        raise UsageError(f"--kernel {args.kernel}: a tree without git has no identity to key a map by")
    return src


def missing(args: argparse.Namespace, pages: list[str]) -> list[str]:
    """The page sizes whose map of the base is not made yet: none, or a test
    in it seen in fewer than --boots boots (a run cut short)."""
    cache, src = cache_dir(), _base(args)
    out = []
    for page in pages:
        try:
            m = cmap.loaded(cache, src.xy, src.state(), page)
        except UsageError:
            m = None
        if m is None or not m.tests or any(len(r.boots) < args.boots for r in m.tests.values()):
            out.append(page)
    return out


def cmd_make(args: argparse.Namespace, argv: list[str]) -> int:
    from foliofarm.judge import catalogue
    pages = _pages(args)
    if args.if_missing:
        left = missing(args, pages)
        made, pages = [p for p in pages if p not in left], left
        if made:
            print(f"foliofarm coverage: the map of {args.kernel} on {', '.join(made)} is made "
                  f"({args.boots} boots of each test)", flush=True)
        if not pages:
            return 0
    runs: list[Path] = []
    for n in range(args.boots):
        out = args.results / f"boot-{n + 1}"
        log = args.results / f"boot-{n + 1}.log"
        print(f"foliofarm coverage: run {n + 1} of {args.boots} of the coverage kernels "
              f"({', '.join(pages)}; its output: {log})", flush=True)
        code, _ = child.run_to_end(["--kernel", args.kernel, "--variant", VARIANT, "--page-sizes", ",".join(pages),
                                    "--fs", args.fs,
                                    "--checks", catalogue.own() + ",mm-selftests",
                                    *(["--mm-selftests", args.mm_selftests] if args.mm_selftests else []),
                                    "--fresh"], out, log=log)
        if code not in (0, 1):
            print(f"foliofarm coverage: run {n + 1} ended with {code}; what it measured is read in")
        if (out / "latest").is_dir():
            runs.append((out / "latest").resolve())
    if not runs:
        raise UsageError(f"no coverage run left results in {args.results}: see its logs there")
    return _add(args, pages, runs)


def cmd_add(args: argparse.Namespace, argv: list[str]) -> int:
    missing = [r for r in args.runs if not (r / "coverage").is_dir()]
    if missing:
        raise UsageError(f"{missing[0]}: no coverage/ folder: give runs of `foliofarm run --variant coverage`")
    return _add(args, _pages(args), args.runs)


def _add(args: argparse.Namespace, pages: list[str], runs: list[Path]) -> int:
    cache, src = cache_dir(), _base(args)
    builder = Builder(cache)
    for page in pages:
        build = builder.base_build_dir(src, matrix.page_sizes()[page], VARIANT)
        try:
            m = cmap.loaded(cache, src.xy, src.state(), page)
        except UsageError as exc:       # an older map's: made again from these runs
            print(f"{page}: {terminal(exc)}: starting it again")
            m = None
        m = m or cmap.CoverageMap(src.xy, src.state(), page)
        n = sum(cmap.add_run(m, r, build, src.tree) for r in runs)
        saved = cmap.save(cache, m)
        few = [t for t, r in m.tests.items() if len(r.boots) < 2]
        print(f"{page}: {n} tests read from {len(runs)} run(s); the map holds {len(m.tests)} tests "
              f"({len(m.selftests())} selftests), {len(few)} seen in fewer than 2 boots; {saved}")
        for lost in m.lost[-5:]:
            print(f"  lost: {terminal(lost)}")
    return 0


def cmd_reach(args: argparse.Namespace, argv: list[str]) -> int:
    cache, src = cache_dir(), _base(args)
    file, _, rest = args.what.partition(":")
    line = int(rest) if rest.isdigit() else None
    function = rest if rest and line is None else None
    for page in _pages(args):
        m = cmap.loaded(cache, src.xy, src.state(), page)
        if m is None:
            print(f"{page}: no coverage map of {src.origin} yet: `foliofarm coverage make --page-sizes {page}`")
            continue
        tests = m.reaching(file, function, line)
        state = "not profiled" if file not in m.seen else f"{len(tests)} test(s)"
        print(f"{page}: {terminal(args.what)}: {state}")
        for t in tests:
            print(f"  {terminal(t)}")
    return 0


def cmd_select(args: argparse.Namespace, argv: list[str]) -> int:
    cache, src = cache_dir(), _base(args)
    ser = series_mod.load(args.series, None if src.spec.startswith("debian:") else src.tree)
    state = src.state()
    with apply.applied(src, ser, tag="select", cache=cache) as ap:
        sels, ch = diffreach.reached(cache, src.xy, state, ap.source.tree, f"{ap.commits[0]}^", ap.commits[-1],
                                  _pages(args))
    if ch.functions:
        print("the series changes: " + terminal(", ".join(diffreach.functions_named(ch))))
    for sel in sels:
        print(terminal(sel.said()))
        for t, why in sel.run.items():
            print(f"  run          {terminal(t)}: {terminal(why)}")
        for t, why in sel.not_reached.items():
            print(f"  not reached  {terminal(t)}: {terminal(why)}")
    return 0

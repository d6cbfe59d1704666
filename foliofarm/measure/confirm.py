"""Booting again before a result counts. What one boot saw may be the
moment's, not the kernel's: the field's bots boot again before they call a
regression (KernelCI retries a failed test first). Two cases:

- Lockups on an overloaded host, on either side: a soft lockup, an RCU stall
  or a hung task (splats.toml's hang rows) logged in a cell whose boot saw the
  host's load at or above OVERLOADED per core (a TCG vCPU starved by a kernel
  build and other guests logs "soft lockup - CPU#0 stuck for 14s") is booted
  again, and the second boot's results replace the first's. The second boot has
  the host to itself (Context.quiet: the run's builds finished, no other guest
  on the host) and boots no more guests at once than the host has cores, so a
  lockup it logs is the kernel's, not the host's. Both boots stay in boots[];
  results.json `booted_again` says why. Lockups that come back on the second
  boot count.
- The series side's regressions and moved figures: booted again on the
  series, and a regression on the base too (its kernel is built in the same
  run; not where the base's history measured its rate of failing it in
  enough boots: one more boot of it tells nothing, judge/flaky.py), the
  regressed check with every check that shared its guest, in the same order,
  so the second boot is the first one again. A regression stands only if it
  is one again between the two second boots; else the series' check is
  marked not confirmed and judged "flaky" (compare.py), which is no news. A
  moved figure that the series' second boot does not repeat is the base's
  noise (noise.settle_moves)."""

from __future__ import annotations

import os
import re
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import replace
from typing import Any, Callable

from foliofarm.results import schema
from foliofarm.measure import split
from foliofarm.measure.cells import BARE, RACE_BOOT, Context, GuestSlots, Kernel
from foliofarm.boot.splat import patterns
from foliofarm.judge import compare, flaky
from foliofarm.judge.catalogue import Check, Kind, is_own
from foliofarm.judge.checks import console_outcome, judge_measurement
from foliofarm.judge.noise import moved_pairs, settle_moves
from foliofarm.matrix import Cell
from foliofarm.results.outcome import Outcome, Verdict

# The host's 1-minute load average per core at or above which a lockup may be
# the host's: more runnable threads than cores, a guest's vCPU thread waiting.
OVERLOADED = 1.0
Pairs = list[tuple[Cell, Check]]
# measure.run_pass: (ctx, kernel, label, pairs) -> the pass (its measured,
# console(cell), boots)
RunPass = Callable[[Context, Kernel, str, Pairs], Any]


def hang_kinds() -> set[str]:
    return {p.kind for p in patterns() if p.hang}


def hangs(splats: list[str]) -> list[str]:
    """The reports of a stuck CPU or task among ``splats`` ("kind: line ...")."""
    kinds = hang_kinds()
    return [s for s in splats if s.split(":", 1)[0] in kinds]


def load_of(one: Any, cell: Cell) -> float:
    """The highest host load per core any boot of ``cell`` saw in the pass
    (its own boots, and the bare guests of the page parts every cell shares)."""
    def serves(fs: str) -> bool:
        parts = fs.split(",") if fs else []
        return not parts or cell.fs.name in parts or any(p in (BARE, RACE_BOOT) for p in parts)
    loads = [x for b in one.boots if serves(b.fs or "") for x in (b.host_load or [])]
    return max(loads, default=0.0)


def quiet_guests(cores: int | None = None) -> tuple[int, int]:
    """Guests at once of a boot again for lockups, (the own checks', the
    tree's): as many as the host's cores between them (one of each on one
    core), so that each vCPU thread has a core (the first boot's pools have
    one more each)."""
    cores = max(2, cores or os.cpu_count() or 1)
    return cores // 2, cores - cores // 2


def lockups(ctx: Context, k: Kernel, one: Any, run_pass: RunPass) -> bool:
    """Cells whose consoles logged a lockup while the host was overloaded are
    booted again, their results replaced by the second boot's. True if any was."""
    again = [(cell, found, load) for cell in k.cells
             if (found := hangs(one.console(cell))) and (load := load_of(one, cell)) >= OVERLOADED]
    if not again:
        return False
    for cell, found, load in again:
        why = (f"{len(found)} lockup report(s) ({found[0][:120]}) while the host's load was "
               f"{load:.2f} per core (at or above {OVERLOADED}): booted again with the host to itself, "
               "its results replace the first boot's")
        ctx.log(f"{cell.id}: {why}", "yellow")
        with ctx.writer.lock:
            ctx.writer.drop_cell(cell)
            ctx.writer.add_booted_again(schema.BootedAgain(cell=cell.id, kernel=cell.kernel, why=why))
    own, tree = quiet_guests()
    with (ctx.quiet or nullcontext)():
        second = run_pass(replace(ctx, guests=own, slots=GuestSlots(own, tree)), k, "",
                          [(c, chk) for c, _, _ in again for chk in ctx.checks])
    for cell, _, _ in again:
        if still := hangs(second.console(cell)):
            ctx.log(f"{cell.id}: {len(still)} lockup report(s) again on the second boot, with the host to "
                    f"itself (load {load_of(second, cell):.2f} per core): they count", "red")
    ctx.writer.flush()
    return True


def result_of(one: Any, k: Kernel, cell: Cell, chk: Check | None) -> schema.CheckResult | None:
    """What a pass (booted again) found for ``chk`` (None: the console) on ``cell``."""
    if chk is None:
        out = console_outcome(one.console(cell))
    elif m := one.measured.get(f"{cell.fs.name}/{chk.name}"):
        out = judge_measurement(chk, m, cell, k.kernel_xy)
    else:
        return None
    return out


def regressions(ctx: Context, k: Kernel) -> list[tuple[Cell, str]]:
    """(cell, check name) of ``k``'s cells judged a regression on this first boot
    (a figure's regression is a moved figure's: see moved_pairs)."""
    rows = compare.verdicts(ctx.writer.results())
    by_fs = {c.fs.name: c for c in k.cells}
    page = k.cells[0].page.name
    mine = [r for r in rows if r.page_size == page and r.fs in by_fs]
    inner = {(r.fs, r.subtest_of) for r in mine if r.subtest_of and r.verdict == Verdict.REGRESSION}
    return [(by_fs[r.fs], r.check) for r in mine
            if not r.subtest_of and r.verdict == Verdict.REGRESSION
            and (compare.verdict(r.base, r.series) == Verdict.REGRESSION or (r.fs, r.check) in inner)]


def during(reason: str) -> set[str]:
    """The checks a console check's reason names its reports "(during NAME)" of."""
    return set(re.findall(r"\(during ([\w.:-]+)\)", reason))


def series(ctx: Context, k: Kernel, run_pass: RunPass) -> None:
    """Series side: boot again what regressed or moved (the series, and for a
    regression the base), then settle each."""
    moved = moved_pairs(ctx.writer.results(), k.cells, ctx.checks)
    suspects = regressions(ctx, k)
    if not moved and not suspects:
        return
    by_name = {c.name: c for c in ctx.checks}
    wrong: dict[tuple[str, str], tuple[Cell, Check]] = {}
    groups: dict[tuple[str, str], Pairs] = {}
    for cell, name in suspects:
        # The boot as it was: every check that shared the guest with it, in the
        # same order (a check may fail only after what ran before it in that
        # boot: a leak of folio references fails force-thp-ra after the
        # readahead checks, never alone). A splat: the checks it was seen during too.
        console = ctx.writer.check_result(cell.id, "console") if name == "console" else None
        said = console.reason if console else ""
        mine = by_name.get(name)
        names = [c.name for c in ctx.checks
                 if (is_own(c) if mine is None else is_own(c) == is_own(mine)) or c.name in during(said)]
        wrong.update({(cell.fs.name, n): (cell, by_name[n]) for n in names if n in by_name})
        groups[(cell.id, name)] = [(cell, by_name[n]) for n in names if n in by_name]
    pairs = {**wrong, **{(cell.fs.name, chk.name): (cell, chk) for cell, chk, _ in moved}}
    # the base booted again for what it does not fail sometimes at a measured
    # rate (a base boot failing a flaky result says nothing: weigh_flaky decides)
    base_again = {(c.id, n) for c, n in suspects if k.base is not None and not rate_known(ctx, c, n)}
    ctx.log(f"{k.cells[0].page.name} {k.cells[0].kernel}: booting again to confirm "
            + "; ".join(x for x in (
                ", ".join(f"{c.fs.name}/{n}" for c, n in suspects),
                ("moved figures of " + ", ".join(f"{c.fs.name}/{chk.name}" for c, chk, _ in moved))
                if moved else "") if x)
            + whom(suspects, base_again, k.base is not None), None)
    s2 = run_pass(ctx, k, "-confirm", list(pairs.values()))
    on_base_pairs = {(c.fs.name, chk.name): chk for key, group in groups.items() if key in base_again
                     for c, chk in group}
    b2 = None
    if on_base_pairs and k.base is not None:
        base_cells = {c.fs.name: c for c in k.base.cells}
        b2 = run_pass(ctx, k.base, "-confirm",
                      [(base_cells[fs], chk) for (fs, _), chk in on_base_pairs.items() if fs in base_cells])

    def reboot(cell: Cell, name: str, label: str, base: bool = False) -> Any:
        """The suspect's boot again, as the first was (the part where it failed:
        narrowed): the series', or its base's."""
        pairs = narrowed(ctx, cell, name, groups[(cell.id, name)])
        if not base or k.base is None:
            return run_pass(ctx, k, label, pairs)
        on_base = {c.fs.name: c for c in k.base.cells}
        return run_pass(ctx, k.base, label, [(on_base[c.fs.name], chk) for c, chk in pairs])

    settle_regressions(ctx, k, suspects, s2, b2, reboot, base_again)
    settle_figures(ctx, k, moved, s2)
    ctx.writer.flush()


def whom(suspects: list[tuple[Cell, str]], base_again: set[tuple[str, str]], has_base: bool) -> str:
    """Which kernels boot again for the suspects, as the log says it."""
    if not suspects:
        return ""
    rest = [x for x in ("and the base for what regressed" if base_again else "",
                        "not the base where its rate of failing it is measured"
                        if has_base and len(base_again) < len(suspects) else "") if x]
    return f" (the series{', ' + '; '.join(rest) if rest else ''})"


def settle_figures(ctx: Context, k: Kernel, moved: list[Any], s2: Any) -> None:
    """Each moved figure that the series' second boot does not repeat is the
    base's noise, recorded as such (noise.settle_moves)."""
    for cell, chk, figs in moved:
        m = s2.measured.get(f"{cell.fs.name}/{chk.name}")
        if not m or m.kind != Kind.DUMP:
            continue
        now = judge_measurement(chk, m, cell, k.kernel_xy).metrics
        settled, noise = settle_moves(cell, chk.name, figs, now)
        with ctx.writer.lock:
            ctx.writer.add_noise(noise)
            for u in settled:
                ctx.writer.add_unconfirmed(u)
        for u in settled:
            ctx.log(f"{cell.id} {chk.name} {u.metric}: {u.base} -> {u.series}, but "
                    f"{u.confirm} on a second boot: noise, not the series", "yellow")


def narrowed(ctx: Context, cell: Cell, name: str, group: Pairs) -> Pairs:
    """The suspect's boot for the boots after the second, where only whether
    its failing results fail again counts (weigh_flaky): a split check whose
    failing tests all ran in one part runs that part alone, with what shared
    its guest (the cell part with the cell's other checks of its kind; a part
    run once per page size by itself). The other parts ran in guests of their
    own: booting them again costs minutes (folio_split_race_test alone, in the
    race part, about eight under TCG here) and tells nothing of the failing test."""
    chk = next((c for c in ctx.checks if c.name == name), None)
    first = ctx.writer.check_result(cell.id, name)
    if chk is None or first is None or not split.splits(chk):
        return group
    parts = {split.test_part(chk, s.name) for s in first.subtests or [] if s.outcome == Outcome.FAIL}
    if len(parts) != 1:
        return group
    which = parts.pop()
    mine = split.alone(chk, which)
    if which == split.CELL:
        return [(c, mine if x.name == name else x) for c, x in group]
    return [(cell, mine)]


def settle_regressions(ctx: Context, k: Kernel, suspects: list[tuple[Cell, str]], s2: Any,
                       b2: Any | None, reboot: Callable[..., Any] | None = None,
                       base_again: set[tuple[str, str]] | None = None) -> None:
    """Each suspect regression, judged again between the second boots (the
    base's first where it was not booted again: ``base_again`` holds the
    (cell id, check) booted again on the base, None for every suspect): it
    stands, or the series' check is marked not confirmed (judged "flaky")."""
    by_name = {c.name: c for c in ctx.checks}
    base_label = k.base.cells[0].kernel if k.base is not None else None
    for cell, name in suspects:
        chk = by_name.get(name)
        new = result_of(s2, k, cell, chk)
        if b2 is not None and base_label and (base_again is None or (cell.id, name) in base_again):
            base_cell = next(c for c in k.base.cells if c.fs.name == cell.fs.name)
            old = result_of(b2, k.base, base_cell, chk)
            on_base = ("the base passed again" if old and old.outcome in compare.GOOD
                       else "the base booted again too")
        else:
            old = next((x for c in ctx.writer.results().cells if c.kernel != cell.kernel
                        and c.page_size == cell.page.name and c.fs == cell.fs.name
                        for x in c.checks if x.name == name), None)
            on_base = "the base not booted again"
        weighed = weigh_flaky(ctx, k, cell, chk, new, reboot) if chk is not None else None
        again = compare.pair_verdict(cell.page.name, cell.fs.name, name, old, new)
        if weighed is not None:
            stands, said = weighed      # failed by what the base fails sometimes: its rate decides
        elif again in (Verdict.ERROR, Verdict.INCOMPLETE):
            stands, said = True, (f"stands: the second boot could not tell ({again}"
                                  + (f": {new.reason[:160]}" if new and new.reason else "") + ")")
        else:
            stands = again == Verdict.REGRESSION
            said = (f"confirmed: a regression again on a second boot ({on_base})" if stands else
                    f"not confirmed: {again} on a second boot ({on_base}"
                    + (f"; the series {new.outcome}, the base {old.outcome}" if new and old else "")
                    + ")")
        ctx.log(f"{cell.id} {name}: {said}", "red" if stands else "yellow")
        ctx.writer.mark_confirmed(cell.id, name, stands, said)


def flaky_on_base(ctx: Context, cell: Cell, name: str,
                  failed: schema.CheckResult | None) -> dict[str, flaky.Count] | None:
    """Where every result that ``failed`` (the series' result of check ``name``
    on ``cell``) failed is one the base's history marks flaky, the base's
    count of each (a copy); else None. What the base failed in its first boot
    steadily (not flakily) is no regression, and left out."""
    doc = ctx.writer.results()
    if doc.sides is None or failed is None:
        return None
    base = flaky.listed(doc.flaky, doc.sides.base.kernel, cell.page.name, cell.fs.name, name)
    first = next((x for c in doc.cells if c.kernel == doc.sides.base.kernel and c.page_size == cell.page.name
                  and c.fs == cell.fs.name for x in c.checks if x.name == name), None)
    keys = flaky.failed_keys(failed) - (flaky.failed_keys(first) - set(base))
    on_base = {key: flaky.Count(base[key].passed, base[key].failed) for key in keys if key in base}
    return on_base if base and keys and len(on_base) == len(keys) else None


def rate_known(ctx: Context, cell: Cell, name: str) -> bool:
    """The series' first boot failed check ``name`` on ``cell`` only in results
    the base fails sometimes, each rate measured in at least
    flaky.MIN_BASE_BOOTS boots of the base: another boot of the base would
    tell nothing its rate does not, so it is not booted."""
    on_base = flaky_on_base(ctx, cell, name, ctx.writer.check_result(cell.id, name))
    return on_base is not None and all(c.boots >= flaky.MIN_BASE_BOOTS for c in on_base.values())


def weigh_flaky(ctx: Context, k: Kernel, cell: Cell, chk: Check, new: schema.CheckResult | None,
                reboot: Callable[..., Any] | None) -> tuple[bool, str] | None:
    """A suspect regression that the series' second boot repeats, all of whose
    failing results the base's history marks flaky (judge/flaky.py): a boot
    of the base failing them too says nothing (the base does, sometimes), so
    the base's rate decides. It stands only once the series has failed them
    in as many boots in a row as a kernel failing them as often as the base
    would with a chance below flaky.CHANCE; the series is booted again for
    it, and while the base's rate rests on fewer than flaky.MIN_BASE_BOOTS
    boots, the base with it (a rate from two or three boots is a guess);
    from a rate that rests on more, the boots wanted are known and all booted
    at once.
    None where that is not the case (a result the base never failed: the
    second boots decide, as for any check)."""
    on_base = flaky_on_base(ctx, cell, chk.name, new)
    if on_base is None:
        return None
    booted = 2
    while True:
        worst = max(on_base.values(), key=lambda c: c.failed / c.boots)
        what = f"{', '.join(sorted(on_base))[:300]} flaky on the base ({worst.text()})"
        need = flaky.needed_boots(worst)
        if need is not None and booted >= need:
            return True, (f"confirmed: failed in {booted} boots of the series in a row, {what}: a chance "
                          f"below {flaky.CHANCE:.0%} for a kernel that fails it as often as the base")
        if booted >= flaky.MAX_SERIES_BOOTS or reboot is None:
            return False, (f"not confirmed: {what}: the base fails it too often for "
                           f"{flaky.MAX_SERIES_BOOTS} boots of the series to tell it apart" if need is None
                           else f"not confirmed: {what}; failed in {booted} boots of the series, {need} wanted")
        # from a rate that stays as it is the boots still wanted are known: booted
        # at once (a guest each, at the run's tail where cores are free), the
        # first in order that passes it settling it, as one by one would
        fixed = need is not None and (worst.boots >= flaky.MIN_BASE_BOOTS or k.base is None)
        wanted = list(range(booted + 1, need + 1)) if fixed else [booted + 1]
        ctx.log(f"{cell.id} {chk.name}: {what}: booting the series again ({', '.join(map(str, wanted))}"
                + (" at once)" if len(wanted) > 1 else ")"), None)
        with ThreadPoolExecutor(len(wanted)) as pool:
            got = list(pool.map(lambda n: result_of(reboot(cell, chk.name, f"-confirm{n}"), k, cell, chk), wanted))
        passed = next((n for n, g in zip(wanted, got) if not set(on_base) <= flaky.failed_keys(g)), None)
        if passed is not None:
            return False, (f"not confirmed: {what}; the series passed it in boot {passed}: "
                           "within what the base does")
        booted = wanted[-1]
        if worst.boots < flaky.MIN_BASE_BOOTS and k.base is not None:
            base_cell = next(c for c in k.base.cells if c.fs.name == cell.fs.name)
            again = result_of(reboot(cell, chk.name, f"-confirm{booted}", base=True), k.base, base_cell, chk)
            if again is not None and again.outcome != Outcome.ERROR:
                failed = flaky.failed_keys(again)
                for key, c in on_base.items():
                    c.failed, c.passed = c.failed + (key in failed), c.passed + (key not in failed)

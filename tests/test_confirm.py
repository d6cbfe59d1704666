"""Booting again before a result counts (foliofarm/measure/confirm.py), on a real
run's records: the first boots of a negative control (neg-exec-text, 4k-ext4,
base 7.3 against 7.3+series: results.json with the confirmation left out, and
both sides' exec-text dumps), and a real soft lockup's console line. The
second boots are those records handed back as a pass would: the series' again
(the regression stands) or the base's (it does not: "flaky"); a lockup under
load booted again and replaced, one on an idle host left to count."""

from __future__ import annotations

import json
import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from foliofarm.results.outcome import Outcome
from foliofarm.judge.measurement import Measurement
from foliofarm.measure import confirm
from foliofarm.measure.cells import Context, Kernel
from foliofarm.boot.splat import scan
from foliofarm.judge import catalogue, checks, compare
from foliofarm.judge.catalogue import Kind
from foliofarm.matrix import Cell, filesystems, page_sizes
from foliofarm.results import read
from foliofarm.results.writer import ResultsWriter
from foliofarm.watch import tester

DATA = Path(__file__).parent / "data"
FIRST = DATA / "confirm" / "neg-exec-text-4k-first-boot.json"
BASE_DUMP = (DATA / "confirm" / "4k-ext4-7.3.exec-text.dump").read_text()
SERIES_DUMP = (DATA / "confirm" / "4k-ext4-7.3+series.exec-text.dump").read_text()
LOCKUP = next(f"{s.kind}: {s.line}" for s in scan(
    (DATA / "consoles" / "splats" / "7.3" / "soft-lockup.log").read_text()) if s.kind == "soft-lockup")


@dataclass
class Boot:
    fs: str
    host_load: list[float]


@dataclass
class Again:
    """A pass as measure.run_pass returns it: what it measured, its consoles, its boots."""
    measured: dict[str, dict]
    splats: list[str] = field(default_factory=list)
    boots: list[Boot] = field(default_factory=list)

    def console(self, cell):
        return list(self.splats)


def setup(tmp_path):
    w = ResultsWriter(tmp_path, ["foliofarm", "run"], run_id="first")
    doc = json.loads(FIRST.read_text())
    w.doc = read.typed({**read.written(w.doc), **{k: doc[k] for k in ("cells", "sides", "series", "kernels", "noise")
                                                   if k in doc}})
    checks = catalogue.select("exec-text,mmap-miss")
    said: list[str] = []
    ctx = Context(writer=w, cache=tmp_path, checks=checks, accel="tcg", boot_timeout=60,
                  log=lambda m, style=None: said.append(m), status=lambda m: None)
    page, fs = page_sizes()["4k"], filesystems()["ext4"]
    base = Kernel(arts=None, initrd=tmp_path, cells=[Cell(page, fs, "7.3")], disks={},
                  kernel_xy="7.3", side="base")
    series = Kernel(arts=None, initrd=tmp_path, cells=[Cell(page, fs, "7.3+series")], disks={},
                    kernel_xy="7.3", side="series", base=base)
    return w, ctx, base, series, said


def dump(text):
    return Measurement(kind=Kind.DUMP, dump=text)


def exit_status(w):
    """The run's exit status, its verdicts judged from its cells as the writer does."""
    return compare.exit_status(w.results().model_copy(update={"verdicts": compare.verdicts(w.results()), "complete": True}))


def recorded(ctx, cell, name):
    """The writer's own entry for ``name`` on ``cell`` (to read, or to set up a case)."""
    for c in ctx.writer.doc.cells:
        if c.id == cell.id:
            return next((x for x in c.checks if x.name == name), None)
    return None


def update(entry, **fields):
    """Set up a case: ``entry`` (the writer's own) with ``fields`` in place."""
    for k, v in fields.items():
        setattr(entry, k, v)


def verdict(w, check="exec-text"):
    return next(r["verdict"] for r in [r.model_dump() for r in compare.verdicts(w.results())] if r["check"] == check)


def test_a_regression_that_repeats_on_both_sides_stands(tmp_path):
    w, ctx, base, series, said = setup(tmp_path)
    assert confirm.regressions(ctx, series) == [(series.cells[0], "exec-text")]
    booted = []

    def again(c, k, label, pairs):
        booted.append((k.cells[0].kernel, label, [p[1].name for p in pairs]))
        return Again({"ext4/exec-text": dump(SERIES_DUMP if k is series else BASE_DUMP)})

    confirm.series(ctx, series, again)
    # the series and its base, booted again as the first boot was: the regressed
    # check with every check that shared its guest, in the catalogue's order
    assert booted == [("7.3+series", "-confirm", ["exec-text", "mmap-miss"]),
                      ("7.3", "-confirm", ["exec-text", "mmap-miss"])]
    assert verdict(w) == "regression"
    assert exit_status(w) == 1
    entry = recorded(ctx, series.cells[0], "exec-text")
    assert entry.confirmed is True and "the base passed again" in entry.again


def test_a_regression_the_second_boot_does_not_repeat_is_flaky_and_no_news(tmp_path):
    w, ctx, base, series, said = setup(tmp_path)
    confirm.series(ctx, series, lambda c, k, label, pairs: Again({"ext4/exec-text": dump(BASE_DUMP)}))
    assert verdict(w) == "flaky"
    assert exit_status(w) == 0
    row = next(r for r in [r.model_dump() for r in compare.verdicts(w.results())] if r["check"] == "exec-text")
    assert "not confirmed: pass on a second boot" in row["series_reason"]
    w.flush()
    assert not tester.news(w.dir)            # nothing to mail


def test_a_second_boot_that_cannot_tell_leaves_the_regression_standing(tmp_path):
    w, ctx, base, series, said = setup(tmp_path)
    confirm.series(ctx, series, lambda c, k, label, pairs: Again(
        {"ext4/exec-text": Measurement(kind=Kind.ERROR, reason="guest hung before the shell")}
        if k is series else {"ext4/exec-text": dump(BASE_DUMP)}))
    assert verdict(w) == "regression"
    assert "stands: the second boot could not tell" in recorded(ctx, series.cells[0], "exec-text").again


def test_a_new_splat_is_booted_again_with_the_checks_it_was_seen_during(tmp_path):
    w, ctx, base, series, said = setup(tmp_path)
    cell = series.cells[0]
    # the series' first boot logged a warning during mmap-miss (its figures as the base's)
    entry = recorded(ctx, cell, "console")
    update(entry, outcome=Outcome.FAIL, reason="1 report(s): warning: WARNING: CPU: 0 PID: 1 at mm/filemap.c:1 "
           "(during mmap-miss)", metrics={"splats": 1})
    base_entry = recorded(ctx, base.cells[0], "exec-text")
    update(recorded(ctx, cell, "exec-text"), **{k: getattr(base_entry, k) for k in ("outcome", "reason", "metrics")})
    assert confirm.regressions(ctx, series) == [(cell, "console")]
    booted = []

    def again(c, k, label, pairs):
        booted.append((k.cells[0].kernel, sorted(p[1].name for p in pairs)))
        return Again({"ext4/exec-text": dump(BASE_DUMP)},
                     splats=["warning: WARNING: CPU: 0 PID: 1 at mm/filemap.c:1"] if k is series else [])

    confirm.series(ctx, series, again)
    assert booted == [("7.3+series", ["exec-text", "mmap-miss"]), ("7.3", ["exec-text", "mmap-miss"])]
    assert verdict(w, "console") == "regression"
    # the same, but the warning does not come back: flaky
    w2, ctx2, _, series2, _ = setup(tmp_path / "2")
    update(recorded(ctx2, series2.cells[0], "console"), outcome=entry.outcome, reason=entry.reason,
           metrics=dict(entry.metrics))
    confirm.series(ctx2, series2, lambda c, k, label, pairs: Again({}))
    assert verdict(w2, "console") == "flaky"


def test_a_lockup_under_host_load_is_booted_again_and_replaced(tmp_path):
    w, ctx, base, series, said = setup(tmp_path)
    cell = base.cells[0]
    first = Again({}, splats=[LOCKUP], boots=[Boot("ext4", [2.4, 2.1])])
    calls, held = [], []

    @contextmanager
    def quiet():
        held.append("in")
        yield
        held.append("out")

    def again(c, k, label, pairs):
        calls.append((label, sorted(p[1].name for p in pairs)))
        # with the host to itself (the run's quiet), and no more guests at once than cores
        assert held == ["in"]
        assert c.slots.host is None and c.slots.free[False] + c.slots.free[True] <= max(2, os.cpu_count())
        w.record(cell, checks.console_outcome([]))
        return Again({}, boots=[Boot("ext4", [0.8])])

    ctx.quiet = quiet
    assert confirm.lockups(ctx, base, first, again) is True
    assert calls == [("", ["exec-text", "mmap-miss"])]      # recorded anew: no label
    assert held == ["in", "out"]
    [moved] = w.doc.booted_again
    assert moved.cell == cell.id and "2.40 per core" in moved.why and "soft-lockup" in moved.why
    # the first boot's results are gone; the second's alone stand
    [only] = next(c for c in w.doc.cells if c.id == cell.id).checks
    assert only.outcome == "pass"


def test_a_lockup_on_an_idle_host_counts(tmp_path):
    w, ctx, base, series, said = setup(tmp_path)
    first = Again({}, splats=[LOCKUP], boots=[Boot("ext4", [0.3, 0.5])])
    assert confirm.lockups(ctx, base, first, lambda *a: AssertionError("no second boot")) is False
    assert not w.doc.booted_again
    # and a warning is no lockup, whatever the load
    warn = Again({}, splats=["warning: WARNING: CPU: 0 PID: 1 at mm/filemap.c:1"],
                 boots=[Boot("ext4", [3.0])])
    assert confirm.lockups(ctx, base, warn, lambda *a: AssertionError("no second boot")) is False


def test_a_lockup_again_with_the_host_to_itself_counts(tmp_path):
    w, ctx, base, series, said = setup(tmp_path)
    cell = base.cells[0]
    first = Again({}, splats=[LOCKUP], boots=[Boot("ext4", [3.7])])

    def again(c, k, label, pairs):
        w.record(cell, checks.console_outcome([LOCKUP]))
        return Again({}, splats=[LOCKUP], boots=[Boot("ext4", [0.62])])

    assert confirm.lockups(ctx, base, first, again) is True
    assert any("again on the second boot, with the host to itself (load 0.62 per core): they count" in m
               for m in said)
    assert exit_status(w) != 0
    assert quiet_guests_fit()


def quiet_guests_fit():
    """The boot again's guests: both pools at least one, no more than the cores between them."""
    return all(own >= 1 and tree >= 1 and own + tree == max(2, n)
               for n in (1, 2, 3, 16, 64) for own, tree in [confirm.quiet_guests(n)])

"""Flakiness learnt by measurement (foliofarm/judge/flaky.py, measure/history.py):
recorded 64K consoles of the mm selftests' rmap (tests/data/consoles/flaky/)
read with the kernel's KTAP parser, judged, added to the kernel's history in
a cache of the test's own, and the run closed as a run closes it."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from foliofarm.judge.measurement import Measurement
from foliofarm.cli import main
from foliofarm.intake import source
from foliofarm.judge import catalogue, compare, flaky
from foliofarm.judge.catalogue import Kind
from foliofarm.matrix import Cell, filesystems, page_sizes
from foliofarm.measure import confirm, history, passes, split
from foliofarm.judge import ktap
from foliofarm.measure.cells import Context, Kernel
from foliofarm.report import kcidb, text
from foliofarm.results import read, schema
from foliofarm.run import closing
from foliofarm.results.junit import junit_xml
from foliofarm.results.writer import ResultsWriter
from foliofarm.paths import cache_dir

CONSOLES = Path(__file__).parent / "data" / "consoles" / "flaky"
FAILS = (CONSOLES / "64k-nofs-7.3-rmap-fails.log").read_text()
PASSES = (CONSOLES / "64k-nofs-7.3-rmap-passes.log").read_text()
PASSES_AGAIN = (CONSOLES / "64k-nofs-7.3-repeat-rmap-passes.log").read_text()
RMAP = "mm-selftests: rmap: migrate.ksm_and_mremap"


@pytest.fixture(scope="module")
def parser_dir():
    cache = cache_dir()
    return ktap.parser_dir(cache, lambda: source.resolve(f"debian:{ktap.PARSER_KERNEL}", cache).tree)


def run(tmp_path, parser_dir, side=None, label="7.3", run_id="r1"):
    w = ResultsWriter(tmp_path / "results", ["foliofarm", "run", "--noise"], run_id=run_id)
    said: list[str] = []
    ctx = Context(writer=w, cache=tmp_path / "cache", checks=catalogue.select("mm-selftests"), accel="tcg",
                  boot_timeout=60, log=lambda m, style=None: said.append(m), status=lambda m: None,
                  ktap_parser=parser_dir)
    page = page_sizes()["64k"]
    cells = [Cell(page, fs, label) for fs in filesystems().values()]
    k = Kernel(arts=SimpleNamespace(dir=Path("7.3-64k-default-test")), initrd=Path("/cache/guest/initrd.cpio"),
               cells=cells, disks={c.fs.name: Path(f"/cache/images/{c.fs.name}.img") for c in cells},
               kernel_xy="7.3", side=side)
    return w, ctx, k


def boot(ctx, k, console):
    """One boot's measurements, every cell's selftests run as that console printed it."""
    out = {}
    for cell in k.cells:
        m = Measurement(kind=Kind.KTAP, ktap=console, seconds=2.0)
        out[f"{cell.fs.name}/mm-selftests"] = m.model_copy(update={"tests": passes.parse_tests(ctx, m)})
    return out


def first_boot(ctx, k, measured):
    """As a pass records its first boot: judged with the history, then kept in it."""
    known = history.known(ctx, k)
    for cell in k.cells:
        for chk in ctx.checks:
            o = passes.judge(ctx, k, cell, chk, measured[f"{cell.fs.name}/{chk.name}"])
            ctx.writer.record(cell, history.judged(o, cell.id, known))
    history.after_pass(ctx, k, measured)


def noise_run(ctx, k, *consoles):
    """A plain run with --noise: its first boot recorded, every boot kept and judged."""
    boots = [boot(ctx, k, c) for c in consoles]
    first_boot(ctx, k, boots[0])
    for again in boots[1:]:
        history.after_pass(ctx, k, again)
    history.judge_run(ctx, k, boots)
    return closing.close(ctx.writer, True)


def rmap_of(doc, cell):
    c = next(c for c in doc["cells"] if c["id"] == cell)
    chk = next(x for x in c["checks"] if x["name"] == "mm-selftests")
    return chk, next(s for s in chk["subtests"] if s["name"] == "rmap")


def test_rmap_failing_in_the_first_boot_and_passing_in_the_repeat_is_flaky_and_no_failure(tmp_path, parser_dir):
    w, ctx, k = run(tmp_path, parser_dir)
    assert noise_run(ctx, k, FAILS, PASSES_AGAIN) == 0
    doc = read.load(w.dir / "results.json")          # as written, read back
    for cell in ("64k-ext4-7.3", "64k-xfs-7.3", "64k-erofs-7.3"):
        chk, rmap = rmap_of(doc, cell)
        assert chk["outcome"] == "flaky" and rmap["outcome"] == "flaky"
        assert "failed 1 of 2 boots" in rmap["reason"] and "this run's 2 boots" in rmap["reason"]
        assert chk["metrics"]["fail"] == 0
    found = {(f["fs"], f["result"]): f for f in doc["flaky"]}
    f = found[("ext4", RMAP)]
    assert (f["run_failed"], f["run_passed"], f["failed"], f["passed"]) == (1, 1, 1, 1)
    assert f["measured_in"] == "this run" and f["judged"] is True
    assert ("ext4", "mm-selftests: rmap") in found      # the test, as its own result
    assert ("ext4", "mm-selftests: rmap: migrate.anon") not in found   # passed in both: steady
    # shown where a person reads it
    said = " ".join(text.render(read.typed(doc)).split())     # as wrapped for a mail
    assert "Flaky results" in said and f"64k-ext4 7.3 {RMAP}: failed 1 of 2 boots" in said
    assert "flakyFailure" in junit_xml(read.typed(doc))


def test_rmap_failing_in_both_boots_of_the_run_fails_it(tmp_path, parser_dir):
    w, ctx, k = run(tmp_path, parser_dir)
    assert noise_run(ctx, k, FAILS, FAILS) == 1
    doc = read.load(w.dir / "results.json")
    chk, rmap = rmap_of(doc, "64k-ext4-7.3")
    assert chk["outcome"] == "fail" and rmap["outcome"] == "fail"
    assert not doc.get("flaky")


def test_with_noise_only_the_runs_own_boots_decide(tmp_path, parser_dir):
    """A result the history marks flaky that fails in every boot of a --noise
    run fails it: the run's boots say it fails now."""
    _, ctx, k = run(tmp_path, parser_dir, run_id="r1")
    noise_run(ctx, k, FAILS, PASSES)
    w2, ctx2, k2 = run(tmp_path / "2", parser_dir, run_id="r2")
    ctx2.cache = ctx.cache
    assert noise_run(ctx2, k2, FAILS, FAILS) == 1
    assert rmap_of(read.load(w2.dir / "results.json"), "64k-ext4-7.3")[1]["outcome"] == "fail"


def test_without_noise_the_history_decides(tmp_path, parser_dir):
    """One boot, no --noise: a failure of a result the kernel's history marks
    flaky is flaky; of one it never passed, or never failed, a failure."""
    _, ctx, k = run(tmp_path, parser_dir, run_id="r1")
    noise_run(ctx, k, PASSES, FAILS)
    w, ctx2, k2 = run(tmp_path / "2", parser_dir, run_id="r2")
    ctx2.cache = ctx.cache
    first_boot(ctx2, k2, boot(ctx2, k2, FAILS))
    history.record_flaky(ctx2, k2)
    assert closing.close(w, True) == 0
    doc = read.load(w.dir / "results.json")
    chk, rmap = rmap_of(doc, "64k-xfs-7.3")
    assert rmap["outcome"] == "flaky" and "failed 1 of 2 boots, this kernel's boots" in rmap["reason"]
    f = next(f for f in doc["flaky"] if f["fs"] == "xfs" and f["result"] == RMAP)
    assert f["measured_in"] == "the kernel's history" and f["failed"] == 2 and f["passed"] == 1
    # another kernel (another build of it) has a history of its own: a failure
    w3, ctx3, k3 = run(tmp_path / "3", parser_dir, run_id="r3")
    ctx3.cache = ctx.cache
    k3.arts = SimpleNamespace(dir=Path("7.3-64k-default-other"))
    first_boot(ctx3, k3, boot(ctx3, k3, FAILS))
    assert closing.close(w3, True) == 1


def test_a_new_failure_inside_a_flaky_test_still_fails(tmp_path, parser_dir):
    """Only the flaky result is excused: rmap failing with migrate.anon too
    (never failed before) is a failure, naming it."""
    _, ctx, k = run(tmp_path, parser_dir)
    both = FAILS.replace("# ok 1 migrate.anon", "# not ok 1 migrate.anon")
    measured = boot(ctx, k, both)
    o = passes.judge(ctx, k, k.cells[0], ctx.checks[0], measured["ext4/mm-selftests"])
    known = {RMAP: flaky.Count(1, 1), "mm-selftests: rmap": flaky.Count(1, 1)}
    assert flaky.apply(o, known, "here").outcome == "fail"
    only = boot(ctx, k, FAILS)["ext4/mm-selftests"]
    o = passes.judge(ctx, k, k.cells[0], ctx.checks[0], only)
    assert flaky.apply(o, known, "here").outcome == "flaky"
    # the test flaky as a whole but its failing result never seen passing: a failure
    assert flaky.apply(o, {"mm-selftests: rmap": flaky.Count(1, 1)}, "here").outcome == "fail"


def test_how_many_boots_a_series_must_fail_what_the_base_fails_sometimes():
    assert flaky.needed_boots(flaky.Count(5, 0)) == 2      # never failed: two failures, as before
    assert flaky.needed_boots(flaky.Count(2, 1)) == 3      # 1 in 3: (1/3)**3 < 5%
    assert flaky.needed_boots(flaky.Count(1, 1)) == 5      # 1 in 2: (1/2)**5 < 5%
    assert flaky.needed_boots(flaky.Count(4, 6)) is None   # more often than not: cannot tell
    assert flaky.needed_boots(flaky.Count(0, 3)) is None


def test_a_base_flaky_result_the_series_passes_is_no_news(tmp_path, parser_dir):
    """The s6 case: the base's first boot failed rmap (flaky by its history),
    the series passed it: no 'fixed'."""
    assert compare.verdict("flaky", "pass") == "pass"
    assert compare.verdict("flaky", "fail") == "regression"    # to confirm, weighed (below)
    assert compare.verdict("pass", "flaky") == "flaky"
    assert compare.verdict("flaky", "xfail") == "flaky"         # the known failure: no news


# -- a series against a base whose history marks its failure flaky (confirm.py) ---

def series_run(tmp_path, parser_dir, base_counts):
    w, ctx, base = run(tmp_path, parser_dir, side=schema.Role.BASE)
    _, _, series = run(tmp_path, parser_dir, side=schema.Role.SERIES, label="7.3+series")
    series.base = base
    w.set_sides(schema.Sides(base=schema.Side(kernel="7.3", origin="base"),
                             series=schema.Side(kernel="7.3+series", origin="series")))
    for cell in base.cells:
        w.record(cell, passes.judge(ctx, base, cell, ctx.checks[0], boot(ctx, base, PASSES)[f"{cell.fs.name}/mm-selftests"]))
    for cell in series.cells:      # ext4's first boot fails rmap, the others pass it
        m = boot(ctx, series, FAILS if cell.fs.name == "ext4" else PASSES)[f"{cell.fs.name}/mm-selftests"]
        w.record(cell, passes.judge(ctx, series, cell, ctx.checks[0], m))
    passed, failed = base_counts
    w.set_flaky("7.3", "64k", [schema.FlakyResult(kernel="7.3", page_size="64k", fs="ext4", check="mm-selftests",
                                           result=RMAP, passed=passed, failed=failed,
                                           measured_in="the kernel's history")])
    return w, ctx, base, series


class Again:
    def __init__(self, measured):
        self.measured, self.boots = measured, []

    def console(self, cell):
        return []


def verdict_of(w):
    return next(r for r in [r.model_dump() for r in compare.verdicts(w.results())] if r["check"] == "mm-selftests" and r["fs"] == "ext4")


def test_a_series_failing_a_base_flaky_result_in_every_boot_it_needs_is_a_confirmed_regression(
        tmp_path, parser_dir):
    w, ctx, base, series = series_run(tmp_path, parser_dir, (2, 1))      # the base: 1 in 3
    labels = []

    def again(c, k, label, pairs):
        labels.append((k.cells[0].kernel, label))
        return Again(boot(ctx, k, FAILS if k is series else PASSES))

    confirm.series(ctx, series, again)
    # the base's rate rests on three boots: the base is booted beside the series' third
    assert labels == [("7.3+series", "-confirm"), ("7.3", "-confirm"), ("7.3+series", "-confirm3"),
                      ("7.3", "-confirm3")]
    row = verdict_of(w)
    assert row["verdict"] == "regression" and "failed in 3 boots of the series in a row" in row["series_reason"]
    assert "failed 1 of 4 boots" in row["series_reason"]


def test_a_base_whose_rate_is_measured_is_not_booted_again(tmp_path, parser_dir):
    """The base failed it 2 of 6 boots: its rate is known, and one more boot
    of it would say nothing (it fails sometimes). Only the series is booted
    again; three failures in a row make it the series' ((1/3)**3 < 5%)."""
    w, ctx, base, series = series_run(tmp_path, parser_dir, (4, 2))
    labels, booted = [], {}

    def again(c, k, label, pairs):
        labels.append((k.cells[0].kernel, label))
        booted[label] = [(cell.fs.name, chk.options["part"], split.is_alone(chk)) for cell, chk in pairs]
        return Again(boot(ctx, k, FAILS if k is series else PASSES))

    confirm.series(ctx, series, again)
    assert labels == [("7.3+series", "-confirm"), ("7.3+series", "-confirm3")]
    # the second boot as the first was; the third only the part rmap ran in
    # (once per page size, with no filesystem): rmap's failing again is all it tells
    assert booted == {"-confirm": [("ext4", "all", False)], "-confirm3": [("ext4", "page", True)]}
    row = verdict_of(w)
    assert row["verdict"] == "regression" and "failed in 3 boots of the series in a row" in row["series_reason"]
    # and one pass of the series among them is within what the base does
    w, ctx, base, series = series_run(tmp_path / "2", parser_dir, (4, 2))
    labels.clear()
    confirm.series(ctx, series, lambda c, k, label, pairs: labels.append(label) or Again(
        boot(ctx, k, FAILS if label == "-confirm" else PASSES)))
    assert labels == ["-confirm", "-confirm3"] and verdict_of(w)["verdict"] == "flaky"


def test_the_boots_a_measured_rate_wants_boot_at_once(tmp_path, parser_dir):
    """The base failed it 4 of 10 boots: four in a row are wanted ((0.4)**4 <
    5%). The rate will not move (the base is not booted), so the third and
    fourth boots of the series run at the same time (the barrier: each waits
    for the other); one of them passing it settles it as one by one would."""
    for fails_in, verdict in (({"-confirm", "-confirm3", "-confirm4"}, "regression"),
                              ({"-confirm", "-confirm3"}, "flaky")):
        w, ctx, base, series = series_run(tmp_path / verdict, parser_dir, (6, 4))
        together, labels = threading.Barrier(2, timeout=10), []

        def again(c, k, label, pairs):
            labels.append((k.cells[0].kernel, label))
            if label in ("-confirm3", "-confirm4"):
                together.wait()
            return Again(boot(ctx, k, FAILS if label in fails_in else PASSES))

        confirm.series(ctx, series, again)
        assert sorted(labels) == [("7.3+series", "-confirm"), ("7.3+series", "-confirm3"),
                                  ("7.3+series", "-confirm4")]
        row = verdict_of(w)
        assert row["verdict"] == verdict, row["series_reason"]
        assert ("failed in 4 boots of the series in a row" if verdict == "regression"
                else "passed it in boot 4") in row["series_reason"]


def test_a_series_passing_a_base_flaky_result_in_an_extra_boot_is_flaky(tmp_path, parser_dir):
    w, ctx, base, series = series_run(tmp_path, parser_dir, (1, 1))      # the base: 1 in 2, 5 wanted
    n = []

    def again(c, k, label, pairs):
        if k is series:
            n.append(label)
        # the series fails in -confirm and -confirm3, passes in -confirm4; the
        # base booted beside it fails its third boot
        failing = len(n) < 3 if k is series else label == "-confirm3"
        return Again(boot(ctx, k, FAILS if failing else PASSES))

    confirm.series(ctx, series, again)
    row = verdict_of(w)
    assert row["verdict"] == "flaky" and "passed it in boot 4" in row["series_reason"]
    assert compare.exit_status(w.results().model_copy(update={"complete": True, "verdicts": compare.verdicts(w.results())})) == 0


def test_a_result_the_base_never_failed_stands_on_two_failures(tmp_path, parser_dir):
    w, ctx, base, series = series_run(tmp_path, parser_dir, (1, 1))
    w.set_flaky("7.3", "64k", [])
    labels = []
    confirm.series(ctx, series, lambda c, k, label, pairs: labels.append(label) or Again(
        boot(ctx, k, FAILS if k is series else PASSES)))
    assert labels == ["-confirm", "-confirm"] and verdict_of(w)["verdict"] == "regression"


def test_kcidb_and_the_list_command_read_what_a_run_kept(tmp_path, parser_dir, monkeypatch, capsys):
    w, ctx, k = run(tmp_path, parser_dir)
    noise_run(ctx, k, FAILS, PASSES_AGAIN)
    assert kcidb.STATUS["flaky"] == "DONE"
    monkeypatch.setenv("FOLIOFARM_CACHE", str(ctx.cache))
    assert main(["flaky", "--page-size", "64k"]) == 0
    out = capsys.readouterr().out
    assert "7.3 64k" in out and f"  ext4   {RMAP}: failed 1 of 2 boots" in out
    assert main(["flaky", "--toml"]) == 0
    out = capsys.readouterr().out
    assert 'fs = "ext4"\ntest = "rmap"\ninner = "migrate.ksm_and_mremap"\nflaky = true' in out
    assert main(["flaky", "--page-size", "4k"]) == 0
    assert "no flaky result" in capsys.readouterr().out
    # a damaged history is started again, never trusted
    [path] = (ctx.cache / "history").glob("*.json")
    path.write_text("{not json")
    assert history.read(path)["cells"] == {}
    history.after_pass(ctx, k, boot(ctx, k, PASSES))
    assert json.loads(path.read_text())["cells"]["64k-ext4-7.3"]["boots"] == 1


def test_the_base_failing_its_flaky_result_again_does_not_excuse_the_series(tmp_path, parser_dir):
    """The base's second boot fails it too (it does, sometimes): the series'
    boots against the base's rate decide, not that one boot."""
    w, ctx, base, series = series_run(tmp_path, parser_dir, (2, 1))
    labels = []

    def again(c, k, label, pairs):
        labels.append((k.cells[0].kernel, label))
        return Again(boot(ctx, k, FAILS if k is series or label == "-confirm" else PASSES))

    confirm.series(ctx, series, again)
    assert ("7.3+series", "-confirm3") in labels
    assert verdict_of(w)["verdict"] == "regression"


def test_a_base_failing_it_as_often_as_the_series_is_no_regression(tmp_path, parser_dir):
    """Booted beside the series, the base fails it every time too: its rate
    is the series' own, and five boots of the series cannot tell them apart."""
    w, ctx, base, series = series_run(tmp_path, parser_dir, (2, 1))
    confirm.series(ctx, series, lambda c, k, label, pairs: Again(boot(ctx, k, FAILS)))
    row = verdict_of(w)
    assert row["verdict"] == "flaky" and "the base fails it too often" in row["series_reason"]


def test_each_page_sizes_list_is_its_own(tmp_path, parser_dir):
    """The three kernels of a run share a label ("7.3"): one page size's flaky
    results never replace another's."""
    w, ctx, k = run(tmp_path, parser_dir)
    noise_run(ctx, k, FAILS, PASSES)
    w.set_flaky("7.3", "4k", [])
    assert any(f.page_size == "64k" for f in w.doc.flaky)

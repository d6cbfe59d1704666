"""Verdicts and reports, replayed from results recorded by real series runs:
neg-exec-text (a regression on 4K), no-build (a build break found by
--each-commit) and benign (no change)."""

import json
from pathlib import Path

import pytest

from foliofarm import report
from foliofarm.results import read, schema
from foliofarm.report import render, sections, tables
from foliofarm.judge import compare

DATA = Path(__file__).resolve().parent / "data" / "results"


def doc(name: str) -> dict:
    return json.loads((DATA / f"{name}.json").read_text())


@pytest.mark.parametrize("base,new,want", [
    ("pass", "pass", "pass"),
    ("pass", "fail", "regression"),
    ("pass", "xfail", "regression"),
    ("xpass", "fail", "regression"),
    ("fail", "pass", "fixed"),
    ("xfail", "pass", "fixed"),
    ("xfail", "xpass", "fixed"),
    ("fail", "fail", "fail"),
    ("xfail", "xfail", "xfail"),
    ("xfail", "fail", "fail"),
    ("pass", "error", "error"),
    ("error", "pass", "error"),
    ("skip", "pass", "skip"),
    ("pass", None, "incomplete"),
])
def test_verdict_table(base, new, want):
    assert compare.verdict(base, new) == want


def test_regression_from_a_recorded_negative_control():
    d = doc("neg-exec-text-4k")
    rows = [r.model_dump() for r in compare.verdicts(read.typed(d))]
    assert [{k: v for k, v in r.items() if k != "changed"} for r in rows] == \
        [schema.VerdictRow.model_validate(r).model_dump(exclude={"changed"}) for r in d["verdicts"]]
    by = {(r["fs"], r["check"]): r for r in rows}
    et = by[("xfs", "exec-text")]
    assert et["verdict"] == "regression"
    figs = {f["metric"]: f for f in et["figures"]}
    assert figs["aligned_pct"]["base"] == 100.0 and figs["aligned_pct"]["series"] == 0.0
    assert figs["aligned_pct"]["delta"] == -100.0
    assert figs["max_folio_kb"]["delta"] == -60
    assert by[("erofs", "mmap-miss")]["verdict"] == "pass"
    assert compare.exit_status(read.typed(d)) == 1


def test_a_new_splat_is_a_regression():
    d = doc("benign-4k")
    assert compare.exit_status(read.typed(d)) == 0
    for cell in d["cells"]:
        if cell["kernel"].endswith("+series"):
            for c in cell["checks"]:
                if c["name"] == "console":
                    c.update(outcome="fail", reason="1 splat(s): WARNING: at mm/filemap.c",
                             metrics={"splats": 1})
    d["verdicts"] = [r.model_dump() for r in compare.verdicts(read.typed(d))]
    console = [r for r in d["verdicts"] if r["check"] == "console"]
    assert console and all(r["verdict"] == "regression" for r in console)
    assert compare.exit_status(read.typed(d)) == 1


def test_build_break_and_first_broken_commit():
    d = doc("no-build-4k")
    assert {r["verdict"] for r in [r.model_dump() for r in compare.verdicts(read.typed(d))]} == {"build-broken"}
    assert compare.exit_status(read.typed(d)) == 1
    title, secs = sections.build(read.typed(d))
    md = render.to_markdown(title, secs)
    assert "First commit that does not build: 2" in md
    assert "mm/filemap.c:3995:25: error: implicit declaration" in md or "error: implicit declaration" in md


def test_strict_style_fails_on_checkpatch_findings_only_when_asked():
    d = doc("benign-4k")
    d["checkpatch"][0].update(errors=0, warnings=2)
    assert compare.exit_status(read.typed(d)) == 0
    assert compare.exit_status(read.typed(d), strict_style=True) == 1


def test_incomplete_run_without_regression_is_exit_3():
    d = doc("benign-4k")
    d["complete"] = False
    assert compare.exit_status(read.typed(d)) == 3


def test_report_tables_in_the_mailing_list_shape():
    d = doc("neg-exec-text-4k")
    d["verdicts"] = [r.model_dump() for r in compare.verdicts(read.typed(d))]
    header, rows = tables.check_table(read.typed(d), "exec-text")
    assert header == ["exec-text", "4k xfs base", "4k xfs series", "4k erofs base", "4k erofs series"]
    table = {r[0]: r[1:] for r in rows}
    assert table["thp-aligned-64kB"] == ["100.0%", "0%", "100.0%", "0%"]
    assert table["base-page-4kB"] == ["0%", "100.0%", "0%", "100.0%"]
    assert table["outcome"] == ["pass", "fail", "pass", "fail"]
    vh, vrows = tables.verdict_matrix(read.typed(d))
    assert vh == ["check", "4k-xfs", "4k-erofs"]
    assert ["exec-text", "regression", "regression"] in vrows
    title, secs = sections.build(read.typed(d))
    md = render.to_markdown(title, secs)
    assert md.startswith("# foliofarm: 7.3 vs 7.3+series")
    assert "| 4k-xfs | exec-text | regression | pass → fail | !aligned_pct 100.0 → 0.0 (-100.0)" in md
    html = render.to_html(title, secs)
    assert "<td class='v-regression'>regression</td>" in html
    # the colour comes from the verdict: "pass → fail" is not painted as a pass
    assert "<td class=''>pass → fail</td>" in html
    assert "class='v-pass'>pass → fail" not in html and "class='pass" not in html
    # text columns left, figure columns right
    assert "<td class='num'>100.0%</td>" in html and "td.num,th.num{text-align:right}" in html


def test_report_has_no_none_cells_full_reasons_plots_in_page_order_and_the_machine(tmp_path):
    d = doc("neg-exec-text-4k")
    d["verdicts"] = [r.model_dump() for r in compare.verdicts(read.typed(d))]
    d["verdicts"][0]["series"] = None          # a side that is missing
    long = "make failed: " + "x" * 500 + " THE END"
    d["verdicts"][1].update(verdict="build-broken", series_reason=long)
    d["machine"] = {"cpu": "Test CPU", "qemu": "QEMU emulator version 9", "compiler": "gcc 14"}
    plots = {("exec-text", p): b"\x89PNG" for p in ("64k", "16k", "4k")}
    title, secs = sections.build(read.typed(d), plots)
    md = render.to_markdown(title, secs)
    assert "None" not in md
    assert "THE END" in md                                   # the reason in full
    assert md.index("exec-text-4k.png") < md.index("exec-text-16k.png") < md.index("exec-text-64k.png")
    assert "| qemu | QEMU emulator version 9 |" in md and "| cpu | Test CPU |" in md


def test_report_txt_fits_a_list_reply():
    from foliofarm.report import text
    d = doc("neg-exec-text-4k")
    d["verdicts"] = [r.model_dump() for r in compare.verdicts(read.typed(d))]
    out = text.render(read.typed(d))
    lines = out.splitlines()
    assert max(map(len, lines)) <= 72
    assert "4k-xfs exec-text: regression (pass -> fail)" in out
    assert "!aligned_pct 100.0 -> 0.0 (-100.0)" in out
    i = lines.index("exec-text, 4k pages: share of the mapped text by folio size")
    assert lines[i + 2] == "|                      |   xfs |   xfs | erofs | erofs |"
    assert lines[i + 3] == "|                      |  base | after |  base | after |"
    assert "| thp-aligned-64kB     |  100% |    0% |  100% |    0% |" in lines
    assert "| cont-aligned-64kB    |  100% |    0% |  100% |    0% |" in lines
    assert "ERROR:MISSING_SIGN_OFF" in out and "$ foliofarm run" in out


def test_report_writes_md_html_and_plots(tmp_path):
    d = doc("neg-exec-text-4k")
    md, page = report.write(tmp_path, read.typed(d))
    assert md.is_file() and page.is_file()
    pngs = sorted(p.name for p in (tmp_path / "plots").iterdir())
    assert pngs == ["exec-text-4k.png"]
    assert (tmp_path / "plots" / "exec-text-4k.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "data:image/png;base64," in page.read_text()


def test_report_of_a_plain_run_and_the_report_command(tmp_path):
    from foliofarm.cli import main
    d = doc("benign-4k")
    for key in ("sides", "series", "verdicts", "checkpatch"):
        d.pop(key)
    d["cells"] = [c for c in d["cells"] if c["kernel"] == "7.3"]
    (tmp_path / "results.json").write_text(json.dumps(d))
    assert main(["report", str(tmp_path)]) == 0
    md = (tmp_path / "report.md").read_text()
    assert md.startswith(f"# foliofarm run {d['run_id']}")
    assert "| exec-text | 4k xfs 7.3 |" in md and "## Verdicts" not in md
    assert main(["report", str(tmp_path / "nope")]) == 2


def test_ci_shards_merge_into_one_report(tmp_path):
    """Two shards of a matrix run (one cell each) make one report with both cells."""
    from foliofarm.cli import main
    full = doc("neg-exec-text-4k")
    shards = []
    for fs in ("xfs", "erofs"):
        d = json.loads(json.dumps(full))
        d["cells"] = [c for c in d["cells"] if c["fs"] == fs]
        d["run_id"] = f"shard-{fs}"
        d["noise"] = {f"4k-{fs}": {"exec-text": {"mapped_pages": 0.0}}}
        d["verdicts"] = [r.model_dump() for r in compare.verdicts(read.typed(d))]
        shard = tmp_path / fs
        shard.mkdir()
        (shard / "results.json").write_text(json.dumps(d))
        shards.append(str(shard))
    assert main(["report", *shards]) == 2                      # several need --out
    assert main(["report", *shards, "--out", str(tmp_path / "all")]) == 0
    merged = json.loads((tmp_path / "all" / "results.json").read_text())
    assert merged["merged_from"] == ["shard-xfs", "shard-erofs"]
    assert set(merged["noise"]) == {"4k-xfs", "4k-erofs"}         # each shard's own noise
    assert read.typed(merged).verdicts == compare.verdicts(read.typed(full))
    assert len(merged["kernels"]) == len(full["kernels"])      # the shared kernels once
    assert "| check | 4k-xfs | 4k-erofs |" in (tmp_path / "all" / "report.md").read_text()
    # one JUnit file for the CI server: every shard's cells and the verdicts
    import xml.etree.ElementTree as ET
    suites = {s.get("name"): s for s in ET.parse(tmp_path / "all" / "junit.xml").getroot()}
    assert {"4k-xfs-7.3", "4k-erofs-7.3", "4k-xfs-7.3+series", "4k-erofs-7.3+series"} <= set(suites)
    verdicts = suites["verdicts 7.3 -> 7.3+series"]
    assert verdicts.get("tests") == str(len(merged["verdicts"])) and verdicts.get("failures") != "0"
    other = json.loads((tmp_path / "xfs" / "results.json").read_text())
    other["sides"]["series"]["kernel"] = "7.2"
    (tmp_path / "xfs" / "results.json").write_text(json.dumps(other))
    assert main(["report", *shards, "--out", str(tmp_path / "bad")]) == 2


def _pair(doc_name: str, check: str, fs: str = "xfs"):
    d = doc(doc_name)
    base, series = d["sides"]["base"]["kernel"], d["sides"]["series"]["kernel"]
    out = {}
    for cell in d["cells"]:
        for c in cell["checks"]:
            if c["name"] == check and cell["fs"] == fs:
                out[cell["kernel"]] = c
    return d, out[base], out[series]


def test_a_figure_that_moves_inside_the_bounds_is_changed_or_a_regression():
    """exec-text's share of aligned text 100% -> 92.1% stays inside the >= 90
    bound, but it moved the wrong way beyond its 0.5-point tolerance."""
    d, base, series = _pair("benign-4k", "exec-text")
    assert base["outcome"] == series["outcome"] == "pass"
    series["metrics"]["aligned_pct"] = 92.1
    rows = {(r["fs"], r["check"]): r for r in [r.model_dump() for r in compare.verdicts(read.typed(d))]}
    r = rows[("xfs", "exec-text")]
    assert r["verdict"] == "regression"
    moved = {f["metric"]: f for f in r["changed"]}
    assert moved["aligned_pct"]["regression"] and moved["aligned_pct"]["delta"] == -7.9
    assert "exec_folio_order" in moved["aligned_pct"]["guards"]
    # a move the right way, or of a figure with no direction, is news but no regression
    series["metrics"]["aligned_pct"] = base["metrics"]["aligned_pct"]
    series["metrics"]["mapped_pages"] += 16
    r = {(x["fs"], x["check"]): x for x in [r.model_dump() for r in compare.verdicts(read.typed(d))]}[("xfs", "exec-text")]
    assert r["verdict"] == "changed" and not any(f["regression"] for f in r["changed"])
    d["verdicts"] = [r.model_dump() for r in compare.verdicts(read.typed(d))]
    assert compare.exit_status(read.typed(d)) == 0


def test_a_larger_exec_folio_is_a_regression_of_an_exact_figure():
    d, base, series = _pair("benign-4k", "exec-text")
    series["metrics"]["max_folio_kb"] = 128
    series["metrics"]["folio_kb_hist"] = {"128": series["metrics"]["mapped_pages"]}
    r = {(x["fs"], x["check"]): x for x in [r.model_dump() for r in compare.verdicts(read.typed(d))]}[("xfs", "exec-text")]
    assert r["verdict"] == "regression"
    assert {f["metric"] for f in r["changed"] if f["regression"]} >= {"max_folio_kb", "folio_kb_hist.128"}
    d["verdicts"] = [r.model_dump() for r in compare.verdicts(read.typed(d))]
    assert compare.exit_status(read.typed(d)) == 1


def test_noise_measured_on_the_base_absorbs_a_move_within_it():
    d, base, series = _pair("benign-4k", "exec-text")
    series["metrics"]["mapped_pages"] += 2
    d["noise"] = {"4k-xfs": {"exec-text": {"mapped_pages": 2.0}}}
    r = {(x["fs"], x["check"]): x for x in [r.model_dump() for r in compare.verdicts(read.typed(d))]}[("xfs", "exec-text")]
    assert r["verdict"] == "pass" and r["changed"] == []
    series["metrics"]["mapped_pages"] += 1
    r = {(x["fs"], x["check"]): x for x in [r.model_dump() for r in compare.verdicts(read.typed(d))]}[("xfs", "exec-text")]
    assert r["verdict"] == "changed"


def test_every_declared_figure_names_the_code_it_guards():
    from foliofarm.judge import catalogue, figures
    for name in catalogue.by_name():
        for spec in figures.specs(name):
            assert spec.guards and "/" in spec.guards, (name, spec.pattern)


def test_none_is_judged_as_declared():
    """mmap-miss: exec_first_without_ra None means exec readahead never stopped:
    a number there is a regression."""
    from foliofarm.judge import figures
    rows = figures.compare("mmap-miss", {"exec_first_without_ra": None}, {"exec_first_without_ra": 100}, {})
    assert rows[0]["regression"]
    rows = figures.compare("mmap-miss", {"exec_first_without_ra": 100}, {"exec_first_without_ra": None}, {})
    assert not rows[0]["regression"]


def test_a_move_a_second_series_boot_does_not_repeat_is_noise():
    """The series side boots again for moved figures (measure.confirm_moves): a
    move measured back at the base's value is timing, counted as that cell's
    noise and listed as unconfirmed; a move that repeats stays `changed`."""
    from foliofarm import matrix
    from foliofarm.judge import catalogue
    from foliofarm.judge.noise import moved_pairs, settle_moves
    d, base, series = _pair("benign-4k", "exec-text")
    series["metrics"]["mapped_pages"] += 16
    series["metrics"]["max_folio_kb"] = 128
    page = matrix.page_sizes()["4k"]
    fs = matrix.filesystems()["xfs"]
    cell = matrix.Cell(page, fs, d["sides"]["series"]["kernel"])
    chk = catalogue.by_name()["exec-text"]
    (c, k, moved), = moved_pairs(read.typed(d), [cell], [chk])
    assert {f["metric"] for f in moved} == {"mapped_pages", "max_folio_kb"}
    # the second boot measures mapped_pages as on the base, max_folio_kb as on the first boot
    again = dict(series["metrics"], mapped_pages=base["metrics"]["mapped_pages"])
    (u,), noise = settle_moves(cell, "exec-text", moved, again)
    assert u.metric == "mapped_pages" and noise == {"4k-xfs": {"exec-text": {"mapped_pages": 16.0}}}
    d["unconfirmed"] = [u.model_dump(exclude_unset=True)]         # as the run records them
    d.setdefault("noise", {}).setdefault("4k-xfs", {}).setdefault("exec-text", {}).update(noise["4k-xfs"]["exec-text"])
    r = {(x["fs"], x["check"]): x for x in [r.model_dump() for r in compare.verdicts(read.typed(d))]}[("xfs", "exec-text")]
    assert [f["metric"] for f in r["changed"]] == ["max_folio_kb"] and r["verdict"] == "regression"
    d["verdicts"] = [r.model_dump() for r in compare.verdicts(read.typed(d))]
    assert "Unconfirmed moves" in render.to_markdown(*sections.build(read.typed(d)))


def test_a_killed_runs_results_get_their_verdicts_from_report(tmp_path):
    """Each check's flush leaves the verdicts out (they are judged from the
    cells); `foliofarm report` on the results of a run killed before its end
    judges them, and the end of a run writes them."""
    from foliofarm.cli import main
    from foliofarm.results.writer import ResultsWriter
    from foliofarm.run.closing import close
    d = doc("neg-exec-text-4k")
    w = ResultsWriter(tmp_path, ["foliofarm", "run"], run_id="killed")
    w.doc = read.typed({**read.written(w.doc), **{k: v for k, v in d.items()
                                                  if k not in ("verdicts", "run_id", "complete")}})
    w.flush()
    on_disk = json.loads((tmp_path / "killed" / "results.json").read_text())
    assert "verdicts" not in on_disk and on_disk["cells"] == d["cells"]
    assert main(["report", str(tmp_path / "killed")]) == 0
    md = (tmp_path / "killed" / "report.md").read_text()
    assert "## Verdicts" in md and "regression" in md
    close(w, complete=True)
    final = json.loads((tmp_path / "killed" / "results.json").read_text())
    assert [r["verdict"] for r in final["verdicts"]] == [r["verdict"] for r in d["verdicts"]]


def test_a_timing_figure_never_makes_news():
    """thpmaps_seconds, guest_seconds: how long the guest took under TCG is
    shown beside the verdict, never judged."""
    d, base, series = _pair("benign-4k", "exec-text")
    series["metrics"]["guest_seconds"] = base["metrics"].get("guest_seconds", 1) + 9.5
    series["metrics"]["thpmaps_seconds"] = 6.6
    base["metrics"]["thpmaps_seconds"] = 9.35
    series["metrics"]["transfer_seconds"] = 40.0
    r = {(x["fs"], x["check"]): x for x in [r.model_dump() for r in compare.verdicts(read.typed(d))]}[("xfs", "exec-text")]
    assert r["verdict"] == "pass" and r["changed"] == []


def test_every_figure_of_real_runs_has_a_kind_and_timing_is_never_behaviour():
    """Audit over the figures real runs recorded (tests/data/dumps, results):
    anything in seconds is timing, whatever check reports it."""
    from foliofarm.judge import figures
    names = set()
    for p in sorted((DATA.parent / "dumps").glob("*.json")):
        rec = json.loads(p.read_text())
        names |= {(rec["check"], k) for k in rec["metrics"]}
    for name in ("benign-4k", "neg-exec-text-4k", "no-build-4k"):
        for cell in doc(name)["cells"]:
            names |= {(c["name"], k) for c in cell["checks"] for k in c["metrics"]}
    names |= {("thpmaps", "thpmaps_seconds"), ("mm-selftests", "guest_seconds")}
    assert len(names) > 100
    for check, name in names:
        kind = figures.kind_of(check, name)
        assert kind in figures.KINDS
        if "second" in name or name.endswith("_s") or "time" in name:
            assert kind == "timing", (check, name)
    for name in ("pass", "inner_pass", "xfail", "skip"):
        assert figures.kind_of("mm-selftests", name) == "summary"


def _died(doc, kernel, page):
    for cell in doc["cells"]:
        if cell["kernel"] == kernel and cell["page_size"] == page:
            for c in cell["checks"]:
                c.update(outcome="fail", boot_failed=True, metrics={},
                         reason="kernel hung or crashed: boot failed: guest died during 'boot' "
                                "(QEMU exited, kernel panic): bug: kernel BUG at mm/filemap.c:1102!")


def test_a_series_kernel_that_dies_booting_is_a_regression_quoting_it():
    d = doc("benign-4k")
    _died(d, d["sides"]["series"]["kernel"], "4k")
    rows = [r for r in [r.model_dump() for r in compare.verdicts(read.typed(d))] if not r.get("subtest_of")]
    assert rows and {r["verdict"] for r in rows} == {"regression"}
    assert all("kernel BUG at mm/filemap.c" in r["series_reason"] for r in rows)
    d["verdicts"] = [r.model_dump() for r in compare.verdicts(read.typed(d))]
    assert compare.exit_status(read.typed(d)) == 1


def test_both_kernels_dying_while_booting_is_an_error_not_the_series():
    d = doc("benign-4k")
    _died(d, d["sides"]["series"]["kernel"], "4k")
    _died(d, d["sides"]["base"]["kernel"], "4k")
    rows = [r for r in [r.model_dump() for r in compare.verdicts(read.typed(d))] if not r.get("subtest_of")]
    assert {r["verdict"] for r in rows} == {"error"}
    assert all(r["series_reason"].startswith("both kernels died while booting") for r in rows)
    d["verdicts"] = [r.model_dump() for r in compare.verdicts(read.typed(d))]
    assert compare.exit_status(read.typed(d)) == 3


def test_the_list_reply_says_once_per_cell_that_a_kernel_died_booting():
    from foliofarm.report import text
    d = doc("benign-4k")
    _died(d, d["sides"]["series"]["kernel"], "4k")
    d["verdicts"] = [r.model_dump() for r in compare.verdicts(read.typed(d))]
    out = text.render(read.typed(d))
    assert "4k-xfs: every check regression (3 checks): the series kernel died while booting" in \
        " ".join(out.split())
    assert out.count("kernel BUG at mm/filemap.c:1102!") == 1


def bailouts() -> tuple[schema.CheckResult, schema.CheckResult]:
    rec = json.loads((DATA.parent / "checks" / "selftests-16k-xfs-bailouts.json").read_text())["checks"]
    return schema.CheckResult(**rec["base"]), schema.CheckResult(**rec["series"])


def test_a_known_failure_stopping_one_result_sooner_is_not_fixed():
    """Recorded: split_huge_page_test bailed out the known way after 8 results
    on the base, after 7 on the series; neither the results it never printed
    nor a name past the cut list of failures is a failure gone away."""
    base, series = bailouts()
    rows = [r.model_dump() for r in compare.subtest_rows("16k", "xfs", "mm-selftests", base, series)]
    split = next(r for r in rows if r["check"] == "mm-selftests: split_huge_page_test /tmp/mm-fs")
    assert split["verdict"] == "xfail"
    assert not [r for r in rows if r["verdict"] in ("fixed", "regression")]


def test_a_named_failure_that_passes_on_the_series_is_still_fixed():
    base, series = bailouts()
    b = next(t for t in base.subtests if t.name.startswith("split_huge_page_test"))
    n = next(t for t in series.subtests if t.name.startswith("split_huge_page_test"))
    b = b.model_copy(update={"failed": ["split to order 2 of a 32M THP"]})
    n = n.model_copy(update={"failed": []})
    assert compare._subtest_verdict(b, n)[0] == "fixed"

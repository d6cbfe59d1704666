"""The emulation A/B (selfcheck/emulation.py) on documents real runs wrote: a
run's guests and verdicts summed from its boots, two runs compared by
tools/same_results.py, the table saved and read back; and --tcg-cpu taken
only as QEMU's -cpu would take it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from foliofarm.boot import qemu
from foliofarm.errors import UsageError
from foliofarm.results.read import read
from foliofarm.selfcheck import emulation
from foliofarm.selfcheck.emulation import Measured

DATA = Path(__file__).parent / "data" / "results"
SCHEDULED = DATA / "scheduled-run-7.3.json"      # 3x3, every default check, its guests timed


def test_a_runs_guests_and_verdicts_are_summed_from_its_boots():
    doc = read(SCHEDULED)
    m = emulation.measured(doc, Measured("x", "", []))
    timed = [b for b in doc.boots if b.reused is None and b.guest_seconds is not None]
    assert m.guests == len(timed) == 24
    assert m.cpu_s == pytest.approx(sum(b.cpu_seconds for b in timed), abs=0.1)
    assert 900 < m.cpu_s < 1000           # the run's own record: 944 CPU s
    assert sum(m.part_cpu_s.values()) == pytest.approx(m.cpu_s, abs=0.5)
    assert set(m.part_cpu_s) == {"own", "tree", "page", "race"}
    assert m.shell_s is not None and 1 < m.shell_s < 120
    assert sum(m.outcomes.values()) == sum(len(c.checks) for c in doc.cells) > 100
    assert m.outcomes["pass"] > 100


def test_the_same_run_compares_the_same_and_a_changed_figure_does_not(tmp_path):
    same = tmp_path / "same.json"
    shutil.copy(SCHEDULED, same)
    m = Measured("x", "", [])
    emulation.compare(SCHEDULED, same, m)
    assert m.same is True and m.differences == [] and "0 difference(s)" in m.compared
    raw = json.loads(SCHEDULED.read_text())
    cell = next(c for c in raw["cells"] if c["page_size"] == "4k" and c["fs"] == "ext4")
    chk = next(c for c in cell["checks"] if c["name"] == "exec-text")
    chk["outcome"] = "fail"
    moved = tmp_path / "moved.json"
    moved.write_text(json.dumps(raw))
    emulation.compare(SCHEDULED, moved, m)
    assert m.same is False
    assert any("4k-ext4 exec-text: outcome pass -> fail" in d for d in m.differences)
    assert m.compared.endswith(f"{len(m.differences)} difference(s)")


def test_the_table_is_saved_and_read_back(tmp_path):
    doc = read(SCHEDULED)
    base = emulation.measured(doc, Measured(emulation.BASE, "the default", []))
    base.wall_s = 500.0
    other = emulation.measured(doc, Measured("pauth-off", "pointer authentication off",
                                             ["--tcg-cpu", "max,pauth=off"]))
    other.wall_s, other.same, other.compared = 400.0, True, "108 checks compared: 0 difference(s)"
    report = tmp_path / "emulation.json"
    emulation.save(report, [base, other])
    back = emulation.load(report)
    assert back == [base, other]
    rows = emulation.rows(back)
    assert rows[1][3] == "0.80" and rows[1][6] == "1.00" and rows[1][-1] == "yes"
    md = emulation.markdown(back).splitlines()
    assert len(md) == 4 and md[3].startswith("| pauth-off |")
    report.write_text(json.dumps({"version": emulation.VERSION, "variants": [{"nom": 1}]}))
    with pytest.raises(SystemExit, match="not this farm's emulation results"):
        emulation.load(report)


def test_every_variant_changes_one_thing_from_the_default():
    names = [v.name for v in emulation.VARIANTS]
    assert names[0] == emulation.BASE and len(set(names)) == len(names)
    assert emulation.VARIANTS[0].args == ()
    from foliofarm.cli import parser
    default = vars(parser().parse_args(["run"]))
    for v in emulation.VARIANTS[1:]:
        # each the run's own options, changing what the default run has
        changed = {k for k, x in vars(parser().parse_args(["run", *v.args])).items() if default.get(k) != x}
        assert changed and changed <= {"guests", "tree_guests", "tcg_cpu", "tcg_threads", "cpus",
                                       "extra_config"}, (v.name, changed)
        assert v.builds == ("extra_config" in changed), v.name


@pytest.mark.parametrize("spec", ["max", qemu.TCG_CPU, "max,pauth=off", "max,sve=off,pauth-impdef=on",
                                  "neoverse-n1"])
def test_tcg_cpu_takes_what_qemu_takes(spec):
    assert qemu.cpu_model(spec) == spec
    assert qemu.Machine(kernel=Path("/k"), initrd=Path("/i"), accel="tcg", tcg_cpu=spec).accel_argv()[-1] == spec


@pytest.mark.parametrize("spec,said", [("", "MODEL"), ("max;reboot", "MODEL"), ("max,pauth", "MODEL"),
                                       ("max,=on", "MODEL"), ("cortex-z99", "emulates no CPU")])
def test_tcg_cpu_refuses_what_qemu_would_not_take(spec, said):
    if said == "emulates no CPU" and not qemu.cpu_models():
        pytest.skip("no QEMU here to list its CPUs")
    with pytest.raises(UsageError, match=said):
        qemu.cpu_model(spec)


def test_compare_again_judges_the_saved_runs_anew_and_keeps_every_row(tmp_path):
    """The guests-6 run and the default's, as they wrote results.json: saved as
    different (same_results then counted a test judged `flaky` as news),
    compared again they are the same; the rows and their figures are kept."""
    import gzip
    rows = []
    for name in ("default", "guests-6"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "results.json").write_bytes(
            gzip.decompress((DATA / f"emulation-{name}-7.3.json.gz").read_bytes()))
        rows.append(Measured(name, name, [], exit_status=0, wall_s=961.2 if name == "default" else 1339.9,
                             results=str(tmp_path / name), same=None if name == "default" else False,
                             differences=["4k-xfs mm-selftests: outcome pass -> flaky"]))
    rows.insert(1, Measured("pauth-off", "kept as measured", [], exit_status=0, wall_s=1000.4, same=True,
                            results=str(tmp_path / "gone")))   # its run folder pruned since: not compared
    report = tmp_path / "emulation.json"
    emulation.save(report, rows)
    assert emulation.compare_again(report) == 0
    again = {m.name: m for m in emulation.load(report)}
    assert list(again) == ["default", "pauth-off", "guests-6"]
    assert again["guests-6"].same is True and again["guests-6"].differences == []
    assert "0 difference(s)" in again["guests-6"].compared and again["guests-6"].wall_s == 1339.9
    assert again["pauth-off"].same is True and again["pauth-off"].wall_s == 1000.4


def test_a_rerun_stopped_part_way_keeps_the_rows_it_had_not_replaced(tmp_path):
    """`make emulation EMULATION_ARGS='--only default,sve-off'` stopped after
    the default's new run: sve-off's saved row stays, the default's is the new
    one, and each row names its own run folder and when it ran."""
    old = [Measured("default", "d", [], wall_s=961.2, results="results/emulation/default/a", started="00:41"),
           Measured("sve-off", "s", ["--tcg-cpu", "max,sve=off"], wall_s=1104.2, started="08:43"),
           Measured("one-vcpu", "o", ["--cpus", "1"], wall_s=1855.6, started="09:01")]
    new = Measured("default", "d", [], wall_s=1622.5, results="results/emulation/default/b", started="12:34")
    kept = [m for m in old if m.name != "sve-off" and m.name != "default"]
    rows = emulation.with_kept(emulation.in_order([*kept, new]), old)
    assert [(m.name, m.wall_s, m.started) for m in rows] == [
        ("default", 1622.5, "12:34"), ("sve-off", 1104.2, "08:43"), ("one-vcpu", 1855.6, "09:01")]
    emulation.save(tmp_path / "emulation.json", rows)
    assert [m.started for m in emulation.load(tmp_path / "emulation.json")] == ["12:34", "08:43", "09:01"]


def test_interleaved_runs_the_default_either_side_of_each_variant(tmp_path, monkeypatch):
    """--interleave: a variant's kernels built first, then the default, a
    variant, the default again, the next variant, the default: each variant's
    ratios are taken against the mean of the default's runs either side of it
    (the host's speed drifts), and a stop part way keeps the brackets done."""
    doc = read(SCHEDULED)
    calls, walls = [], [1000.0, 1300.0, 1200.0, 2000.0]

    def timed(ui, v, a, base, built=False):
        calls.append((v.name, base.started if base else None, built))
        if not walls:
            raise KeyboardInterrupt        # ^C during the fifth run
        m = emulation.measured(doc, Measured(v.name, v.what, list(v.args), exit_status=0,
                                             started=f"run{len(calls)}", results=f"r{len(calls)}"))
        m.wall_s, m.cpu_s = walls.pop(0), float(len(calls) * 100)
        return m

    def stop(ui, v, a, base, built=False):
        raise KeyboardInterrupt

    monkeypatch.setattr(emulation, "timed", timed)
    monkeypatch.setattr(emulation, "build_first", lambda v, results, run_args: calls.append((v.name, "build", None)))
    import argparse
    import io
    from rich.console import Console
    ui = Console(file=io.StringIO())
    a = argparse.Namespace(results=tmp_path, run_args=[], only="sve-off,nohz-idle")
    kept = [Measured("default", "d", [], wall_s=961.2, started="old"),
            Measured("pauth-off", "p", [], wall_s=1000.4, started="old")]
    with pytest.raises(KeyboardInterrupt):
        emulation.interleaved(ui, {"sve-off", "nohz-idle"}, a, kept)
    assert calls == [("nohz-idle", "build", None), ("default", None, False), ("sve-off", "run2", True),
                     ("default", None, False), ("nohz-idle", "run4", True), ("default", None, False)]
    saved = {m.name: m for m in emulation.load(tmp_path / "emulation.json")}
    assert list(saved) == ["default", "pauth-off", "sve-off"]     # nohz-idle's bracket never ended
    assert saved["default"].started == "run4" and saved["pauth-off"].started == "old"
    sve = saved["sve-off"]
    assert [b["started"] for b in sve.beside] == ["run2", "run4"]
    row = next(r for r in emulation.rows(list(saved.values())) if r[0] == "sve-off")
    # sve-off: 1300 s and 300 CPU s against the defaults' 1000/1200 s and 200/400 CPU s
    assert row[3] == f"{1300 / 1100:.2f}" and row[6] == "1.00" and row[7] == "200 / 400"
    monkeypatch.setattr(emulation, "timed", stop)
    with pytest.raises(KeyboardInterrupt):
        emulation.interleaved(ui, {"sve-off"}, a, list(saved.values()))
    assert emulation.load(tmp_path / "emulation.json")[2].beside == sve.beside   # nothing lost

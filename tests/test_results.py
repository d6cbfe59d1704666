"""results.json, junit.xml, judging from expectations data, and exit codes."""

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from foliofarm.matrix import cell_of
from foliofarm import matrix
from foliofarm.judge import catalogue, checks
from foliofarm.results.judged import result
from foliofarm.matrix import Cell
from foliofarm.judge.compare import exit_status
from foliofarm.results import read
from foliofarm.results.writer import ResultsWriter
from foliofarm.run.closing import close


def cell(page="4k", fs="xfs", kernel="7.3") -> Cell:
    return Cell(matrix.page_sizes()[page], matrix.filesystems()[fs], kernel)


def test_results_are_written_as_they_arrive(tmp_path):
    w = ResultsWriter(tmp_path, ["foliofarm", "run"], run_id="r1")
    doc = json.loads((tmp_path / "r1" / "results.json").read_text())
    assert doc["complete"] is False and doc["cells"] == []
    w.record(cell(), result("exec-text", "pass", "", {"aligned_pct": 100.0}))
    doc = json.loads((tmp_path / "latest" / "results.json").read_text())
    c = doc["cells"][0]
    assert (c["id"], c["page_size"], c["fs"], c["kernel"]) == ("4k-xfs-7.3", "4k", "xfs", "7.3")
    assert c["checks"] == [{"name": "exec-text", "outcome": "pass", "reason": "",
                            "metrics": {"aligned_pct": 100.0}}]
    assert close(w, True) == 0


def test_result_files_follow_the_umask(tmp_path):
    """Results are for the team to read: the umask decides, not mkstemp's 0600."""
    from foliofarm import util
    w = ResultsWriter(tmp_path, ["foliofarm", "run"], run_id="r1")
    w.record(cell(), result("exec-text", "pass", "", {}))
    for name in ("results.json", "junit.xml"):
        mode = (tmp_path / "r1" / name).stat().st_mode & 0o777
        assert mode == 0o666 & ~util.UMASK, (name, oct(mode))


def test_junit_has_a_suite_per_cell_and_outcomes(tmp_path):
    w = ResultsWriter(tmp_path, ["foliofarm"], run_id="r2")
    w.record(cell(), result("exec-text", "fail", "aligned_pct 3.0 (wanted >= 90)"))
    w.record(cell(fs="ext4"), result("exec-text", "xfail", "no exec_folio_order"))
    w.record(cell(fs="erofs"), result("exec-text", "error", "guest hung"), excerpt="INFO: task")
    close(w, True)
    root = ET.parse(tmp_path / "r2" / "junit.xml").getroot()
    suites = {s.get("name"): s for s in root}
    assert suites["4k-xfs-7.3"].get("failures") == "1"
    assert suites["4k-ext4-7.3"].find("testcase/skipped") is not None
    assert suites["4k-erofs-7.3"].find("testcase/error").text == "INFO: task"
    # Jenkins splits a classname at its dots: one package, one class per cell
    classes = {c.get("classname") for c in root.iter("testcase")}
    assert classes == {"foliofarm.4k-xfs-7_3", "foliofarm.4k-ext4-7_3", "foliofarm.4k-erofs-7_3"}
    assert all(c.get("time") is not None for c in root.iter("testcase"))


def test_junit_has_the_verdicts_of_a_series_run_with_times():
    from foliofarm.results.junit import junit_xml
    d = json.loads((Path(__file__).parent / "data" / "results" / "neg-exec-text-4k.json").read_text())
    root = ET.fromstring(junit_xml(read.typed(d)).split("\n", 1)[1])
    suites = {s.get("name"): s for s in root}
    v = suites["verdicts 7.3 -> 7.3+series"]
    cases = {(c.get("classname"), c.get("name")): c for c in v.iter("testcase")}
    reg = cases[("foliofarm.verdicts_4k-xfs", "exec-text")]
    assert reg.find("failure") is not None and "aligned_pct 100.0 -> 0.0" in reg.find("failure").get("message")
    assert cases[("foliofarm.verdicts_4k-xfs", "mmap-miss")].find("failure") is None
    timed = [float(c.get("time")) for s in root for c in s.iter("testcase") if s is not v]
    assert any(t > 0 for t in timed)


def test_exit_status():
    """On a real default run's document, its first cell's outcomes set by hand."""
    real = json.loads((Path(__file__).parent / "data" / "results" / "default-run-7.3.json").read_text())

    def doc(*outcomes, complete=True, errors=()):
        d = json.loads(json.dumps(real))
        d.update(complete=complete, errors=list(errors))
        checks_ = d["cells"][0]["checks"]
        for c, o in zip(checks_, outcomes):
            c["outcome"] = o
        return read.typed(d)
    assert exit_status(doc()) == 0
    assert exit_status(doc("pass", "xfail", "skip", "xpass")) == 0
    assert exit_status(doc("pass", "fail")) == 1
    assert exit_status(doc("fail", "error")) == 3
    assert exit_status(doc("pass", complete=False)) == 3
    assert exit_status(doc("pass", errors=[{"stage": "setup", "message": "no disk"}])) == 3


def test_judge_uses_expectations_data():
    good = {"aligned_pct": 100.0, "pte_cont_pct": 100.0, "faults": 64}
    assert checks.judge("exec-text", good, "7.3", "4k", "xfs").outcome == "pass"
    bad = dict(good, pte_cont_pct=0.0)
    out = checks.judge("exec-text", bad, "7.3", "4k", "xfs")
    assert out.outcome == "fail" and "pte_cont_pct 0.0 (wanted >= 90)" in out.reason
    # 16K: a 64K folio is smaller than the 2M contpte block: any PTE_CONT is wrong
    out = checks.judge("exec-text", good, "7.3", "16k", "ext4")
    assert out.outcome == "fail" and "pte_cont_pct" in out.reason
    # too many faults puts the check in mmap_miss territory
    out = checks.judge("exec-text", dict(good, faults=150), "7.3", "4k", "xfs")
    assert out.outcome == "fail" and "faults" in out.reason


def test_xfail_and_xpass_on_6_12():
    bad = {"aligned_pct": 2.0, "pte_cont_pct": 0.0, "faults": 64}
    out = checks.judge("exec-text", bad, "6.12", "4k", "xfs")
    assert out.outcome == "xfail" and "exec_folio_order" in out.reason
    good = {"aligned_pct": 100.0, "pte_cont_pct": 100.0, "faults": 64}
    assert checks.judge("exec-text", good, "6.12", "4k", "xfs").outcome == "xpass"


def test_missing_metric_is_a_failure_not_a_pass():
    out = checks.judge("exec-text", {"aligned_pct": 100.0}, "7.3", "4k", "xfs")
    assert out.outcome == "fail" and "pte_cont_pct missing" in out.reason


def test_evaluate_rejects_garbage_dump():
    chk = catalogue.by_name()["exec-text"]
    assert checks.evaluate(chk, "not a dump", cell_of("4k", "xfs", "7.3"), "7.3").outcome == "error"


def test_ktap_parsing_and_console_outcome():
    from foliofarm.boot.session import parse_ktap
    from foliofarm.judge.checks import console_outcome
    k = parse_ktap("KTAP version 1\n1..1\n# read_ahead_kb 128\nok 1 exec-text\n")
    assert k["results"] == [(True, "exec-text", "")] and not k.get("not_ok")
    k = parse_ktap("KTAP version 1\n1..1\nok 1 anon-mthp # SKIP no /sys/x\n")
    assert k["skip"] == "no /sys/x"
    k = parse_ktap("KTAP version 1\n1..1\n# mmap: Invalid argument\nnot ok 1 exec-text\n")
    assert k["not_ok"] and k["diag"] == ["mmap: Invalid argument"]
    assert console_outcome([]).outcome == "pass"
    out = console_outcome(["WARNING: CPU: 0 PID: 1 at mm/filemap.c:1 x"])
    assert out.outcome == "fail" and "mm/filemap.c" in out.reason


def test_none_metric_breaks_a_bound_instead_of_crashing():
    fails = checks.bounds_failures({"plain_first_without_ra": None}, {"min_plain_first_without_ra": 100})
    assert fails == ["plain_first_without_ra none (wanted >= 100)"]


def test_saved_measurements_are_reused_only_whole(tmp_path):
    """A clean boot's measurements are reused by the next run with the same
    inputs; a truncated, edited or incomplete file is removed and measured again."""
    from foliofarm.measure import saved as saving
    from foliofarm.measure.cells import Context, Kernel
    from foliofarm.measure.saved import load_saved
    said = []
    chk = catalogue.by_name()["exec-text"]
    ctx = Context(writer=None, cache=tmp_path, checks=[chk], accel="tcg", boot_timeout=300,
                  log=lambda m, s=None: said.append(m), status=None)
    k = Kernel(arts=None, initrd=None, cells=[cell()], disks={}, kernel_xy="7.3", side=None)
    path = tmp_path / "saved.json"
    from foliofarm.judge.measurement import Measurement
    saved = {"run_id": "r1", "measurements": {"xfs/exec-text": {"kind": "dump", "dump": "x"}}}
    saved["sha256"] = saving.digest_of(saved)
    path.write_text(json.dumps(saved))
    got = load_saved(ctx, path, k)
    assert got.measurements == {"xfs/exec-text": Measurement(kind="dump", dump="x")} and said == []
    foreign = {"run_id": "r1", "measurements": {"xfs/exec-text": {"kind": "dump", "dump": "x", "dupm": "y"}}}
    foreign["sha256"] = saving.digest_of(foreign)
    for damage in (json.dumps(saved)[:40],                                   # truncated
                   json.dumps(saved).replace('"x"', '"y"'),                   # edited
                   json.dumps({**saved, "measurements": {}}),                 # incomplete
                   json.dumps(foreign)):                                      # not a measurement of ours
        path.write_text(damage)
        assert load_saved(ctx, path, k) is None
        assert not path.exists() and "damaged or incomplete" in said[-1]


def test_a_fresh_boot_keeps_the_one_it_replaces_as_the_noise_sample(tmp_path):
    """--fresh measures again; the clean boot it replaces becomes the repeat, so
    a series run's base needs no second boot for the noise, and the pair is
    sealed together."""
    from foliofarm.measure import saved as saving
    from foliofarm.measure.cells import Context, Kernel
    from foliofarm.measure.saved import load_saved
    chk = catalogue.by_name()["exec-text"]
    ctx = Context(writer=None, cache=tmp_path, checks=[chk], accel="tcg", boot_timeout=300,
                  log=lambda m, s=None: None, status=None)
    k = Kernel(arts=None, initrd=None, cells=[cell()], disks={}, kernel_xy="7.3", side=None)
    from foliofarm.judge.measurement import Measurement
    first = saving.new_saved("r1", "boots", {"xfs/exec-text": Measurement(kind="dump", dump="a")}, None)
    assert first.repeat is None
    second = saving.new_saved("r2", "boots", {"xfs/exec-text": Measurement(kind="dump", dump="b")}, first)
    assert second.repeat == first.measurements and second.repeat_run_id == "r1"
    path = tmp_path / "saved.json"
    saving.save(path, second)
    assert load_saved(ctx, path, k).repeat["xfs/exec-text"].dump == "a"
    path.write_text(path.read_text().replace('"dump": "a"', '"dump": "c"'))
    assert load_saved(ctx, path, k) is None


def test_noise_is_learnt_from_every_clean_boot_of_the_base():
    """Three boots: a figure steady in the first pair that moves in the third
    has that move as its noise; one that is None in a boot is never steady."""
    from foliofarm.judge.noise import fold, noise_of
    boots = [{"4k-xfs": {"cow": {"a": 663, "b": 1, "c": 5}}},
             {"4k-xfs": {"cow": {"a": 663, "b": 1, "c": 5}}},
             {"4k-xfs": {"cow": {"a": 662, "b": None, "c": 5}}}]
    ranges = {}
    for b in boots[:2]:
        ranges = fold(ranges, b)
    assert noise_of(ranges) == {"4k-xfs": {"cow": {"a": 0.0, "b": 0.0, "c": 0.0}}}
    ranges = fold(ranges, boots[2])
    n = noise_of(ranges)["4k-xfs"]["cow"]
    assert n["a"] == 1.0 and n["b"] == float("inf") and n["c"] == 0.0
    assert ranges["4k-xfs"]["cow"]["samples"] == 3
    # a figure only some boots had is not steady either
    ranges = fold(ranges, {"4k-xfs": {"cow": {"a": 663, "b": 1, "c": 5, "d": 2}}})
    assert noise_of(ranges)["4k-xfs"]["cow"]["d"] == float("inf")


def test_same_results_tells_behaviour_from_timing_and_known_flakes(tmp_path):
    """tools/same_results.py on a real default run's document: the same
    document says the same; a moved behaviour figure is a difference, a moved
    timing figure is not, and a known failure that passed is shown as no news."""
    import subprocess
    import sys
    real = Path(__file__).parent / "data" / "results" / "default-run-7.3.json"
    tool = Path(__file__).parent.parent / "tools" / "same_results.py"

    def run(doc) -> subprocess.CompletedProcess:
        other = tmp_path / "other.json"
        other.write_text(json.dumps(doc))
        return subprocess.run([sys.executable, str(tool), str(real), str(other)],
                              capture_output=True, text=True, check=False)

    doc = json.loads(real.read_text())
    same = run(doc)
    assert same.returncode == 0 and "108 checks compared: 0 difference(s)" in same.stdout
    exec_text = doc["cells"][0]["checks"][0]
    exec_text["metrics"]["guest_seconds"] = 999.0
    assert run(doc).returncode == 0
    exec_text["metrics"]["max_folio_kb"] = 4
    moved = run(doc)
    assert moved.returncode == 1 and "4k-ext4 exec-text: max_folio_kb" in moved.stdout
    exec_text["metrics"]["max_folio_kb"] = json.loads(real.read_text())["cells"][0]["checks"][0][
        "metrics"]["max_folio_kb"]
    mm = next(c for cell in doc["cells"] for c in cell["checks"]
              if c["name"] == "mm-selftests" and any(t["outcome"] == "xfail" for t in c["subtests"]))
    t = next(t for t in mm["subtests"] if t["outcome"] == "xfail")
    t["outcome"] = "xpass"
    flake = run(doc)
    assert flake.returncode == 0 and "(known: no news)" in flake.stdout
    t["outcome"] = "fail"
    assert run(doc).returncode == 1


def test_figures_with_no_expectation_row_are_a_skip_that_names_the_cell():
    """sparse-read has no row for a kernel before the one it was written for:
    a skip saying where the row is missing, never a pass."""
    from foliofarm.judge import checks
    out = checks.judge("sparse-read", {"mapped_pages": 1}, "1.0", "16k", "ext4")
    assert out.outcome == "skip"
    assert out.reason == "no expectation for 16k/ext4/1.0 in expectations/sparse-read.toml"

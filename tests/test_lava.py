"""foliofarm lava (foliofarm/lava/): jobs made from a real run's recorded boots
and validated with LAVA's own schema (Debian's lava-common), and the guest's
driver (tests/vmtests/lava-check.sh, run here by /bin/sh) read back through
the log reader into the measurement the farm judges."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from foliofarm.matrix import cell_of
from foliofarm.results import read
from foliofarm.errors import UsageError
from foliofarm.judge.catalogue import Kind, by_name
from foliofarm.judge.checks import judge_measurement
from foliofarm.boot import framed
from foliofarm.lava import jobs, log
from foliofarm.run.lab_jobs import read_jobs

DATA = Path(__file__).parent / "data" / "results"


def recorded_run(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(DATA / "split-run-7.3.json", run / "results.json")
    return run


def test_the_recorded_qemu_command_line_is_read_back():
    doc = json.loads((DATA / "split-run-7.3.json").read_text())
    boot = next(b for b in doc["boots"] if b.get("fs") == "xfs" and b["page_size"] == "16k"
                and not b["console_log"].endswith("-tree.console.log") and "repeat" not in b["console_log"])
    b = jobs.parse_qemu(boot["qemu"])
    assert b.kernel.endswith("/Image") and b.initrd.endswith(".cpio")
    assert "rdinit=/init" in b.append and b.smp == "2" and b.memory == "4096"
    assert b.cpu == "max,pauth-impdef=on"
    serials = [d.serial for d in b.drives]
    assert serials[0] == "xfs" and "ffout" not in serials          # the outbox is not the job's
    assert {"xfs-rw", "ffswap", "ffmm", "ffpy"} <= set(serials)
    assert {d.mode for d in b.drives if d.serial in ("xfs-rw", "ffswap")} == {"snapshot=on"}
    assert len(b.numa) == 8                                          # two nodes: -object, -numa each


def with_its_files(tmp_path: Path) -> Path:
    """The recorded run, its cache paths moved under ``tmp_path`` with a stand-in
    at each file a job names (lava-run --validate checks that they are there; what
    they hold is not validated): the test needs no kernels built on this host."""
    run = tmp_path / "run"
    run.mkdir()
    text = (DATA / "split-run-7.3.json").read_text()
    cache = str(tmp_path / "cache")
    for path in set(re.findall(r"/root/\.cache/foliofarm/[^\"', ]+", text)):
        moved = Path(path.replace("/root/.cache/foliofarm", cache, 1))
        if moved.name == "Image" or moved.suffix in (".cpio", ".erofs", ".img", ".raw"):
            moved.parent.mkdir(parents=True, exist_ok=True)
            moved.touch()
    (run / "results.json").write_text(text.replace("/root/.cache/foliofarm", cache))
    return run


def test_jobs_of_a_real_run_validate_with_lavas_schema(tmp_path):
    run = with_its_files(tmp_path)
    written = jobs.write_jobs(run, tmp_path / "jobs", ["16k-xfs", "64k-erofs"], board="bbb")
    assert [w.name for w in written] == ["16k-xfs-7.3", "64k-erofs-7.3"]
    job = yaml.safe_load((written[0] / "job.yaml").read_text())
    steps = job["actions"][2]["test"]["interactive"][0]["script"]
    cell = next(c for c in json.loads((run / "results.json").read_text())["cells"] if c["id"] == "16k-xfs-7.3")
    # a step per check the cell ran, after the one that mounts the job disk
    assert [s["name"] for s in steps] == ["job-disk"] + [c["name"] for c in cell["checks"] if c["name"] != "console"]
    assert job["metadata"]["foliofarm.kernel_xy"] == "7.3" and job["context"]["cpu"] == "max,pauth-impdef=on"
    assert any(o.startswith("-append ") for o in job["context"]["extra_options"])
    board = yaml.safe_load((written[0] / "board.yaml").read_text())
    assert board["actions"][0]["deploy"]["to"] == "tftp" and board["actions"][1]["boot"]["method"] == "u-boot"
    # lava-run itself accepts the job with the device dictionary written beside it
    p = subprocess.run(["lava-run", "--validate", "--job-id", "1", "--output-dir", str(tmp_path / "out"),
                        "--device", str(written[0] / "device.yaml"), str(written[0] / "job.yaml")],
                       capture_output=True, text=True, check=False)
    assert p.returncode == 0, p.stderr[-2000:]


def test_a_job_lava_refuses_is_an_error_naming_it(tmp_path):
    run = recorded_run(tmp_path)
    (w,) = jobs.write_jobs(run, tmp_path / "jobs", ["4k-ext4"])
    bad = yaml.safe_load((w / "job.yaml").read_text())
    bad["actions"][1]["boot"]["method"] = "nonsense"
    with pytest.raises(UsageError, match="LAVA's schema refuses the job foliofarm 4k-ext4-7.3"):
        jobs.validate(bad)


def test_cells_without_a_boot_of_their_own_are_named(tmp_path):
    run = recorded_run(tmp_path)
    doc = json.loads((run / "results.json").read_text())
    doc["boots"] = [b for b in doc["boots"] if b.get("fs") != "erofs"]
    (run / "results.json").write_text(json.dumps(doc))
    with pytest.raises(UsageError, match="no boot recorded for 4k-erofs-7.3, 16k-erofs-7.3"):
        jobs.write_jobs(run, tmp_path / "jobs", ["*-erofs"])


def drive(tmp_path: Path, name: str, script: str, out: str | None) -> list[str]:
    """lava-check.sh run by /bin/sh on a job disk's folder: its console lines."""
    disk = tmp_path / "disk"
    (disk / "checks").mkdir(parents=True, exist_ok=True)
    shutil.copy(framed.DRIVER, disk / "lava-check")
    (disk / "checks" / f"{name}.sh").write_text(script)
    if out:
        (disk / "checks" / f"{name}.out").write_text(out + "\n")
    p = subprocess.run(["/bin/sh", str(disk / "lava-check"), name], capture_output=True, text=True,
                       check=False, env={"PATH": "/usr/bin:/bin"})
    return p.stdout.splitlines()


def as_log(lines: list[str], path: Path) -> Path:
    path.write_text("".join(json.dumps({"dt": "2026-11-26T08:00:00", "lvl": "target", "msg": ln}) + "\n"
                            for ln in lines))
    return path


def test_the_drivers_frames_read_back_as_a_measurement(tmp_path):
    dump = tmp_path / "exec-text.dump"
    ktap = "KTAP version 1\n1..1\nok 1 exec-text\n"
    text = "# a dump\n" + "x" * 5000 + "\n"
    lines = drive(tmp_path, "exec-text", f"printf '{ktap}'\nprintf '%s' '{text}' > {dump}\n", str(dump))
    # the kernel's own lines land among the guest's output on a real console
    lines.insert(3, "[   12.345678] random: crng init done")
    assert lines[-1] == "FOLIOFARM-RESULT exec-text pass"
    records = log.entries(as_log(lines, tmp_path / "lava.log"))
    m = framed.measurement(log.console(records), by_name()["exec-text"], None)
    assert m.kind == Kind.DUMP and m.dump == text and "ok 1 exec-text" in m.ktap
    assert m.splats == [] and m.taint_mask == 0


def test_a_failing_program_and_a_crash_read_back_as_the_farm_judges_them(tmp_path):
    lines = drive(tmp_path, "mmap-miss", "echo 'not ok 1 mmap-miss'\nexit 3\n", None)
    assert lines[-1] == "FOLIOFARM-RESULT mmap-miss fail"
    m = framed.measurement(lines, by_name()["mmap-miss"], None)
    assert m.kind == Kind.ERROR and "exited 3" in m.reason
    # the log ends inside a check: the kernel died there
    cut = lines[:2] + ["[   99.1] Internal error: Oops: 0000000096000004 [#1] SMP"]
    m = framed.measurement(cut, by_name()["mmap-miss"], None)
    assert m.kind == Kind.CRASH and m.splats
    assert judge_measurement(by_name()["mmap-miss"], m, cell_of("4k", "xfs", "7.3"), "7.3").outcome == "fail"
    # a check that never started
    m = framed.measurement(lines, by_name()["exec-text"], None)
    assert m.kind == Kind.ERROR and "never started" in m.reason


def test_a_damaged_dump_in_the_log_is_refused(tmp_path):
    dump = tmp_path / "d"
    lines = drive(tmp_path, "exec-text", f"echo 'ok 1 exec-text'\nhead -c 20000 /dev/urandom | base64 > {dump}\n",
                  str(dump))
    i = next(i for i, ln in enumerate(lines) if ln.startswith("FOLIOFARM-FILE "))
    lines[i + 2] = lines[i + 2][::-1]
    with pytest.raises(UsageError, match="exec-text: its file in the LAVA job's log"):
        framed.measurement(lines, by_name()["exec-text"], None)


def test_a_series_runs_reused_base_takes_the_boot_of_the_run_that_measured_it(tmp_path):
    """A series run's base cells were not booted by it (saved measurements): their
    jobs take the boot of the run that made them, from its results.json."""
    base = recorded_run(tmp_path)
    doc = json.loads((base / "results.json").read_text())
    doc["boots"] = [{"page_size": "16k", "kernel": "7.3", "reused": "/cache/baseline/x.json",
                     "measured_by": doc["run_id"], "console_log": str(base / "boots")}]
    series = tmp_path / "series"
    series.mkdir()
    (series / "results.json").write_text(json.dumps(doc))
    (w,) = jobs.write_jobs(series, tmp_path / "jobs", ["16k-ext4"])
    job = yaml.safe_load((w / "job.yaml").read_text())
    assert "16k-default" in job["actions"][0]["deploy"]["images"]["kernel"]["url"]


def test_a_real_lava_job_is_judged_as_the_farms_own_boot_of_the_cell(tmp_path):
    """The 4k-ext4 cell of a make run (split-run-7.3.json), run again through
    Debian's lava-run with LAVA's qemu device (`foliofarm lava ... --run`,
    2026-11-26: 198 s, of which 137 s the checks): its log, read back, gives
    every check the same outcome and the same behaviour figures, and every
    selftest the same outcome and count of results, as the farm's own boots."""
    import gzip
    import sys
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
    import same_results
    src = Path(__file__).parent / "data" / "lava" / "4k-ext4-7.3"
    job = tmp_path / "4k-ext4-7.3"
    job.mkdir()
    shutil.copy(src / "job.yaml", job / "job.yaml")
    (job / log.LOG).write_bytes(gzip.decompress((src / "lava.log.gz").read_bytes()))
    # every record read, lava-run's YAML-tagged ones too ("size": ! "123")
    records = log.entries(job / log.LOG)
    assert len(records) == len((job / log.LOG).read_text().splitlines())
    assert sum(1 for r in records if r.get("lvl") == "results") == 27
    run_dir = read_jobs([job], tmp_path / "judged", ["test"])
    lava = read.load(run_dir / "results.json")
    farm = json.loads((DATA / "split-run-7.3.json").read_text())
    farm["cells"] = [c for c in farm["cells"] if c["id"] == "4k-ext4-7.3"]
    farm["noise"] = {}
    assert [c["id"] for c in lava["cells"]] == ["4k-ext4-7.3"]
    assert len(lava["cells"][0]["checks"]) == 12
    assert same_results.differences(farm, lava) == []
    # and the dumps it judged are there, as a local boot leaves them
    assert (run_dir / "cells" / "4k-ext4-7.3" / "exec-text.dump").stat().st_size > 0
    assert "# running ./cow" in (run_dir / "cells" / "4k-ext4-7.3" / "mm-selftests.ktap").read_text()


def test_jobs_for_every_cell_of_both_sides_validate(tmp_path):
    """Every cell of a make run, and of a series run whose base was reused
    (its base cells from the run that measured them), as validated jobs."""
    run = recorded_run(tmp_path)
    written = jobs.write_jobs(run, tmp_path / "jobs", None, board="bbb")
    assert len(written) == 9
    assert all((w / "job.yaml").is_file() and (w / "board.yaml").is_file() for w in written)

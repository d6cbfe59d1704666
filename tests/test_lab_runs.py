"""`foliofarm run --lab` against a real LAVA lab on loopback (foliofarm/lava/lab.py:
Debian's lava-server on the machine's PostgreSQL, its scheduler, two
lava-workers w1 and w2 with a qemu device each), the farm's own checks
exec-text and mmap-miss, the benign series:
- on 4k-ext4, 16k-xfs and 64k-erofs: the same outcomes and figures as the same
  run on the farm's own boots (tools/same_results.py), the jobs on both
  workers (the lab's records), each cell's job linked from the report; a
  token the lab refuses is a usage error before anything builds;
- on 4k-ext4, the negative control of exec-text: a regression from the
  lab's logs, confirmed by a second job on each side (budget-gated);
- on 4k-ext4, a worker stopped mid-job (it and its QEMU killed, as a machine
  that died): the job tried again on the other worker, the same verdicts
  (budget-gated);
- the lab stopped mid-run: the cells `error` with the lab's words, exit 3;
- the run killed (SIGTERM): its job in the lab canceled (budget-gated)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from foliofarm.cli import main
from foliofarm.lava import lab

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(os.geteuid() != 0, reason="the lab's services run as root (Debian's lava-server)")]
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
SERIES = str(ROOT / "examples" / "series" / "benign.mbox")
OWN = ["--checks", "exec-text,mmap-miss", "--fresh", "--series", SERIES]


def lab_args(url: str, token: Path, *more: str) -> list[str]:
    return ["--lab", url, "--lab-token", str(token), *more]


def lab_job(url: str, token: Path, job_id: int) -> dict:
    req = urllib.request.Request(f"{url}api/v0.2/jobs/{job_id}/",
                                 headers={"Authorization": f"Token {token.read_text().strip()}"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def doc(results: Path) -> dict:
    return json.loads((results / "latest" / "results.json").read_text())


def in_background(args: list[str], out: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "foliofarm", "run", *args], cwd=ROOT,
                            stdout=open(out, "w"), stderr=subprocess.STDOUT)


def first_running(url: str, token: Path, out: Path, proc: subprocess.Popen, seconds: float = 900) -> dict:
    """The run's first job the lab says is Running (its id from the run's log)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end and proc.poll() is None:
        for line in out.read_text().splitlines():
            if "LAVA job" in line and " Running on " in line:
                job_id = int(line.split("LAVA job ")[1].split()[0])
                job = lab_job(url, token, job_id)
                if job["state"] == "Running":
                    return job
        time.sleep(2)
    raise AssertionError(f"no job of the run ran: {out.read_text()[-3000:]}")


def test_a_series_run_in_the_lab_gives_the_farms_own_results(the_lab, tmp_path):
    import same_results
    url, token = the_lab
    cells = ["--cells", "4k-ext4,16k-xfs,64k-erofs"]
    bad = tmp_path / "bad-token"
    bad.write_text("not-a-token\n")
    assert main(["run", *cells, *OWN, *lab_args(url, bad), "--results", str(tmp_path / "refused")]) == 2
    assert not (tmp_path / "refused").exists()           # refused before anything was built or written
    # the list follower's [run] args: its check of them (a dry run in the
    # environment it gives a series' run, where no token is) takes --lab with
    # the token's file, and refuses a token the lab refuses
    from foliofarm.errors import UsageError
    from foliofarm.watch import tester
    tester.check_options(["--cells", "4k-ext4", *lab_args(url, token)])
    with pytest.raises(UsageError, match="refused the token"):
        tester.check_options(["--cells", "4k-ext4", *lab_args(url, bad)])

    assert main(["run", *cells, *OWN, "--results", str(tmp_path / "farm")]) == 0
    assert main(["run", *cells, *OWN, *lab_args(url, token), "--results", str(tmp_path / "lab")]) == 0
    farm, judged = doc(tmp_path / "farm"), doc(tmp_path / "lab")
    assert same_results.differences(farm, judged) == []
    assert sorted((v["page_size"], v["fs"], v["check"], v["verdict"]) for v in judged["verdicts"]) == \
        sorted((v["page_size"], v["fs"], v["check"], v["verdict"]) for v in farm["verdicts"])
    jobs = [b for b in judged["boots"] if b.get("lab_job")]
    assert {f"{b['page_size']}-{b['fs']}-{b['kernel']}" for b in jobs} >= {
        f"{c}-{k}" for c in ("4k-ext4", "16k-xfs", "64k-erofs") for k in ("7.3", "7.3+series")}
    devices = set()
    for b in jobs:       # the lab's own records: each job finished Complete, on the device recorded
        job = lab_job(url, token, int(b["lab_job"].rstrip("/").rsplit("/", 1)[1]))
        assert (job["state"], job["health"], job["actual_device"]) == ("Finished", "Complete", b["device"])
        devices.add(job["actual_device"])
    assert devices == {"qemu-w1", "qemu-w2"}
    html = (tmp_path / "lab" / "latest" / "report.html").read_text()
    for b in jobs:
        assert f"<a href='{b['lab_job']}'>" in html


@pytest.mark.budget
def test_a_regression_booted_in_the_lab_is_found_and_confirmed_by_more_jobs(budget, request, tmp_path):
    """The negative control of exec-text (examples/series/neg-exec-text): its
    text mapped without large folios, judged from the lab's logs a regression,
    booted again in the lab on both sides before it counts."""
    budget(5 * 60, "a regression confirmed in the lab (a lab, a series build, four jobs)")
    url, token = request.getfixturevalue("the_lab")     # up only once the budget has room
    assert main(["run", "--cells", "4k-ext4", "--checks", "exec-text", "--fresh",
                 "--series", str(ROOT / "examples" / "series" / "neg-exec-text"),
                 *lab_args(url, token), "--results", str(tmp_path / "lab")]) == 1
    judged = doc(tmp_path / "lab")
    row = next(v for v in judged["verdicts"] if v["check"] == "exec-text")
    assert row["verdict"] == "regression", row
    series = next(c for c in judged["cells"] if c["kernel"] == "7.3+series")
    assert next(c for c in series["checks"] if c["name"] == "exec-text")["confirmed"] is True
    lava = tmp_path / "lab" / "latest" / "lava"            # the second boots: a job on each side
    for side in ("4k-ext4-7.3-confirm", "4k-ext4-7.3+series-confirm"):
        assert list((lava / side).glob("job-*.lava.log")), sorted(p.name for p in lava.iterdir())


@pytest.mark.budget
def test_a_worker_stopped_mid_job_is_tried_again_on_the_other(budget, request, tmp_path):
    budget(3 * 60, "a lab worker stopped mid-job (a lab, two runs)")
    url, token = request.getfixturevalue("the_lab")     # up only once the budget has room
    cell = ["--cells", "4k-ext4"]
    assert main(["run", *cell, *OWN, "--results", str(tmp_path / "farm")]) == 0
    out = tmp_path / "run.log"
    proc = in_background([*cell, *OWN, *lab_args(url, token), "--results", str(tmp_path / "lab")], out)
    job = first_running(url, token, out, proc)
    device = job["actual_device"]
    lab.stop_worker(device.removeprefix("qemu-"))
    assert proc.wait(timeout=1200) == 0, out.read_text()[-3000:]
    judged, farm = doc(tmp_path / "lab"), doc(tmp_path / "farm")
    again = next(b for b in judged["boots"] if b.get("lab_faults"))
    assert again["attempt"] == 2 and again["device"] != device
    assert f"worker {device.removeprefix('qemu-')} of {device} went offline" in again["lab_faults"][0]
    assert sorted((v["check"], v["verdict"]) for v in judged["verdicts"]) == \
        sorted((v["check"], v["verdict"]) for v in farm["verdicts"])


def test_a_lab_stopped_mid_run_leaves_its_cells_error_with_its_words(the_lab, tmp_path):
    url, token = the_lab
    out = tmp_path / "run.log"
    proc = in_background(["--cells", "4k-ext4", "--checks", "exec-text", "--fresh",
                          *lab_args(url, token, "--lab-patience", "10", "--lab-attempts", "2"),
                          "--results", str(tmp_path / "lab")], out)
    first_running(url, token, out, proc)
    lab.down()
    assert proc.wait(timeout=600) == 3, out.read_text()[-3000:]
    checks = {c["name"]: c for c in doc(tmp_path / "lab")["cells"][0]["checks"]}
    assert checks["exec-text"]["outcome"] == "error"
    assert f"the lab at {url} did not answer for 10 s" in checks["exec-text"]["reason"]


@pytest.mark.budget
def test_killing_the_run_cancels_its_job_in_the_lab(budget, request, tmp_path):
    budget(3 * 60, "a run killed with its job in the lab (a lab, one run)")
    url, token = request.getfixturevalue("the_lab")     # up only once the budget has room
    out = tmp_path / "run.log"
    proc = in_background(["--cells", "4k-ext4", "--checks", "exec-text", "--fresh",
                          *lab_args(url, token), "--results", str(tmp_path / "lab")], out)
    job = first_running(url, token, out, proc)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=120) == 3
    assert f"LAVA job {job['id']} canceled" in out.read_text()
    end = time.monotonic() + 120
    while lab_job(url, token, job["id"])["state"] not in ("Canceling", "Finished") and time.monotonic() < end:
        time.sleep(2)
    got = lab_job(url, token, job["id"])
    assert got["state"] in ("Canceling", "Finished") and got["health"] in ("Canceled", "Unknown"), got

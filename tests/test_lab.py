"""A real LAVA lab on loopback (foliofarm/lava/lab.py: Debian's lava-server on
the machine's PostgreSQL, its scheduler, two lava-workers with a qemu device
each): a series run's cells (base and series, 4k-ext4) written as LAVA jobs,
submitted through the REST API with the lab's token, run by the lab, their
logs fetched through the API and judged by `foliofarm report --lava`: the same
outcomes and figures as the farm's own boots, and the jobs ran on both
workers (the lab's records say which device ran each)."""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from foliofarm.cli import main
from foliofarm.lava import lab

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))


def call(url: str, path: str, token: str, data: dict | None = None):
    req = urllib.request.Request(f"{url}api/v0.2/{path}", method="POST" if data else "GET",
                                 data=json.dumps(data).encode() if data else None,
                                 headers={"Content-Type": "application/json", "Authorization": f"Token {token}"})
    with urllib.request.urlopen(req, timeout=30) as r:
        body = r.read()
    return body if path.endswith("logs/") else json.loads(body)


@pytest.mark.skipif(os.geteuid() != 0, reason="the lab's services run as root (Debian's lava-server)")
def test_a_series_run_through_a_lava_lab_on_loopback_is_judged_as_the_farms_own(tmp_path):
    import same_results
    state = lab.up(workers=2, port=8900)
    try:
        url, token = state["url"], (lab.lab_dir() / "token").read_text().strip()
        code = main(["run", "--cells", "4k-ext4", "--checks", "exec-text,mmap-miss", "--fresh",
                     "--series", str(ROOT / "examples" / "series" / "benign.mbox"),
                     "--results", str(tmp_path / "farm")])
        assert code == 0
        assert main(["lava", str(tmp_path / "farm" / "latest"), "-o", str(tmp_path / "jobs")]) == 0
        dirs = sorted(p for p in (tmp_path / "jobs").iterdir() if (p / "job.yaml").is_file())
        assert len(dirs) == 2                                         # base and series
        ids = {d: call(url, "jobs/", token, {"definition": (d / "job.yaml").read_text()})["job_ids"][0]
               for d in dirs}
        end = time.monotonic() + 900
        done: dict = {}
        while len(done) < len(ids) and time.monotonic() < end:
            for d, i in ids.items():
                job = call(url, f"jobs/{i}/", token)
                if job["state"] == "Finished":
                    done[d] = job
            time.sleep(3)
        assert len(done) == 2, f"the lab did not finish the jobs: {ids}"
        assert {j["health"] for j in done.values()} == {"Complete"}, done
        # LAVA's scheduler gave the two jobs to the two workers' devices
        assert {j["actual_device"] for j in done.values()} == {"qemu-w1", "qemu-w2"}
        for d, i in ids.items():
            (d / "lava.log").write_bytes(call(url, f"jobs/{i}/logs/", token))
        assert main(["report", "--lava", *map(str, dirs), "--out", str(tmp_path / "judged")]) == 0
        farm = json.loads((tmp_path / "farm" / "latest" / "results.json").read_text())
        judged = json.loads((tmp_path / "judged" / "latest" / "results.json").read_text())
        farm["noise"] = {}
        assert same_results.differences(farm, judged) == []
        assert sorted((v["check"], v["verdict"]) for v in judged["verdicts"]) == \
            sorted((v["check"], v["verdict"]) for v in farm["verdicts"])
    finally:
        lab.down()
    assert not (lab.lab_dir() / "lab.json").exists()

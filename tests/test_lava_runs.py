"""End-to-end: a cell booted by the farm, then the same cell as a LAVA job run
by Debian's lava-run (the dispatcher without a server) with LAVA's qemu device,
its log read back by `foliofarm report --lava`: the same outcomes and figures."""

import json
import os
import sys
from pathlib import Path

import pytest

from foliofarm.cli import main
from foliofarm.lava import log

pytestmark = pytest.mark.integration
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))


@pytest.mark.skipif(os.geteuid() != 0, reason="lava-run runs as root only")
def test_a_cell_through_lava_run_is_judged_as_the_farms_own_boot(tmp_path):
    import same_results
    code = main(["run", "--cells", "4k-erofs", "--checks", "exec-text,mmap-miss,thpmaps", "--fresh",
                 "--results", str(tmp_path / "farm")])
    assert code == 0
    assert main(["lava", str(tmp_path / "farm" / "latest"), "-o", str(tmp_path / "jobs"), "--run"]) == 0
    job = tmp_path / "jobs" / "4k-erofs-7.3"
    results = [e["msg"] for e in log.entries(job / log.LOG) if e.get("lvl") == "results"]
    cases = {r["case"]: r["result"] for r in results if r.get("definition") == "0_foliofarm"}
    assert cases == {"job-disk": "pass", "exec-text": "pass", "mmap-miss": "pass", "thpmaps": "pass"}
    assert main(["report", "--lava", str(job), "--out", str(tmp_path / "judged")]) == 0
    farm = json.loads((tmp_path / "farm" / "latest" / "results.json").read_text())
    lava = json.loads((tmp_path / "judged" / "latest" / "results.json").read_text())
    farm["noise"] = {}
    assert same_results.differences(farm, lava) == []
    assert [c["outcome"] for c in lava["cells"][0]["checks"]] == ["pass"] * 4

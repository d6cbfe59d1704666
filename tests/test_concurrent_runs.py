"""Two series runs at once on one cache (two developers, or two CI jobs on one
agent), for real: each builds its own series in the shared Debian tree and
build directory, one waiting for the other's hold (foliofarm/locks.py), and
both give the same verdicts, from the same kernels, as the same runs one after
the other."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.budget]

ROOT = Path(__file__).resolve().parent.parent
EX = ROOT / "examples" / "series"
SCOPE = ["--page-sizes", "4k", "--fs", "xfs", "--checks", "exec-text,mmap-miss,ra-window"]


def argv(mbox: str, results: Path) -> list[str]:
    return [sys.executable, "-m", "foliofarm", "run", "--kernel", "debian:7.3", *SCOPE,
            "--series", str(EX / mbox), "--results", str(results)]


def outcome(results: Path) -> tuple[list[tuple], str]:
    doc = json.loads((results / "latest" / "results.json").read_text())
    verdicts = sorted((r["page_size"], r["fs"], r["check"], r["verdict"]) for r in doc["verdicts"])
    series_art = next(k["artifacts"] for k in doc["kernels"] if k["side"] == "series")
    return verdicts, Path(series_art).name


def test_two_series_runs_at_once_match_the_same_runs_in_turn(tmp_path, budget):
    from foliofarm import matrix
    from foliofarm.intake import source
    from foliofarm.kernel import build
    from foliofarm.paths import cache_dir
    src = source.resolve("debian:7.3", cache_dir())
    warm = build.Builder(cache_dir()).is_cached(src, matrix.page_sizes()["4k"])
    budget((8 if warm else 16) * 60, "two concurrent series runs and the same two in turn")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    runs = {"benign.mbox": tmp_path / "a", "benign-offpath.mbox": tmp_path / "b"}
    procs = {m: subprocess.Popen(argv(m, r), cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True) for m, r in runs.items()}
    logs = {m: p.communicate(timeout=40 * 60)[0] for m, p in procs.items()}
    for m, p in procs.items():
        assert p.returncode == 0, (m, logs[m][-3000:])
    together = {m: outcome(r) for m, r in runs.items()}
    # one of them applied its series while the other wanted the tree, and said so
    assert any("waiting for kernel tree" in log for log in logs.values()), logs
    for m, r in runs.items():
        again = tmp_path / f"{r.name}-again"
        p = subprocess.run(argv(m, again), cwd=ROOT, env=env, capture_output=True, text=True,
                           timeout=40 * 60)
        assert p.returncode == 0, (m, p.stdout[-3000:])
        assert outcome(again) == together[m], m
    # each run's series kernel was built from its own series: different trees, different kernels
    assert together["benign.mbox"][1] != together["benign-offpath.mbox"][1]

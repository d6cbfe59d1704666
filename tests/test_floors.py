"""Runs followed from the command line to their results.json: every call
from one of the farm's modules into another, on every thread, is watched
(sys.setprofile), and none may go up a floor (tests/test_layout.py's order):
no callback of the run's room (its log, its status line, its own-checks
verdict) is called from measuring, booting or building. The import order
keeps imports down; this keeps calls down too. One run for each booter of
boot/protocol.py: the farm's QEMU (a series run), virtme-ng, and a LAVA lab
on loopback."""

import json
import os
import sys
import threading
from pathlib import Path

import pytest

from foliofarm.cli import main
from test_layout import LEVELS, top

pytestmark = pytest.mark.integration

EX = Path(__file__).resolve().parent.parent / "examples" / "series"


def upward(caller: str, callee: str) -> bool:
    a, b = top(caller), top(callee)
    return a in LEVELS and b in LEVELS and LEVELS[b] > LEVELS[a]


class Calls:
    """(caller module, function, callee module, function) of each call that
    goes up a floor, from a profile hook on every thread."""

    def __init__(self) -> None:
        self.up: set[tuple[str, str, str, str]] = set()
        self.seen = 0

    def hook(self, frame, event, arg):
        if event != "call":
            return
        callee = frame.f_globals.get("__name__", "")
        back = frame.f_back
        if back is None or not callee.startswith("foliofarm."):
            return
        caller = back.f_globals.get("__name__", "")
        # an object handed down to be called (kernel/untrusted's watcher of a
        # sandboxed build, given to sandbox.run) is the caller's own choice,
        # not a way up: callbacks of the run's room are plain functions
        if caller.startswith("foliofarm.") and frame.f_code.co_name != "__call__":
            self.seen += 1
            if upward(caller, callee):
                self.up.add((caller, back.f_code.co_name, callee, frame.f_code.co_name))

    def __enter__(self) -> "Calls":
        threading.setprofile(self.hook)
        sys.setprofile(self.hook)
        return self

    def __exit__(self, *exc) -> None:
        sys.setprofile(None)
        threading.setprofile(None)


def test_the_hook_sees_an_upward_call():
    assert upward("foliofarm.measure.passes", "foliofarm.run.executor")
    assert not upward("foliofarm.run.executor", "foliofarm.measure.passes")
    assert not upward("foliofarm.measure.passes", "foliofarm.measure.cells")


def test_a_series_run_calls_only_down_the_floors(tmp_path):
    """The benign series on one cell with an own check and a tree check (so
    the own checks' verdict is told while thpmaps runs): every kind of step,
    from the plan through builds, boots, measuring, judging and the report."""
    with Calls() as calls:
        code = main(["run", "--series", str(EX / "benign.mbox"), "--cells", "4k-xfs",
                     "--checks", "exec-text,thpmaps", "--results", str(tmp_path)])
    assert code == 0
    assert calls.seen > 10_000                  # the hook saw the run's calls, on its threads too
    assert (tmp_path / "latest" / "results.json").is_file()
    into_run = sorted(c for c in calls.up if top(c[2]) == "run")
    assert into_run == [], f"calls back up into the run's room: {into_run}"
    assert sorted(calls.up) == [], f"calls up a floor: {sorted(calls.up)}"


def booted_by(results: Path) -> list[str]:
    """What booted each of a run's boots: the farm's QEMU, vng or a lab's job."""
    doc = json.loads((results / "latest" / "results.json").read_text())
    return sorted("lava" if b.get("lab_job") else "vng" if "vng" in b["qemu"].split()[0] else "qemu"
                  for b in doc["boots"])


def test_a_vng_run_calls_only_down_the_floors(tmp_path):
    """The own check booted by virtme-ng (boot/vng.py), the tree's check
    (thpmaps) by the farm's QEMU in the same run: one booter each, both
    through boot/protocol.py."""
    with Calls() as calls:
        code = main(["run", "--boot-with", "vng", "--cells", "4k-xfs", "--checks", "exec-text,thpmaps",
                     "--fresh", "--results", str(tmp_path)])
    assert code == 0
    assert calls.seen > 10_000
    assert booted_by(tmp_path) == ["qemu", "vng"]
    assert sorted(calls.up) == [], f"calls up a floor: {sorted(calls.up)}"


@pytest.mark.skipif(os.geteuid() != 0, reason="the lab's services run as root (Debian's lava-server)")
def test_a_lab_run_calls_only_down_the_floors(tmp_path, the_lab):
    """The own checks booted as a LAVA lab's jobs (lava/remote.py) on the
    loopback lab: its client, its artifact server and its log reader are
    all called from measuring without a call up a floor."""
    url, token = the_lab
    with Calls() as calls:
        code = main(["run", "--lab", url, "--lab-token", str(token), "--cells", "4k-ext4",
                     "--checks", "exec-text", "--fresh", "--results", str(tmp_path)])
    assert code == 0
    assert calls.seen > 10_000
    assert booted_by(tmp_path) == ["lava"]
    assert sorted(calls.up) == [], f"calls up a floor: {sorted(calls.up)}"

"""^C to a self-check stops the run it started. bench, mutants, emulation and
bisect start `foliofarm run` through run/child.run_to_end, in a session of its
own (so that its guests are stopped together at a limit): a terminal's ^C
reaches only the self-check, which must pass it on (the run records that it
was interrupted and kills its guests) rather than leave the run going on its
own. For real, on the 4K 7.3 kernel (one cell, two checks: make faults' scope).
Started as a background job (SIGINT ignored), it stops on SIGINT or SIGTERM."""

import os
import signal
import subprocess
import sys
import time

import pytest

from foliofarm.paths import ROOT
from foliofarm.run import child

SELF_CHECK = """
import sys
from pathlib import Path
from foliofarm.run import child
from foliofarm.selfcheck import faults
child.run_to_end(faults.SCOPE + ["--fresh"], Path(sys.argv[1]))
"""


def pids_of(pattern: str) -> list[str]:
    return subprocess.run(["pgrep", "-f", "--", pattern], capture_output=True, text=True).stdout.split()


@pytest.mark.integration
@pytest.mark.budget
def test_ctrl_c_to_a_self_check_stops_the_run_it_started(tmp_path, budget):
    from foliofarm import matrix
    from foliofarm.intake import source
    from foliofarm.kernel import build
    from foliofarm.paths import cache_dir
    src = source.resolve("debian:7.3", cache_dir())
    warm = build.Builder(cache_dir()).is_cached(src, matrix.page_sizes()["4k"])
    budget((2 if warm else 12) * 60, "a self-check's run, interrupted mid-guest")
    results = tmp_path / "run"
    # the self-check as a terminal's foreground job: a process group of its own
    check = subprocess.Popen([sys.executable, "-c", SELF_CHECK, str(results)], cwd=ROOT,
                             start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    run = []
    end = time.monotonic() + (2 if warm else 12) * 60
    while check.poll() is None and time.monotonic() < end:
        run = pids_of(f"foliofarm run .*--results {results}")
        if run and pids_of(f"foliofarm-{run[0]}-"):        # its guest is up
            break
        time.sleep(0.2)
    if not run or check.poll() is not None:
        check.kill()
        pytest.fail(f"the run never started a guest: {check.communicate()[1].decode()[-2000:]}")
    os.killpg(check.pid, signal.SIGINT)                   # ^C: the terminal's process group
    t0 = time.monotonic()
    _, err = check.communicate(timeout=child.INTERRUPT_GRACE_S + 30)
    stopping = time.monotonic() - t0
    assert b"KeyboardInterrupt" in err                    # the self-check goes on up
    assert pids_of(f"--results {results}") == [], "the run went on after the self-check's ^C"
    assert pids_of(f"foliofarm-{run[0]}-") == [], "a guest of the run was left running"
    assert stopping < 10, f"{stopping:.1f} s from the ^C to the self-check's end"
    doc = child.read_back(results / "latest")
    assert doc is not None
    assert any(e.stage == "interrupted" and "SIGINT" in e.message for e in doc.errors), doc.errors


# the command as the command line starts it, its long work a sleep
STOPPABLE = """
import sys, time
from foliofarm import cli
from foliofarm.run import bisect
from foliofarm.selfcheck import bench

def work(*args):
    print("ready", flush=True)
    time.sleep(60)
    return 0

bench.main = bisect.bisect = work
sys.exit(cli.main(sys.argv[1:]))
"""


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("argv", [["selfcheck", "bench"], ["bisect", "--cell", "4k-ext4", "--check", "exec-text"]])
def test_a_background_self_check_stops_on_sigint_and_sigterm(signum, argv):
    """Started as a shell's background job (SIGINT ignored, inherited), a
    self-check or a bisect still stops as ^C does (exit 3, "interrupted"),
    on SIGINT and on SIGTERM: the run it started is stopped with it."""
    check = subprocess.Popen([sys.executable, "-c", STOPPABLE, *argv], cwd=ROOT, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    assert check.stdout.readline() == "ready\n"
    check.send_signal(signum)
    _, err = check.communicate(timeout=30)
    assert check.returncode == 3 and "interrupted" in err, err

"""The guest's selftests driver (tests/vmtests/mm-selftests.sh): its ff_timed,
the function run_vmtests.sh runs each test through, taken from the script as
the guest gets it and run by this host's bash, as run_vmtests.sh runs a test:
its output through a pipe."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

DRIVER = Path(__file__).resolve().parent / "vmtests" / "mm-selftests.sh"


def ff_timed(tmp_path: Path) -> Path:
    """ff_timed's text: the part of the script between cat <<'EOF' and EOF."""
    lines = DRIVER.read_text().splitlines()
    start = lines.index("\tcat <<'EOF'") if "\tcat <<'EOF'" in lines else lines.index("cat <<'EOF'")
    end = lines.index("EOF", start)
    fn = tmp_path / "ff_timed.sh"
    fn.write_text("\n".join(lines[start + 1:end]) + "\n")
    return fn


def run_test(tmp_path: Path, test: str, deadline: int) -> tuple[str, int, float]:
    """``test`` (a bash script) run as run_vmtests.sh runs one: (ff_timed "$@"
    2>&1) | tap_prefix; its output, status and how long the pipeline took."""
    (tmp_path / "t.sh").write_text(test)
    runner = tmp_path / "run.sh"
    runner.write_text(f". {ff_timed(tmp_path)}\n"
                      '(ff_timed bash ./t.sh 2>&1) | sed "s/^/# /"\nexit ${PIPESTATUS[0]}\n')
    # the guest's timeout is busybox's: at the deadline it kills the command
    # alone, never its process group as GNU's does (this host's)
    shim = tmp_path / "bin"
    shim.mkdir(exist_ok=True)
    (shim / "timeout").write_text('#!/bin/bash\n[ "$1" = -s ] && { sig=$2; shift 2; } || sig=TERM\n'
                                  't=$1; shift\n"$@" & p=$!\n(sleep "$t"; kill -"$sig" $p) 2>/dev/null &\n'
                                  'wait $p\n')
    (shim / "timeout").chmod(0o755)
    env = {**os.environ, "PATH": f"{shim}:{os.environ['PATH']}", "FF_TEST_TIMEOUT": str(deadline), "FF_LEFT_OUT": "-", "FF_PART": "all",
           "FF_AT_ONCE": "-", "FF_TOUCHED": "-", "FF_NOT_REACHED": "-", "FF_GCOV": "", "FF_FS_DIR": ""}
    t0 = time.monotonic()
    p = subprocess.run(["bash", str(runner)], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=60)
    return p.stdout, p.returncode, time.monotonic() - t0


def test_a_test_past_its_deadline_is_killed_with_the_children_that_hold_the_pipe(tmp_path):
    """charge_reserved_hugetlb.sh runs `write_hugetlb_memory.sh | tee &`: killed
    alone, the script left them holding run_vmtests.sh's pipe, and a coverage
    run's page part waited on them for 14 minutes. The test's whole process
    group goes at the deadline."""
    out, rc, took = run_test(tmp_path, "echo start\n(sleep 40; echo late) | cat &\nsleep 50\n", 2)
    assert took < 15, (took, out)
    assert rc == 137 and "# start" in out and "late" not in out
    assert "# foliofarm: TIMEOUT: killed after 2s" in out
    assert "Killed" not in out          # bash's job notice is not the test's output
    left = subprocess.run(["pgrep", "-f", "sleep 40"], capture_output=True, text=True).stdout
    assert not left.strip(), left


def test_a_test_within_its_deadline_ends_when_it_ends(tmp_path):
    """The watchdog holds no pipe: a quick test's pipeline ends with it, not at
    the deadline, and its status is its own."""
    out, rc, took = run_test(tmp_path, "echo ran\nexit 4\n", 30)
    assert took < 10 and rc == 4, (took, out)
    assert "# ran" in out and "TIMEOUT" not in out and "# foliofarm: took 0s" in out

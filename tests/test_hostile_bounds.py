"""The size, depth and bytes of what untrusted code gives back, attacked for
real on 4k-ext4 (a series built and booted, a reproducer run in the guest):

- a series whose build prints 300 MB on make's stderr and leaves a directory
  3,000 deep in its build directory, its Subject an RFC 2047 word holding
  OSC 52 and OSC 0, run with a reproducer that exits 7, leaves a detached
  process to rename 100 MB over the driver's dump, says `BUG: ... [/]` on
  the kernel log and prints terminal escapes: the series is judged (its log
  keeps head and tail), every report is written, no control character
  reaches the terminal or a report, the reproducer's status is the one the
  driver waited for, its dump no larger than its cap, the deep directory
  gone, the farm's peak memory under the stated bound;
- a reproducer that floods its stdout (200 MB) and the console (8 MB): its
  dump no larger than the driver keeps, the farm's peak memory under the bound;
- the next series run works (test_hostile_sandbox's bombs run after it).

(The disk and inode bombs are rows of test_hostile_sandbox.py's LIMITED.)"""
from __future__ import annotations

import base64
import json
import os
import secrets
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from foliofarm import shown
from foliofarm.intake import source
from foliofarm.paths import ROOT, cache_dir

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_hostile_sandbox import makefile, mail, series_kernel  # noqa: E402

pytestmark = pytest.mark.integration

HOSTILE = Path(__file__).parent / "data" / "hostile"
# The farm's peak memory, whatever the input (docs/following.md, "Bounded and escaped").
PEAK_MB = 500


def subject() -> str:
    raw = "mm: \x1b]52;c;SGVsbG8=\x07\x1b]0;pwned\x07 a series [/] that floods"
    return f"=?UTF-8?B?{base64.b64encode(raw.encode()).decode()}?="


def peak_rss(pid: int, seen: list[int], done: threading.Event) -> None:
    """The process's VmHWM (its peak resident memory, kB) read until it ends."""
    while not done.is_set():
        try:
            for ln in Path(f"/proc/{pid}/status").read_text().splitlines():
                if ln.startswith("VmHWM:"):
                    seen.append(int(ln.split()[1]))
        except OSError:
            return
        time.sleep(0.5)


def watched_run(*args: str) -> tuple[int, str, int, int]:
    """`foliofarm run --kernel debian:7.3 --cells 4k-ext4 --checks exec-text
    ARGS`: its exit status, what it said on its terminal, its peak resident
    memory (kB, VmHWM read every half second until it ends) and its pid."""
    p = subprocess.Popen([sys.executable, "-m", "foliofarm", "run", "--kernel", "debian:7.3",
                          "--cells", "4k-ext4", "--checks", "exec-text", *args],
                         cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    seen: list[int] = []
    done = threading.Event()
    watcher = threading.Thread(target=peak_rss, args=(p.pid, seen, done), daemon=True)
    watcher.start()
    out, err = p.communicate(timeout=3600)
    done.set()
    watcher.join()
    assert seen, "the farm's memory was never read"
    return p.returncode, (out + err).decode(errors="replace"), max(seen), p.pid


def test_a_flooding_deep_series_and_a_forging_reproducer_are_bounded_and_judged(tmp_path):
    tree = source.resolve("debian:7.3", cache_dir()).tree
    flood = ["$(shell head -c 300M /dev/zero | tr '\\0' 'y' | fold -w 200 >&2)",
             "$(shell cd $(objtree) && python3 -c \"import os; "
             "[(os.mkdir('d'), os.chdir('d')) for _ in range(3000)]\" 2>/dev/null)"]
    changes = makefile(tree, *flood)
    # a line of its own each time: the series is built (and floods) on every run, never cached
    changes["mm/mempool.c"] = (tree / "mm/mempool.c").read_text() + f"\n/* foliofarm {secrets.token_hex(6)} */\n"
    box = tmp_path / "flood.mbox"
    box.write_text(mail(tree, subject(), changes))
    results = tmp_path / "results"
    rc, terminal, peak, pid = watched_run("--series", str(box), "--repro", str(HOSTILE / "forge-dump.c"),
                                     "--results", str(results))
    assert rc in (0, 1), terminal[-3000:]

    # every output written; no control character in any, nor on the terminal
    run_dir = results / "latest"
    for name in ("report.txt", "report.md", "report.html", "junit.xml", "results.json"):
        text = (run_dir / name).read_text()
        assert shown.is_clean(text.replace("\t", " ")), f"{name} holds a control character"
    assert "\x1b" not in terminal and "\x07" not in terminal, "an escape reached the terminal"
    assert "\\x1b]52;c;" in terminal or "\\x1b]52;c;" in (run_dir / "report.txt").read_text()

    doc = json.loads((run_dir / "results.json").read_text())
    k = series_kernel(doc)
    assert not k.get("build_failed"), k.get("error", "")[-2000:]
    log = Path(k["artifacts"]) / "build.log"
    assert log.stat().st_size < 80 << 20, "the build log kept more than its cap"
    assert b"bytes of output left out here" in log.read_bytes()
    assert doc["verdicts"], "the series got no verdict"

    # the reproducer: the status it exited with, a dump no larger than its cap
    repro = [c for cell in doc["cells"] for c in cell["checks"] if c["name"] == "repro"]
    assert repro and all(c["metrics"].get("exit_status") == 7 for c in repro), \
        [(c["metrics"].get("exit_status"), c.get("reason")) for c in repro]
    for dump in run_dir.rglob("repro*.dump"):
        assert dump.stat().st_size <= 1 << 20, f"{dump}: {dump.stat().st_size} bytes"

    # the series' build directory (3,000 deep) is gone, and no mount is left
    left = [d for d in (cache_dir() / "build" / "series").glob(f"*-{pid}")]
    assert left == [], left
    mounts = Path("/proc/self/mountinfo").read_text()
    assert f"-{pid} " not in mounts

    print(f"the farm's peak resident memory: {peak >> 10} MB")
    assert peak < PEAK_MB << 10, f"the farm's peak: {peak >> 10} MB"


def test_a_reproducer_flooding_its_output_and_the_console_keeps_the_farm_small(tmp_path):
    """A reproducer printing 200 MB on its stdout and 8 MB of lines straight
    to the console (measured afresh, never from the cache): its dump holds
    the driver's 64 KB of it, the console log what came, and the farm's peak
    memory stays under the bound."""
    results = tmp_path / "results"
    rc, terminal, peak, _ = watched_run("--repro", str(HOSTILE / "flood.sh"), "--fresh",
                                     "--results", str(results))
    assert rc in (0, 1), terminal[-3000:]
    run_dir = results / "latest"
    [dump] = list(run_dir.rglob("repro.dump"))
    assert dump.stat().st_size < 1 << 20
    assert "output_cut 1" in (run_dir / "report.txt").read_text()
    [console] = list((run_dir / "boots").glob("*.console.log"))
    assert console.stat().st_size > 8 << 20          # the console's flood came, and is on disk
    print(f"the farm's peak resident memory: {peak >> 10} MB")
    assert peak < PEAK_MB << 10, f"the farm's peak: {peak >> 10} MB"

"""Locks on the shared cache, with real processes: one run waits for another
and says why, a killed holder leaves nothing behind, holds nest in a process,
and a series applied by one run is never built as another run's base."""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from foliofarm import locks
from foliofarm.intake import series, source
from test_series import git, tree  # noqa: F401  (the tiny real git tree fixture)

ROOT = Path(__file__).resolve().parent.parent


def holder(path: Path, what: str, exclusive: bool = True) -> subprocess.Popen:
    """Another process holding the lock until it is told to stop (stdin closed)."""
    code = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from foliofarm import locks
        with locks.hold(Path({str(path)!r}), {what!r}, {exclusive!r}):
            print("held", flush=True)
            sys.stdin.read()
    """)
    p = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "held"
    return p


def test_a_run_waits_for_the_holder_and_says_who(tmp_path):
    path = locks.lock_path(tmp_path, "tree", tmp_path / "linux")
    other = holder(path, "applying a series to linux")
    said = []
    t0 = time.monotonic()

    def release_soon():
        time.sleep(0.5)
        other.stdin.close()

    import threading
    threading.Thread(target=release_soon).start()
    with locks.hold(path, "kernel tree linux", exclusive=False, log=said.append):
        waited = time.monotonic() - t0
    other.wait()
    assert waited >= 0.4
    assert said and "waiting for kernel tree linux" in said[0]
    assert f"pid {other.pid}: applying a series to linux" in said[0]


def test_shared_holds_do_not_wait_for_each_other(tmp_path):
    path = locks.lock_path(tmp_path, "tree", tmp_path / "linux")
    other = holder(path, "base build", exclusive=False)
    said = []
    with locks.hold(path, "kernel tree", exclusive=False, log=said.append):
        pass
    other.stdin.close()
    other.wait()
    assert said == []


def test_a_killed_holder_leaves_no_lock(tmp_path):
    path = locks.lock_path(tmp_path, "build", tmp_path / "b")
    other = holder(path, "make")
    os.kill(other.pid, signal.SIGKILL)
    other.wait()
    said = []
    with locks.hold(path, "build directory", exclusive=True, log=said.append):
        pass
    assert said == []


def test_holds_nest_within_a_process(tmp_path):
    path = locks.lock_path(tmp_path, "tree", tmp_path / "linux")
    with locks.hold(path, "series", exclusive=True):
        with locks.hold(path, "build", exclusive=False):     # the series side's own build
            pass
    with locks.hold(path, "build", exclusive=False):
        with pytest.raises(RuntimeError, match="wait for itself"):
            with locks.hold(path, "series", exclusive=True):
                pass


def test_a_hold_handed_down_to_a_child_process_is_taken_as_held(tmp_path):
    """foliofarm bisect holds the tree while `git bisect run` runs a farm step in
    a child process: the child works under the parent's hold instead of waiting
    for it forever; a process it was not handed to still waits."""
    path = locks.lock_path(tmp_path, "tree", tmp_path / "linux")
    code = textwrap.dedent(f"""
        from pathlib import Path
        from foliofarm import locks
        with locks.hold(Path({str(path)!r}), "a build", False, log=lambda m: print(m, flush=True)):
            print("built", flush=True)
    """)
    with locks.hold(path, "bisection", exclusive=True):
        env = {**os.environ, **locks.handed_down(path), "PYTHONPATH": str(ROOT)}
        child = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                               timeout=30)
        assert child.stdout.strip() == "built"
        stranger = subprocess.Popen([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(ROOT)},
                                    stdout=subprocess.PIPE, text=True)
        assert stranger.stdout.readline().startswith("waiting for a build")
    assert stranger.stdout.readline().strip() == "built"
    stranger.wait(timeout=30)
    with pytest.raises(RuntimeError, match="not held"):
        locks.handed_down(path)


def test_a_base_build_waits_while_another_run_has_a_series_applied(tree, tmp_path):
    """Run A applies a series to the shared tree; run B, resolving the same tree
    for its base meanwhile, waits, and then finds it at its base commit."""
    t = tree.tree
    (t / "mm" / "filemap.c").write_text("int a;\n")
    git(t, "commit", "-q", "-am", "one line")
    git(t, "checkout", "-q", "-b", "tmp")
    (t / "mm" / "filemap.c").write_text("int a9;\n")
    git(t, "commit", "-q", "-am", "mm: change a")
    mbox = git(t, "format-patch", "--stdout", "base..tmp")
    git(t, "checkout", "-q", "base")
    git(t, "branch", "-q", "-D", "tmp")
    (tmp_path / "s.mbox").write_text(mbox)
    ser = series.load(str(tmp_path / "s.mbox"))
    code = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from foliofarm.intake import apply, series
        from foliofarm.intake.source import KernelSource
        src = KernelSource(spec="debian:7.3", tree=Path({str(t)!r}), version="7.3.4", origin="x")
        with apply.applied(src, series.load({str(tmp_path / 's.mbox')!r}), cache=Path({str(tmp_path / 'cache')!r})):
            print("applied", flush=True)
            sys.stdin.read()
    """)
    a = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    assert a.stdout.readline().strip() == "applied"
    assert (t / "mm" / "filemap.c").read_text() == "int a9;\n"
    said = []
    import threading
    threading.Timer(0.5, a.stdin.close).start()
    with locks.tree(tmp_path / "cache", t, exclusive=True, log=said.append):
        restored = source.restore_base(t)
        content = (t / "mm" / "filemap.c").read_text()
    a.wait()
    assert said and "waiting for kernel tree" in said[0]
    assert restored is False and content == "int a;\n"      # A put it back itself
    assert ser.patches[0].subject.endswith("mm: change a")


def test_temporary_folders_of_killed_runs_are_removed(tmp_path, monkeypatch):
    """Every temporary folder is named after its process: a killed run's are
    removed by the next run, a running one's are left alone."""
    import tempfile
    from foliofarm import util
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    dead = subprocess.Popen(["true"])
    dead.wait()
    left = tmp_path / f"foliofarm-{dead.pid}-series-abc"
    left.mkdir()
    with util.tmp_dir("series") as mine:
        assert Path(mine).name.startswith(f"foliofarm-{os.getpid()}-series-")
        assert util.clean_stale_tmp() == [left]
        assert Path(mine).is_dir() and not left.exists()
    assert list(tmp_path.iterdir()) == []


def test_threads_taking_one_shared_lock_at_once_leave_no_hold_behind(tmp_path, monkeypatch):
    """A series' page sizes build at once, each holding the tree shared: when
    they take it together, every hold is still given back, and the exclusive
    hold that applies the series next does not wait for this very process.
    (flock is slowed a little, as a loaded host slows it, to widen the window.)"""
    import fcntl
    import os
    import threading
    import time
    from foliofarm import locks
    real_flock = fcntl.flock

    def slow_flock(fd, op):
        time.sleep(0.01)
        return real_flock(fd, op)
    monkeypatch.setattr(locks.fcntl, "flock", slow_flock)
    tree_dir = tmp_path / "linux"
    for _ in range(5):
        start = threading.Barrier(4)

        def build():
            start.wait()
            with locks.tree(tmp_path, tree_dir, exclusive=False):
                time.sleep(0.05)       # a build
        ts = [threading.Thread(target=build) for _ in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(5)
        fd = os.open(locks.lock_path(tmp_path, "tree", tree_dir), os.O_RDWR)
        try:
            real_flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)    # nobody holds it: not even this process
        finally:
            os.close(fd)
    with locks.tree(tmp_path, tree_dir, exclusive=True):
        pass

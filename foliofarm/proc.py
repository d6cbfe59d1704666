"""Child processes: one run in a process group of its own, killed whole
(with what it started) at a deadline or when a watch names a limit, its
output read as it comes into bounded.Capped sinks, never held whole."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from contextlib import suppress
from pathlib import Path
from typing import Any, Callable

from foliofarm.bounded import Capped, feed


class _OverLimit(Exception):
    """A watched command went over a limit (the message names it)."""


WATCH_EVERY = 5.0  # seconds between two asks of a watch


def _run(args: list[str], cwd: Path | None, env: dict[str, str] | None, input: bytes | None,
         timeout: float | None, preexec: Callable[[], None] | None,
         watch: Callable[[], str] | None, on_start: Callable[[int], None] | None,
         sinks: tuple[Capped, ...] | None) -> subprocess.CompletedProcess[bytes]:
    """subprocess.run, but a timeout (or ``watch`` naming a limit) kills the
    command's whole process group; ``on_start`` is told its pid. ``sinks``:
    stdout and stderr each read into a Capped as they come (one: both into
    it), else both captured whole."""
    own_group = timeout is not None or watch is not None
    deadline = None if timeout is None else time.monotonic() + timeout
    pipes = subprocess.PIPE
    with subprocess.Popen(args, cwd=cwd, env=env, stdout=pipes,
                          stderr=subprocess.STDOUT if sinks and len(sinks) == 1 else pipes,
                          stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                          start_new_session=own_group, preexec_fn=preexec) as proc:
        if on_start is not None:
            on_start(proc.pid)
        readers = []
        if sinks:
            for sink, pipe in zip(sinks, (proc.stdout, proc.stderr)):
                readers.append(sink.start(pipe))
            if input is not None:
                threading.Thread(target=feed, args=(proc.stdin, input), daemon=True).start()
        try:
            while True:
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                step = left if watch is None else min(WATCH_EVERY, left if left is not None else WATCH_EVERY)
                try:
                    if sinks:
                        proc.wait(timeout=step)
                        out, err = b"", b""
                    else:
                        out, err = proc.communicate(input, timeout=step)
                    break
                except subprocess.TimeoutExpired:
                    input = None        # communicate() sent it on the first call
                    if deadline is not None and time.monotonic() >= deadline:
                        raise
                    if watch is not None and (why := watch()):
                        raise _OverLimit(why) from None
        except BaseException:
            if own_group:
                # bwrap --new-session puts the command in a session of its own:
                # what the group kill misses is killed by the process tree
                kill_descendants(proc.pid)
                kill_group(proc.pid)
            proc.kill()
            proc.wait()
            for sink in sinks or ():
                sink.finish(grace=2)
            raise
        if sinks:
            if own_group:       # what it left running holds the pipe: not waited for
                for r in readers:
                    r.join(30)
                kill_group(proc.pid)
            got = [sink.finish() for sink in sinks]
            out, err = got[0], (got[1] if len(got) > 1 else b"")
    return subprocess.CompletedProcess(args, proc.returncode, out, err)


def kill_group(pgid: int | None) -> None:
    """SIGKILL a process group (a command started in a session of its own)."""
    if not pgid:
        return
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (its children, theirs, ...), from /proc."""
    children: dict[int, list[int]] = {}
    for stat_file in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat_file.read_text()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2:].split()
        children.setdefault(int(fields[1]), []).append(int(stat_file.parent.name))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def kill_descendants(pid: int) -> None:
    """SIGKILL everything ``pid`` started, and what that started."""
    for c in descendants(pid):
        with suppress(ProcessLookupError, PermissionError):
            os.kill(c, signal.SIGKILL)



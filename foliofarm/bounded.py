"""Bounds on what untrusted code gives back: its output, its trees.

A compiler, make, git am, checkpatch or a reproducer is someone else's code,
and so is what it prints and what it leaves on disk. The farm never holds
what it printed whole (Capped: the head and the tail, what was between
counted), reads its logs a line at a time (log_lines), and removes a tree it
left whatever its depth, names or links (remove_tree: `rm -rf`, which walks
without recursion and never follows a link)."""

from __future__ import annotations

import os
import subprocess
import threading
from contextlib import suppress
from pathlib import Path
from typing import Any, Callable


def feed(pipe: Any, data: bytes) -> None:
    """Write ``data`` to a child's stdin and close it (a thread's work)."""
    with suppress(BrokenPipeError, OSError):
        pipe.write(data)
        pipe.close()


# The most a command's log may hold (its head and tail), whatever it prints:
# a kernel build's is a few MB.
LOG_CAP = int(os.environ.get("FOLIOFARM_LOG_MB", "64")) << 20


class Capped:
    """A command's output read from its pipe as it comes, by a thread of its
    own: the first ``head`` bytes written to ``out`` (a file; None: kept in
    memory), the last TAIL of what follows kept, what was between counted and
    left out with a line that says how much. Never more than ``head`` + TAIL
    in memory or in the file, whatever the command prints."""

    TAIL = 1 << 20

    def __init__(self, out: Any, head: int, what: str = "") -> None:
        self.out, self.head, self.what = out, head, what
        self.kept = bytearray()          # in memory: the head (without ``out``)
        self.tail = bytearray()
        self.written = 0
        self.dropped = 0
        self.thread: threading.Thread | None = None

    def start(self, pipe: Any) -> threading.Thread:
        self.thread = threading.Thread(target=self._pump, args=(pipe,), daemon=True)
        self.thread.start()
        return self.thread

    def _pump(self, pipe: Any) -> None:
        with suppress(OSError, ValueError):
            while chunk := os.read(pipe.fileno(), 1 << 16):
                self._feed(chunk)

    def _feed(self, chunk: bytes) -> None:
        room = self.head - self.written
        if room > 0:
            part = chunk[:room]
            if self.out is not None:
                self.out.write(part)
                self.out.flush()
            else:
                self.kept += part
            self.written += len(part)
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > self.TAIL:
                cut = len(self.tail) - self.TAIL
                self.dropped += cut
                del self.tail[:cut]

    def finish(self, grace: float | None = None) -> bytes:
        """Wait for the pipe's end (at most ``grace`` s), then the tail after
        a line saying what was left out; what was kept in memory."""
        if self.thread is not None:
            self.thread.join(grace)
        tail = bytes(self.tail)
        said = (f"\n[foliofarm: {self.dropped} bytes of output left out here: the first "
                f"{self.written} and the last {len(tail)} are kept]\n").encode() if self.dropped else b""
        if self.out is not None:
            self.out.write(said + tail)
            self.out.flush()
            return b""
        return bytes(self.kept) + said + tail


def log_lines(logf: Path, keep: Callable[[str], bool], limit: int = 5) -> list[str]:
    """The first ``limit`` lines of a log ``keep`` says yes to, read a line at
    a time (a line's first 4 KB)."""
    out: list[str] = []
    with suppress(OSError), open(logf, "rb") as f:
        for raw in f:
            ln = raw[:4096].decode(errors="replace").rstrip("\n")
            if keep(ln):
                out.append(ln)
                if len(out) >= limit:
                    break
    return out


def remove_tree(path: str | os.PathLike[str]) -> str:
    """Remove ``path`` and all below it, whatever its depth, its names or its
    links, without recursion in this process: coreutils' `rm -rf` (fts:
    iterative, never follows a link, stays on one file system). A directory a
    build made unreadable or unwritable (chmod 000) is made removable first.
    Returns '' once it is gone, else what rm said (the caller says it and
    goes on: a leftover never stops a run)."""
    target = os.fspath(path)
    said = b""
    for attempt in range(2):
        if not os.path.lexists(target):
            return ""
        if attempt:
            subprocess.run(["chmod", "-R", "u+rwX", "--", target], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, check=False)
        with subprocess.Popen(["rm", "-rf", "--one-file-system", "--", target],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) as rm:
            err = Capped(None, 2048)
            err.start(rm.stderr)
            rm.wait()
            said = err.finish()
    if not os.path.lexists(target):
        return ""
    return f"{target} could not be removed: {said.decode(errors='replace').strip()[-400:]}"

"""Small helpers: running commands as argument lists, atomic publishing, hashing."""

from __future__ import annotations

import ast
import errno
import hashlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import Future
from contextlib import contextmanager, nullcontext, suppress
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from foliofarm.bounded import LOG_CAP, Capped, remove_tree
from foliofarm.proc import _OverLimit, _run, descendants, kill_descendants, kill_group  # noqa: F401
from foliofarm.errors import InfraError, TimedOut


def run(
    argv: Sequence[str | os.PathLike[str]],
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    log: Path | None = None,
    what: str = "",
    input: bytes | None = None,
    inherit: bool = True,
    timeout: float | None = None,
    preexec: Callable[[], None] | None = None,
    watch: Callable[[], str] | None = None,
    check: bool = True,
    on_start: Callable[[int], None] | None = None,
    cap: int | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run ``argv`` (never a shell string). Output goes to ``log`` if given (never
    opened through a link), else is captured. A non-zero exit raises InfraError
    naming ``what`` and the command (with ``check``; without, it is returned).
    ``env`` is added to this process's environment, or with ``inherit`` False
    is the whole of it. With ``timeout``, the command runs in a process group
    of its own, killed whole when the time is up (TimedOut); so it is when
    ``watch``, asked every few seconds, names a reason (a limit it went over).

    Output is never held whole: a log keeps at most LOG_CAP bytes (its head
    and tail, what was between counted in a line of its own); with ``cap``,
    captured stdout and stderr keep at most ``cap`` bytes each the same way
    (an untrusted command's: sandbox.run), else they are captured whole (the
    farm's own commands, git's listings)."""
    args = [os.fspath(a) for a in argv]
    full_env = (dict(os.environ, **env) if env else None) if inherit else dict(env or {})
    try:
        if log is not None:
            fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
            with open(fd, "ab") as out:
                out.write(f"$ {shlex.join(args)}\n".encode())
                out.flush()
                sink = Capped(out, max(0, LOG_CAP - os.fstat(fd).st_size), what=str(log))
                proc = _run(args, cwd, full_env, input, timeout, preexec, watch, on_start, (sink,))
        elif cap is not None:
            proc = _run(args, cwd, full_env, input, timeout, preexec, watch, on_start,
                        (Capped(None, cap), Capped(None, cap)))
        else:
            proc = _run(args, cwd, full_env, input, timeout, preexec, watch, on_start, None)
    except FileNotFoundError as exc:
        raise InfraError(f"{what or args[0]}: command not found: {args[0]}") from exc
    except (subprocess.TimeoutExpired, _OverLimit) as exc:
        shown = args[args.index("--") + 1:] if args[0] == "bwrap" and "--" in args else args
        limit = str(exc) if isinstance(exc, _OverLimit) else f"its limit of {timeout:g} s"
        raise TimedOut(f"{what or shown[0]} was stopped at {limit} "
                       f"(killed with everything it started): {shlex.join(shown)[:300]}"
                       + (f"\nlast lines of {log}:\n{tail(log, 10)}" if log else "")) from None
    if proc.returncode != 0 and check:
        raise _failed(args, proc, log, what)
    return proc


def _failed(args: list[str], proc: subprocess.CompletedProcess[bytes], log: Path | None,
            what: str) -> InfraError:
    """The error of a command that exited non-zero, with its last lines."""
    if log is not None:
        detail = f"\nlast lines of {log}:\n" + tail(log, 15)
    else:
        detail = "\n" + (proc.stderr or proc.stdout or b"").decode(errors="replace")[-2000:]
    shown = args
    if args[0] == "bwrap" and "--" in args:    # the command, not the sandbox around it
        shown = args[args.index("--") + 1:]
    sandboxed = " (in the sandbox)" if shown is not args else ""
    full = ""
    if "No space left on device" in detail or "Disk quota exceeded" in detail:
        full = DISK_FULL
    return InfraError(f"{full}{what or args[0]} failed (exit {proc.returncode}){sandboxed}: "
                      f"{shlex.join(shown)}{detail}")


DISK_FULL = ("disk full: free space where the cache is ($FOLIOFARM_CACHE, default "
             "~/.cache/foliofarm) or point FOLIOFARM_CACHE at a larger disk, and run "
             "again (what was finished is kept). ")


def deadline(seconds: float, said: Callable[[], None]) -> threading.Timer:
    """After ``seconds``: ``said()`` (the caller records why), then everything
    this process started is killed and it exits 3."""
    def expire() -> None:
        try:
            said()
        finally:
            kill_descendants(os.getpid())
            os._exit(3)
    timer = threading.Timer(seconds, expire)
    timer.daemon = True
    timer.start()
    return timer


def tail(path: Path, lines: int) -> str:
    try:
        with open(os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK), "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 64 * 1024))
            return "\n".join(f.read().decode(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def sha256_text(*parts: str | bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode() if isinstance(p, str) else p)
        h.update(b"\0")
    return h.hexdigest()


def sha256_files(paths: Iterable[Path]) -> str:
    h = hashlib.sha256()
    for p in sorted(paths):
        h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def code_digest(path: Path) -> str:
    """A module's code as a cache key's part: its syntax tree without imports,
    comments or layout, so that a recipe's artifacts are made anew when the
    recipe changes, not when the module moves or its imports do. One parse at
    a time: CPython 3.11's syntax trees are not made thread-safely (a SystemError)."""
    with _PARSING:
        tree = ast.parse(path.read_text(), str(path))
        tree.body = [n for n in tree.body if not isinstance(n, (ast.Import, ast.ImportFrom))]
        return sha256_text(ast.unparse(tree))


_PARSING = threading.Lock()


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# Read once, before any thread starts: os.umask() can only be read by setting it.
UMASK = _umask()


def write_atomic(path: Path, data: str | bytes, durable: bool = True) -> None:
    """Write ``path`` so that a reader sees the old or the new content, never half,
    with the permissions the user's umask gives a new file (mkstemp's are 0600).
    ``durable``: on the disk before it replaces the old file (survives a host
    crash); without it, still whole for any reader, and safe from a killed run."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = "wb" if isinstance(data, bytes) else "w"
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        os.fchmod(fd, 0o666 & ~UMASK)
        with os.fdopen(fd, mode) as f:
            f.write(data)
            f.flush()
            if durable:
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def file_digest(path: Path, sample: bool = False) -> str:
    """sha256 of a file; with ``sample``, of its size and 64 chunks of 64K spread
    over it (for disk images of hundreds of MB, read on every run)."""
    h = hashlib.sha256()
    size = path.stat().st_size
    with open(path, "rb") as f:
        if not sample or size <= 64 * 65536:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        else:
            h.update(str(size).encode())
            for i in range(64):
                f.seek(i * (size - 65536) // 63)
                h.update(f.read(65536))
    return h.hexdigest()


def seal(path: Path, sample: bool = False) -> None:
    """Record ``path``'s digest beside it (``path.sha256``)."""
    write_atomic(path.with_name(path.name + ".sha256"), file_digest(path, sample) + "\n")


def sealed(path: Path, sample: bool = False) -> bool:
    """True if ``path`` is there and still has the digest seal() recorded."""
    stamp = path.with_name(path.name + ".sha256")
    try:
        return path.is_file() and stamp.read_text().strip() == file_digest(path, sample)
    except OSError:
        return False


def write_json(path: Path, obj: Any, durable: bool = True) -> None:
    write_atomic(path, json.dumps(obj, indent=2, sort_keys=False) + "\n", durable)


class StagingDir:
    """A directory built under a temporary name and renamed into place only when
    complete: an interrupted producer never leaves a directory a later run trusts.
    Named after the process and thread, so producers on two threads never share
    one; with ``replace=False`` (content-keyed) the first one finished stays."""

    def __init__(self, final: Path, replace: bool = True) -> None:
        self.final, self.replace = final, replace
        self.tmp = final.with_name(f".{final.name}.{threading.get_ident()}.tmp-{os.getpid()}")

    def __enter__(self) -> Path:
        remove_tree(self.tmp)
        self.tmp.mkdir(parents=True)
        return self.tmp

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None and (self.replace or not self.final.is_dir()):  # a reader may be in it
            remove_tree(self.final)
            os.rename(self.tmp, self.final)
        remove_tree(self.tmp)


def clean_stale_staging(parent: Path) -> None:
    """Remove staging directories left by killed runs. A staging directory is
    named after the process filling it; one whose process still runs is another
    run's work in progress and is left alone."""
    if parent.is_dir():
        for p in parent.glob(".*.tmp-*"):
            if not pid_alive(p.name.rsplit("-", 1)[-1]):
                remove_tree(p)


@contextmanager
def tmp_dir(kind: str) -> Iterator[str]:
    """A temporary directory named after this process: removed on the way out
    (bounded.remove_tree: whatever a sandboxed command left in it), and by the
    next run's clean_stale_tmp() if this process was killed."""
    d = tempfile.mkdtemp(prefix=f"foliofarm-{os.getpid()}-{kind}-")
    try:
        yield d
    finally:
        remove_tree(d)


def clean_stale_tmp() -> list[Path]:
    """Remove temporary directories that killed runs left (tmp_dir()); a running
    run's are left alone. Returns what was removed."""
    gone = []
    for p in Path(tempfile.gettempdir()).glob("foliofarm-*-*"):
        pid = p.name.split("-")[1]
        if pid.isdigit() and not pid_alive(pid):
            remove_tree(p)
            gone.append(p)
    return gone


def pid_alive(pid: str) -> bool:
    if not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:     # alive, but another user's
        return True
    return True


def check_free_space(path: Path, need_gb: float, what: str) -> None:
    path.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(path).free / 2**30
    if free < need_gb:
        raise InfraError(
            f"{what} needs about {need_gb:.0f} GiB free in {path}, only {free:.1f} GiB left: "
            "free some space or point FOLIOFARM_CACHE at a larger disk")


def is_enospc(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno == errno.ENOSPC


def settle(futures: list[Future[Any]]) -> None:
    """Drop the futures that have not started and wait for those that have
    (their errors are theirs to report: only their end is waited for)."""
    for f in futures:
        f.cancel()
    for f in futures:
        if not f.cancelled():
            f.exception()


class ConsoleLog:
    """A run's log lines on a rich console, as plain text: kernel and compiler
    messages are full of [brackets] that must not be read as markup. Handed
    down to every stage that logs (a callable of the ground: a stage that logs
    calls no code of the run's)."""

    def __init__(self, console: Any) -> None:
        self.console = console

    def __call__(self, msg: str, style: str | None = None) -> None:
        from foliofarm import shown
        # a Subject, a compiler's line, a guest's: their escapes shown, never sent
        self.console.log(shown.rich_text(msg, style or ""), _stack_offset=2)


def no_status(message: str) -> nullcontext[None]:
    """A status line that shows nothing (a page size's thread: the main thread has it)."""
    return nullcontext()


def say(message: str) -> None:
    """A line for the person at the terminal, on standard error (waiting for a
    lock another run holds)."""
    from foliofarm import shown
    print(shown.terminal(message), file=sys.stderr)

"""A run as a child process, and what it recorded read back: the one way the
watcher (a series from the list), bisect (each step), the self-checks (bench,
mutants, faults) start `foliofarm run` and read its results.

The child runs in a session of its own (its process group is everything it
started: stopped together at a limit), optionally dies with its parent
(PR_SET_PDEATHSIG: a watcher killed leaves no run behind), with the
environment it is given (None: the parent's) and its output to a log file, a
pipe or nowhere."""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from foliofarm.paths import ROOT
from foliofarm.report import readback
from foliofarm.results.read import ResultsError
from foliofarm.results.schema import Results
from foliofarm.util import kill_group

PR_SET_PDEATHSIG = 1
INTERRUPT_GRACE_S = 30.0


def command(args: list[str]) -> list[str]:
    """`foliofarm run ARGS` with this interpreter (the farm's environment)."""
    return [sys.executable, "-m", "foliofarm", "run", *args]


def _die_with_parent() -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


@dataclass
class Child:
    proc: subprocess.Popen[Any]
    results: Path              # the --results folder: its run is results/latest

    @property
    def pid(self) -> int:
        return self.proc.pid

    def wait(self, timeout: float | None = None) -> int | None:
        """The exit status; None when ``timeout`` passed first (then the
        child and everything it started are killed)."""
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.stop()
            self.proc.wait()
            return None

    def stop(self) -> None:
        """Kill the run's process group (what a finished run left behind too)."""
        kill_group(self.proc.pid)

    def interrupt(self, grace: float = INTERRUPT_GRACE_S) -> None:
        """^C passed on: the run is in a session of its own, so a terminal's
        ^C reaches only its parent. SIGINT makes the run stop as ^C does (it
        records why and kills its guests); what is left after ``grace`` is killed."""
        try:
            self.proc.send_signal(signal.SIGINT)
            self.proc.wait(grace)
        except subprocess.TimeoutExpired:
            pass
        finally:                 # a second ^C: everything at once
            self.stop()

    @property
    def run_dir(self) -> Path | None:
        latest = self.results / "latest"
        return latest.resolve() if latest.exists() else None

    def read(self) -> Results | None:
        """What the run recorded (read_back); None where it left nothing."""
        return read_back(self.run_dir) if self.run_dir is not None else None


def stoppable() -> None:
    """For a command that runs `foliofarm run` to its end (run_to_end: the
    self-checks, bisect) for an hour or more, often as a background job whose
    shell has SIGINT ignored (and Python keeps what it inherits): SIGINT is
    made ^C again, and SIGTERM stops it as ^C does, so the run it started is
    stopped too and keeps what it had (else the run, in a session of its own,
    would go on alone), and a bench never counts a killed run."""
    def terminated(signum: int, frame: object) -> None:
        raise KeyboardInterrupt
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, terminated)


def start(args: list[str], results: Path, *, env: dict[str, str] | None = None, cwd: Path = ROOT,
          output: IO[Any] | int | None = subprocess.DEVNULL, die_with_parent: bool = False,
          text: bool = False) -> Child:
    """Start `foliofarm run ARGS --results RESULTS`. ``output``: an open file,
    subprocess.PIPE (then ``text`` for lines of text), or DEVNULL; stderr
    goes with it."""
    results.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(command([*args, "--results", str(results)]), cwd=cwd, env=env,
                            stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT,
                            text=text, start_new_session=True,
                            preexec_fn=_die_with_parent if die_with_parent else None)
    return Child(proc, results)


def run_to_end(args: list[str], results: Path, *, log: Path | None = None, env: dict[str, str] | None = None,
               cwd: Path = ROOT, timeout: float | None = None) -> tuple[int | None, Results | None]:
    """Run `foliofarm run ARGS --results RESULTS` to its end (its output to
    ``log``, appended, or nowhere), then what it recorded: (exit status, None
    if stopped at ``timeout``; its results, None if it left none). ^C here
    stops the run too (Child.interrupt), then goes on up."""
    if log is not None:
        log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") if log is not None else open(os.devnull, "wb") as out:
        child = start(args, results, env=env, cwd=cwd, output=out)
        try:
            rc = child.wait(timeout)
        except KeyboardInterrupt:
            child.interrupt()
            raise
    child.stop()
    return rc, child.read()


def read_back(run_dir: Path) -> Results | None:
    """A run's results.json, read and judged again from its cells (a killed
    run's document has no verdicts); None if there is none or it cannot be
    read (the run died before writing it, or left it damaged)."""
    try:
        return readback(run_dir)
    except ResultsError:
        return None

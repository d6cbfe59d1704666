"""A boot session: QEMU driven over its serial console with pexpect.

The session always leaves the whole console log on disk, written as it arrives.
Each command's output is framed by a random marker, split in the command text so
that an echo of the command can never match it, with the exit status inside the
frame. Everything read is scanned for splats; a guest that hangs or dies raises
GuestError with the console excerpt, never a hang of the farm."""

from __future__ import annotations

import hashlib
import re
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import pexpect

from foliofarm import cgroups, sandbox
from foliofarm.boot import banner, priority, splat
from foliofarm.boot.qemu import guest_totals
from foliofarm.boot.banner import READY, normalise
from foliofarm.boot import transfer
from foliofarm.boot.deadline import Deadline
from foliofarm.boot.transfer import DUMP_CAP, OverCap  # noqa: F401 - the session's callers name them here
from foliofarm.errors import GuestError

# After a lockup or hung-task report, how long the command in flight still gets.
HANG_GRACE_S = 15.0
# Markers and reports are searched for in the newest console text only: over the
# whole buffer, each read would scan everything again (a 30 MB dump: a minute).
SEARCH_WINDOW = 1 << 20
# More console output than this for one command is a flood (a printk storm, a
# program gone wild): the command is stopped, as an error, not a verdict.
CONSOLE_CAP = 64 << 20
FLOOD_POLL_S = 2.0


@dataclass(frozen=True)
class CommandResult:
    command: str
    status: int
    output: str
    seconds: float
    splats: tuple[splat.Splat, ...]      # reports on the console or in the kernel log
    kernel_log: str = ""                 # kernel log lines printed while it ran
    taint_before: int = 0
    taint_after: int = 0

    @property
    def new_taint(self) -> int:
        """Taint the command's run added (beyond the farm's own module loads)."""
        return splat.new_taint(self.taint_before, self.taint_after)

    def trouble(self) -> str:
        """What the kernel reported while the command ran, or "" if nothing:
        new taint letters and the reports' first lines."""
        parts = []
        if self.new_taint:
            parts.append(f"kernel tainted {splat.taint_letters(self.new_taint)} "
                         f"({splat.describe_taint(self.new_taint)})")
        parts += [f"{s.kind}: {s.line}" for s in self.splats]
        return "; ".join(parts)




class GuestSession:
    """Context manager: boots on enter, kills QEMU and closes the log on exit."""

    # Where the guest keeps its taint and how it hands over new kernel log lines;
    # the console tests' stand-in shell points these at files of its own.
    taint_file = "/proc/sys/kernel/tainted"
    console_cap = CONSOLE_CAP        # bytes of console output one command may print
    kernel_log_command = "dmesg -c"
    device_dir = "/dev"              # where the guest finds the outbox device
    banner_command = "/bin/ffbanner"  # rootfs/banner: prints the boot banner again

    def __init__(self, argv: list[str], console_log: Path, boot_timeout: float = 300,
                 outbox: Path | None = None, tree: bool = False, claim: bool = False) -> None:
        self.argv = argv
        self.tree = tree             # a guest of the tree's checks: it yields to the own (priority.py)
        self.claim = claim           # and the other tree guests yield to it (the race parts)
        self._registered: int | None = None   # QEMU's pid, while priority.GUESTS counts it
        self.outbox = outbox         # the host's side of the guest's outbox disk, if attached
        self.console_log = console_log
        self.boot_timeout = boot_timeout
        self.child: pexpect.spawn | None = None
        self._log: TextIO | None = None
        self._scanned = 0          # offset in the log file up to which splats were taken
        self.splats: list[splat.Splat] = []
        self.boot_seconds = 0.0
        self.banner: dict[str, str] = {}
        self.dead = False
        self.taint = 0               # /proc/sys/kernel/tainted after the last command
        self.boot_log = ""           # the kernel log up to the shell, read once
        self.running: str | None = None   # the command in flight, for attribution
        self.history: list[CommandResult] = []   # every command's result, in order
        self.hang_grace = HANG_GRACE_S
        self.cgroup: cgroups.Cgroup | None = None    # QEMU's totals (guest_totals), where the host gives one
        self.started = 0.0           # time.monotonic() when QEMU was started
        self.guest_seconds = 0.0     # QEMU's wall time, from its start to its end
        self.cpu_seconds: float | None = None   # and the host CPU time it used (every thread)
        self.waited_seconds: float | None = None   # and how long its busiest thread waited for a core
        self.boot_waited = 0.0       # a tree guest: how long it waited to start (priority.wait_to_boot)

    # -- lifecycle ---------------------------------------------------------------
    def __enter__(self) -> "GuestSession":
        argv = self.argv
        self.console_log.parent.mkdir(parents=True, exist_ok=True)
        self._log = open(self.console_log, "w", encoding="utf-8", errors="replace", buffering=1)
        self._log.write(f"# {' '.join(argv)}\n")
        if self.tree:
            # booting, it does not yield: it waits for a core (priority.py)
            self.boot_waited = priority.GUESTS.wait_to_boot()
            if self.boot_waited >= 1:
                self._log.write(f"# waited {self.boot_waited:.0f} s for a core free of "
                                "the own checks' guests and the other boots\n")
        t0 = self.started = time.monotonic()
        self.cgroup = cgroups.Cgroup.make(guest_totals(argv)) if sandbox.enabled() else None
        self.child = pexpect.spawn(argv[0], argv[1:], encoding="utf-8", codec_errors="replace",
                                   timeout=self.boot_timeout, maxread=65536,
                                   searchwindowsize=SEARCH_WINDOW, echo=False,
                                   preexec_fn=self.cgroup.join if self.cgroup else None)
        self._registered = self.child.pid
        priority.GUESTS.started(self.child.pid, self.tree, self.claim)
        # pexpect sleeps 50 ms before every send by default (for terminals that
        # drop input sent too early); the guest's shell reads the serial line
        # whenever it is ready, and a cell sends some 25 commands.
        self.child.delaybeforesend = None
        self.child.logfile_read = self._log
        try:
            before = self._expect_marker(READY, Deadline(self.boot_timeout, self._waited), "boot")
        except BaseException:
            self.__exit__(None, None, None)
            raise
        self.boot_seconds = time.monotonic() - t0
        if self.tree:
            priority.GUESTS.booted(self.child.pid)
        self.banner, garbled = banner.parse(before)
        self._take_splats()
        # The first command reads the whole boot log and the boot's taint: the
        # baseline every later command is measured against.
        first = self.run("true", timeout=60)
        self.boot_log = first.kernel_log
        if garbled or not banner.complete(self.banner):
            # a kernel message garbled the banner: the guest prints it again
            again, _ = banner.parse(self.run(self.banner_command, timeout=60).output)
            self.banner = {**self.banner, **again}
        self.splats.extend(s for s in splat.scan(first.kernel_log)
                           if not any(s.line == o.line for o in self.splats))
        return self

    def __exit__(self, *exc: object) -> None:
        if self.child is not None:
            self.cpu_seconds = priority.cpu_seconds(self.child.pid)
            self.waited_seconds = priority.waited_seconds(self.child.pid)
            self.guest_seconds = time.monotonic() - self.started
            try:
                self.child.terminate(force=True)
            except Exception:   # the process may be gone already
                pass
            self.child = None
        if self._registered is not None:
            priority.GUESTS.ended(self._registered, self.tree)
            self._registered = None
        if self._log is not None:
            self._log.close()
            self._log = None
        if self.cgroup is not None:
            self.cgroup.close()
            self.cgroup = None

    def _waited(self) -> float | None:
        """How long QEMU's busiest thread has waited for a core (a deadline's
        extension: priority.waited_seconds), None once it is gone."""
        return priority.waited_seconds(self.child.pid) if self.child is not None else None

    # -- commands ----------------------------------------------------------------
    def run(self, command: str, timeout: float = 120) -> CommandResult:
        """Run one shell command line in the guest and return its framed output,
        the kernel log lines it caused and the taint before and after it."""
        if self.dead or self.child is None:
            raise GuestError("guest is not running (an earlier command killed it)")
        tag = secrets.token_hex(6)
        begin, end, klog = f"FFB{tag}", f"FFE{tag}", f"FFK{tag}"
        deadline = Deadline(timeout, self._waited)
        t0 = time.monotonic()
        self.running = command
        # 'FF''B' in the command prints as FFB: an echoed command line cannot match.
        # After the command: its status, the taint, and the kernel log since the
        # last command (dmesg -c reads and clears it, whatever the console level).
        self.child.sendline(f"echo FF''B{tag}; {command}; echo FF''E{tag} $? "
                            f"$(cat {self.taint_file} 2>/dev/null || echo -1); "
                            f"{self.kernel_log_command} 2>/dev/null; echo FF''K{tag}")
        self._expect_marker(begin + "\n", deadline, command, regex_newline=True)
        output = normalise(self._expect_marker(end + " ", deadline, command, watch_hangs=True))
        status, taint = self._expect_status(deadline, command)
        kernel_log = normalise(self._expect_marker(klog, deadline, command)).strip("\n")
        seconds = time.monotonic() - t0
        new = self._take_splats()
        for s in splat.scan(kernel_log):
            if not any(s.line == o.line for o in [*self.splats, *new]):
                new.append(s)
        self.splats.extend(n for n in new if n not in self.splats)
        before = self.taint
        if taint >= 0:
            self.taint = taint
        self.running = None
        result = CommandResult(command, status, output, seconds, tuple(new), kernel_log,
                               before, self.taint)
        self.history.append(result)
        return result

    def read_file(self, path: str, timeout: float = 120, limit: int = DUMP_CAP) -> str:
        """A guest file's text, at most ``limit`` bytes (boot/transfer.py)."""
        return transfer.read_file(self, path, timeout, limit)

    def read_bytes(self, path: str, timeout: float = 120, limit: int = DUMP_CAP) -> bytes:
        """A guest file's bytes, at most ``limit`` (boot/transfer.py)."""
        return transfer.read_bytes(self, path, timeout, limit)

    # -- internals -----------------------------------------------------------------
    def _expect_marker(self, marker: str, deadline: Deadline, what: str,
                       regex_newline: bool = False, watch_hangs: bool = False) -> str:
        """Wait for ``marker``; return the text before it. With ``watch_hangs``,
        a lockup or hung-task report shortens the wait to ``hang_grace``."""
        assert self.child is not None
        pattern = marker.rstrip("\n") if regex_newline else marker
        states = {0: "found", 1: "hang-report", 2: "eof", 3: "timeout"}
        hang = splat.hang_regex() if watch_hangs else re.compile(r"(?!x)x")   # never matches
        hang_seen = False
        text = ""
        while True:
            idx = self.child.expect([re.escape(pattern), hang, pexpect.EOF, pexpect.TIMEOUT],
                                    timeout=max(0.1, min(FLOOD_POLL_S, deadline.remaining())))
            state = states[idx]
            if state == "timeout" and not deadline.expired():
                # before: everything since the last match (pexpect keeps it across timeouts)
                seen = self.child.before if isinstance(self.child.before, str) else ""
                if len(seen) + len(text) > self.console_cap:
                    self.dead = True
                    raise GuestError(f"console flood: more than {self.console_cap >> 20} MB on the "
                                     f"console during {what!r}; the command was stopped and the "
                                     "guest is booted again for what follows",
                                     seen[-4000:], kernel_fault=False)
                continue
            if state != "hang-report":
                break
            # keep what the match consumed: it is console text like any other
            text += (self.child.before or "") + (self.child.after or "")
            if not hang_seen:
                # A lockup or hung-task detector fired: give the command a little
                # longer (the stuck task may not be ours), then call it hung.
                hang_seen = True
                deadline = Deadline(min(deadline.remaining(), self.hang_grace))
        if state in ("found", "eof", "timeout") and isinstance(self.child.before, str):
            text += self.child.before
        if state == "found":
            if regex_newline:   # consume the rest of the marker line
                self.child.expect(r"\r*\n", timeout=max(1.0, deadline.remaining()))
            return text
        self.dead = True
        self._take_splats()
        excerpt = self._excerpt()
        if state == "eof":
            fatal = splat.is_fatal(self.splats)
            how, host, fatal = self._qemu_exit(fatal)
            # QEMU that exits on its own, status 0, did so because the guest
            # reset or powered off (-no-reboot): the kernel's doing, panic
            # line or not. Killed, or failing with its own error: the host's.
            raise GuestError(f"guest died during {what!r} (QEMU exited"
                             f"{', kernel panic' if fatal else ''}{how})", excerpt,
                             kernel_fault=fatal or not host)
        if hang_seen:
            stuck = next((s for s in reversed(self.splats)
                          if s.kind in ("soft-lockup", "hung-task", "rcu-stall")), None)
            raise GuestError(f"guest hung: {what!r} did not finish after the kernel reported "
                             f"{stuck.kind + ': ' + stuck.line if stuck else 'a stuck task'}",
                             excerpt, kernel_fault=True)
        raise GuestError(f"guest hung: {what!r} did not finish within "
                         f"{deadline.describe()}", excerpt, kernel_fault=True)

    def _qemu_exit(self, fatal: bool) -> tuple[str, bool, bool]:
        """How QEMU ended, whether the host is to blame, and whether the kernel
        died (``fatal``, from the console): killed by a signal from outside,
        exiting with an error of its own (it could not start) or stopped at its
        cgroup's limit is never a verdict on the kernel (an error, exit 3)."""
        if self.cgroup is not None and (held := self.cgroup.stopped()):
            return f"; QEMU was stopped at {held}", True, False
        try:
            self.child.close(force=False)
        except Exception:       # pexpect may refuse while the process lingers
            return "", True, fatal
        sig = getattr(self.child, "signalstatus", None)
        if sig:
            return f"; QEMU was killed by signal {sig}, not by the guest", True, fatal
        status = getattr(self.child, "exitstatus", None)
        if status:
            return f"; QEMU exited with status {status}", True, fatal
        return "", status is None, fatal

    def _expect_status(self, deadline: Deadline, what: str) -> tuple[int, int]:
        """The exit status and the taint printed after the end marker."""
        assert self.child is not None
        idx = self.child.expect([r"(\d+) (-?\d+)\r*\n", pexpect.EOF, pexpect.TIMEOUT],
                                timeout=max(1.0, deadline.remaining()))
        if idx != 0:
            self.dead = True
            raise GuestError(f"guest stopped while finishing {what!r}", self._excerpt())
        return int(self.child.match.group(1)), int(self.child.match.group(2))

    def console_mark(self) -> int:
        """Where the console log stands now, for console_since()."""
        if self._log is not None:
            self._log.flush()
        try:
            return self.console_log.stat().st_size
        except OSError:
            return 0

    def console_since(self, mark: int, limit: int = 1 << 20) -> str:
        """The console's text since ``mark`` (its last ``limit`` bytes): what a
        command printed before the guest died under it."""
        if self._log is not None:
            self._log.flush()
        try:
            with open(self.console_log, "rb") as f:
                size = f.seek(0, 2)
                f.seek(max(mark, size - limit))
                return normalise(f.read().decode("utf-8", errors="replace"))
        except OSError:
            return ""

    def _take_splats(self) -> list[splat.Splat]:
        # what the log holds since the last scan, and a little before it (a
        # report may straddle two reads): never the whole log again (a flood
        # takes it to CONSOLE_CAP a command)
        start = max(0, self._scanned - 400)
        text = self.console_since(start, limit=CONSOLE_CAP + (1 << 20))
        found: list[splat.Splat] = []
        for s in splat.scan(text):
            # one report, seen on the console and again in the kernel log lines
            # read after the command, is one report
            if not any(s.line == o.line for o in [*self.splats, *found]):
                found.append(s)
        self._scanned = self.console_mark()
        self.splats.extend(found)
        return found

    def _excerpt(self, lines: int = 60) -> str:
        """What to show for a guest that hung or died: the console's tail where
        it holds the fatal report (with what led to it: the BUG before the
        panic it ends in), else the fatal report's lines (the panic, not an
        earlier WARN), else the console's tail."""
        fatal = [s for s in self.splats if splat.is_fatal([s])]
        tail = "\n".join([ln for ln in self.console_since(0, limit=1 << 20).split("\n") if ln.strip()][-lines:])
        if fatal and fatal[-1].line not in tail:
            return fatal[-1].excerpt
        return tail

"""A boot session: QEMU driven over its serial console with pexpect.

The session always leaves the whole console log on disk, written as it arrives.
Each command's output is framed by a random marker, split in the command text so
that an echo of the command can never match it, with the exit status inside the
frame. Everything read is scanned for splats; a guest that hangs or dies raises
GuestError with the console excerpt, never a hang of the farm."""

from __future__ import annotations

import base64
import gzip
import hashlib
import re
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import pexpect

from foliofarm import splat
from foliofarm.errors import GuestError

READY = "FOLIOFARM-READY"


class Deadline:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds

    def remaining(self) -> float:
        return max(0.0, self.end - time.monotonic())

    def expired(self) -> bool:
        return self.remaining() <= 0


@dataclass(frozen=True)
class CommandResult:
    command: str
    status: int
    output: str
    seconds: float
    splats: tuple[splat.Splat, ...]


CRLF = re.compile(r"\r+\n")


def normalise(text: str) -> str:
    """Console text with plain newlines: the guest tty and the host pty each turn
    \n into \r\n, so lines arrive as \r\r\n."""
    return CRLF.sub("\n", text).replace("\r", "\n")


class GuestSession:
    """Context manager: boots on enter, kills QEMU and closes the log on exit."""

    def __init__(self, argv: list[str], console_log: Path, boot_timeout: float = 300) -> None:
        self.argv = argv
        self.console_log = console_log
        self.boot_timeout = boot_timeout
        self.child: pexpect.spawn | None = None
        self._log: TextIO | None = None
        self._scanned = 0          # offset in the log text up to which splats were taken
        self.splats: list[splat.Splat] = []
        self.boot_seconds = 0.0
        self.banner: dict[str, str] = {}
        self.dead = False

    # -- lifecycle ---------------------------------------------------------------
    def __enter__(self) -> "GuestSession":
        argv = self.argv
        self.console_log.parent.mkdir(parents=True, exist_ok=True)
        self._log = open(self.console_log, "w", encoding="utf-8", errors="replace", buffering=1)
        self._log.write(f"# {' '.join(argv)}\n")
        t0 = time.monotonic()
        self.child = pexpect.spawn(argv[0], argv[1:], encoding="utf-8", codec_errors="replace",
                                   timeout=self.boot_timeout, maxread=65536,
                                   searchwindowsize=None, echo=False)
        self.child.logfile_read = self._log
        try:
            self._expect_marker(READY, Deadline(self.boot_timeout), "boot")
        except BaseException:
            self.__exit__(None, None, None)
            raise
        self.boot_seconds = time.monotonic() - t0
        self.banner = self._parse_banner(self.child.before or "")
        self._take_splats()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.child is not None:
            try:
                self.child.terminate(force=True)
            except Exception:   # the process may be gone already
                pass
            self.child = None
        if self._log is not None:
            self._log.close()
            self._log = None

    # -- commands ----------------------------------------------------------------
    def run(self, command: str, timeout: float = 120) -> CommandResult:
        """Run one shell command line in the guest and return its framed output."""
        if self.dead or self.child is None:
            raise GuestError("guest is not running (an earlier command killed it)")
        tag = secrets.token_hex(6)
        begin, end = f"FFB{tag}", f"FFE{tag}"
        deadline = Deadline(timeout)
        t0 = time.monotonic()
        # 'FF''B' in the command prints as FFB: an echoed command line cannot match.
        self.child.sendline(f"echo FF''B{tag}; {command}; echo FF''E{tag} $?")
        self._expect_marker(begin + "\n", deadline, command, regex_newline=True)
        self._expect_marker(end + " ", deadline, command)
        output = normalise(self.child.before or "")
        self._expect_status(deadline, command)
        status = int(self.child.match.group(1))
        new = self._take_splats()
        return CommandResult(command, status, output, time.monotonic() - t0, tuple(new))

    def read_file(self, path: str, timeout: float = 120) -> str:
        """A guest file's text. It crosses the serial console gzip'd and base64'd
        (dumps run to megabytes; the console is the slow part of a check), and is
        checked against gzip's CRC and the file's md5sum in the guest."""
        res = self.run(f"gzip -1 -c {path} | base64", timeout)
        if res.status != 0:
            raise GuestError(f"cannot read {path} in the guest (exit {res.status})", res.output[-2000:])
        digest = self.run(f"md5sum {path}", 30).output.split()
        try:
            text = gzip.decompress(base64.b64decode(res.output, validate=False)).decode()
        except (ValueError, OSError, EOFError) as exc:
            raise GuestError(f"{path}: console transfer corrupted ({exc}); kernel messages "
                             "may have interleaved with it", res.output[-2000:]) from exc
        if not digest or hashlib.md5(text.encode()).hexdigest() != digest[0]:
            raise GuestError(f"{path}: console transfer corrupted (md5 mismatch)", text[-2000:])
        return text

    # -- internals -----------------------------------------------------------------
    def _expect_marker(self, marker: str, deadline: Deadline, what: str,
                       regex_newline: bool = False) -> None:
        assert self.child is not None
        pattern = marker.rstrip("\n") if regex_newline else marker
        states = {0: "found", 1: "eof", 2: "timeout"}
        idx = self.child.expect_exact([pattern, pexpect.EOF, pexpect.TIMEOUT],
                                      timeout=max(1.0, deadline.remaining()))
        state = states[idx]
        if state == "found":
            if regex_newline:   # consume the rest of the marker line
                self.child.expect(r"\r*\n", timeout=max(1.0, deadline.remaining()))
            return
        self.dead = True
        self._take_splats()
        excerpt = self._excerpt()
        if state == "eof":
            raise GuestError(f"guest died during {what!r} (QEMU exited"
                             f"{', kernel panic' if splat.is_fatal(self.splats) else ''})", excerpt)
        raise GuestError(f"guest hung: {what!r} did not finish within "
                         f"{deadline.seconds:.0f}s", excerpt)

    def _expect_status(self, deadline: Deadline, what: str) -> None:
        assert self.child is not None
        idx = self.child.expect([r"(\d+)\r*\n", pexpect.EOF, pexpect.TIMEOUT],
                                timeout=max(1.0, deadline.remaining()))
        if idx != 0:
            self.dead = True
            raise GuestError(f"guest stopped while finishing {what!r}", self._excerpt())

    def _log_text(self) -> str:
        if self._log is not None:
            self._log.flush()
        return normalise(self.console_log.read_text(encoding="utf-8", errors="replace"))

    def _take_splats(self) -> list[splat.Splat]:
        text = self._log_text()
        # rescan a little before the last offset: a report may straddle two reads
        start = max(0, self._scanned - 400)
        found = [s for s in splat.scan(text[start:])
                 if not any(s.line == o.line for o in self.splats)]
        self._scanned = len(text)
        self.splats.extend(found)
        return found

    def _excerpt(self, lines: int = 60) -> str:
        if self.splats:
            return self.splats[0].excerpt
        return "\n".join(self._log_text().splitlines()[-lines:])

    @staticmethod
    def _parse_banner(text: str) -> dict[str, str]:
        out: dict[str, str] = {}
        for line in normalise(text).splitlines():
            if line.startswith("FOLIOFARM "):
                words = line.split()
                if words[1] == "kernel" and len(words) >= 5:
                    out["uname"] = words[2]
                    out["page_size"] = words[4]
                elif words[1] == "probe":
                    out["probe"] = words[2]
                elif words[1] == "mounted" and len(words) >= 4:
                    out[f"mount:{words[2]}"] = words[3]
                elif words[1] == "mount" and len(words) >= 5:
                    out[f"mount:{words[3]}"] = "FAILED"
        return out

"""A reproducer asked for on the list: a reply in a thread the follower tests,
whose plain text holds a line

    foliofarm: repro [ARGS]

(at the start of a line, not quoted) and the reproducer: a FILE.c or FILE.sh
attached, or inline, the lines after that one up to a line `foliofarm: end`,
the signature's `-- ` or the end of the text. ARGS are its arguments, split as
a shell would. Anyone may ask; what it sends is untrusted code like a series
(compiled in the sandbox, run only in guests: disks/reproducer.py).

A message is read here and never trusted: one that cannot be read, holds no
reproducer, one over MAX_BYTES or of neither kind is refused with the reason
(the follower answers it once, with that reason); a message without the line
is no request at all."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from email import policy
from email.parser import BytesParser

TRIGGER = re.compile(r"^foliofarm:[ \t]*repro\b[ \t]*(?P<args>[^\n]*)$", re.M)
END = re.compile(r"^(-- |foliofarm:[ \t]*end[ \t]*)$")
MAX_BYTES = 64 * 1024           # a reproducer from the list: a page or two
MAX_ARGS = 200                  # characters of its arguments
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}\.(c|sh)")


@dataclass(frozen=True)
class Asked:
    """A reproducer asked for: its file name (repro.c, repro.sh, or the
    attachment's), its text and its arguments as written."""
    name: str
    text: str
    args: str


def asked(raw: bytes) -> Asked | str | None:
    """What ``raw`` asks for: None if it has no trigger line; the reason it
    cannot be run (str); or the reproducer. Never raises."""
    try:
        msg = BytesParser(policy=policy.default).parsebytes(raw)
        texts, files = _parts(msg)
    except Exception as exc:      # noqa: BLE001: a stranger's mail
        return None if b"foliofarm:" not in raw else f"the message cannot be read ({type(exc).__name__})"
    for text in texts:
        m = TRIGGER.search(text)
        if m is None:
            continue
        args = m["args"].strip()
        if why := _bad_args(args):
            return why
        if files:
            name, body = files[0]
            return _checked(name, body, args)
        inline = []
        for line in text[m.end():].lstrip("\n").split("\n"):
            if END.match(line):
                break
            inline.append(line)
        body = "\n".join(inline).strip("\n") + "\n"
        if not body.strip():
            return ("no reproducer: attach FILE.c or FILE.sh, or put it on the lines after "
                    "'foliofarm: repro'")
        kind = "sh" if body.startswith("#!") else "c"
        return _checked(f"repro.{kind}", body.encode(), args)
    return None


def _parts(msg) -> tuple[list[str], list[tuple[str, bytes]]]:
    """The message's plain texts (not attachments), and its attachments named
    FILE.c or FILE.sh, in order."""
    texts: list[str] = []
    files: list[tuple[str, bytes]] = []
    for part in msg.walk():
        if part.is_multipart():
            continue
        name = part.get_filename()
        if name:
            base = name.replace("\\", "/").rsplit("/", 1)[-1]
            if base.endswith((".c", ".sh")):
                files.append((base, part.get_payload(decode=True) or b""))
            continue
        if part.get_content_type() == "text/plain":
            texts.append(part.get_content().replace("\r\n", "\n"))
    return texts, files


def _bad_args(args: str) -> str:
    if len(args) > MAX_ARGS:
        return f"its arguments are {len(args)} characters, over the {MAX_ARGS} a request may give"
    if any(ord(c) < 32 for c in args):
        return "its arguments hold control characters"
    try:
        shlex.split(args)
    except ValueError as exc:
        return f"its arguments cannot be split as a shell would ({exc})"
    return ""


def _checked(name: str, body: bytes, args: str) -> Asked | str:
    if len(body) > MAX_BYTES:
        return (f"the reproducer is {len(body) // 1024} KB, over the {MAX_BYTES // 1024} KB one from "
                "the list may be: send the few lines that show the finding")
    if not NAME.fullmatch(name):
        return f"the attachment's name {name[:80]!r} is not FILE.c or FILE.sh (letters, digits, . _ -)"
    try:
        text = body.decode()
    except UnicodeDecodeError:
        return "the reproducer is not text (a C source or a shell script)"
    if "\0" in text:
        return "the reproducer holds NUL bytes: not text"
    return Asked(name, text, args)

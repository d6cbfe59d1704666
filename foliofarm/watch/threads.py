"""Messages of a list archive sorted into series versions.

A message is read for what the watcher needs of it: its Message-ID, its place
in a thread (References, In-Reply-To), its subject's `[PATCH vN n/M]` prefix,
and for a patch the files its diff touches (decoded by `git mailinfo`, as
intake.mail reads mail). A series version is the messages of one thread that
share a version and a length: its cover letter (0/M, or patch 1/M, or a lone
`[PATCH]`) anchors it, and it is complete when patches 1..M are all there.
Replies (`Re:`) never make a series; nor does a message that says PATCH but
holds no diff."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from email.header import decode_header, make_header
from email.parser import BytesHeaderParser
from email.policy import compat32
from email.utils import getaddresses, parsedate_to_datetime, quote

from foliofarm.errors import UsageError
from foliofarm.intake import mail

MSGID = re.compile(r"<([^<>\s]+)>")
# An address the bot may write to: local@domain, printable, no spaces or brackets.
ADDRESS = re.compile(r"[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+")
PATCH_WORD = re.compile(r"\bPATCH\b", re.I)

# What a message is, for the watcher.
PATCH, COVER, REPLY, OTHER, NODIFF, MALFORMED, TOO_LARGE = (
    "patch", "cover", "reply", "other", "nodiff", "malformed", "too-large")


@dataclass(frozen=True)
class Message:
    msgid: str                 # without the angle brackets
    blob: str                  # the archive's object id of the raw message
    date: float                # its Date: header (seconds), else when it was read
    subject: str
    author: str                # '"Name" <address>': From's address as sent, its name decoded
    recipients: tuple[str, ...]  # To and Cc addresses
    refs: tuple[str, ...]      # References, then In-Reply-To, oldest first
    kind: str
    version: int = 1
    n: int = 1
    total: int = 1
    positioned: bool = False   # it carries n/M (a lone [PATCH] does not)
    files: tuple[str, ...] = ()
    size: int = 0
    why: str = ""              # for malformed and too-large: what is wrong
    part: bool = False         # a `[PATCH ...]` message, not a reply: part of a series

    @property
    def root(self) -> str:
        """The first message of its thread that it names (itself if none)."""
        return self.refs[0] if self.refs else self.msgid

    @property
    def title(self) -> str:
        return mail.PREFIX.sub("", self.subject).strip()

    @property
    def sender(self) -> str:
        """Its From address (address_of), or "" when it has none the bot could use."""
        return address_of(self.author)


def address_of(author: str) -> str:
    """The first address of a From header, lower-cased, if it is one a reply
    may go to (ADDRESS, at most 254 characters); else ""."""
    try:
        pairs = getaddresses([author or ""])
    except Exception:          # noqa: BLE001: a stranger's header
        return ""
    addr = pairs[0][1].strip().lower() if pairs else ""
    return addr if len(addr) <= 254 and ADDRESS.fullmatch(addr) else ""


def addresses(values: list) -> list[tuple[str, str]]:
    """(display name, address) of header values (From, To, Cc), parsed as
    sent, before any RFC 2047 decoding: an encoded word is a name, never an
    address (`=?utf-8?q?a=40b.org=2C?= <c@d.net>` is c@d.net, named "a@b.org,"),
    so it can neither add, change nor hide one. Names are decoded after."""
    try:
        pairs = getaddresses([str(v) for v in values if v is not None])
    except Exception:          # noqa: BLE001: a stranger's header
        return []
    return [(_decoded(name), addr.strip()) for name, addr in pairs]


def author_of(value) -> str:
    """A From header as the watcher keeps it: its first address as sent, with
    its decoded name, quoted where it would otherwise read back as another
    address (parsed again, it always gives that same address)."""
    pairs = addresses([value]) if value is not None else []
    if not pairs or not pairs[0][1]:
        return _decoded(value)
    name, addr = pairs[0]
    if not name:
        return f"<{addr}>"
    plain = f"{name} <{addr}>"         # as people write it, where it reads back the same
    if getaddresses([plain]) == [(name, addr)] and not any(c in name for c in '"\\'):
        return plain
    return f'"{quote(name)}" <{addr}>'


def _decoded(value) -> str:
    if value is None:
        return ""
    try:
        return re.sub(r"\s+", " ", str(make_header(decode_header(str(value))))).strip()
    except (UnicodeError, LookupError, ValueError, TypeError):
        return re.sub(r"\s+", " ", str(value)).strip()


def _ids(value: str) -> list[str]:
    return MSGID.findall(value or "")


def _date(head, fallback: float) -> float:
    try:
        return parsedate_to_datetime(str(head.get("Date"))).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return fallback


def _too_large(raw: bytes, max_bytes: int) -> str:
    return f"{len(raw) // 1024} kB, over the {max_bytes // 1024} kB a message may have"


def describe(raw: bytes, blob: str, now: float, max_bytes: int) -> Message:
    """What one raw message of the archive is. Never raises: a message that
    cannot be read is a MALFORMED one, with the reason."""
    head = BytesHeaderParser(policy=compat32).parsebytes(raw, headersonly=True)
    ids = _ids(_decoded(head.get("Message-ID")))
    msgid = ids[0] if ids else f"{blob}@no-message-id"
    refs: list[str] = []
    for r in _ids(_decoded(head.get("References"))) + _ids(_decoded(head.get("In-Reply-To"))):
        if r not in refs and r != msgid:
            refs.append(r)
    subject = _decoded(head.get("Subject"))
    author = author_of(head.get("From"))
    recipients = tuple(a for _, a in addresses([v for k in ("To", "Cc")
                                                for v in head.get_all(k, [])]) if "@" in a)
    base = dict(msgid=msgid, blob=blob, date=_date(head, now), subject=subject, author=author,
                recipients=recipients, refs=tuple(refs), size=len(raw))
    prefix = mail.PREFIX.match(subject)
    if mail.REPLY.match(subject):
        return Message(kind=REPLY, **base)
    if not prefix or not PATCH_WORD.search(prefix.group(0)):
        if len(raw) > max_bytes:
            return Message(kind=TOO_LARGE, why=_too_large(raw, max_bytes), **base)
        return Message(kind=OTHER, **base)
    version = int(m.group(1)) if (m := mail.VERSION.search(prefix.group(0))) else 1
    pos = mail.POSITION.search(prefix.group(0))
    n, total = (int(pos.group(1)), int(pos.group(2))) if pos else (1, 1)
    base.update(version=version, n=n, total=total, positioned=pos is not None, part=True)
    if len(raw) > max_bytes:
        return Message(kind=TOO_LARGE, why=_too_large(raw, max_bytes), **base)
    if pos and n == 0:
        return Message(kind=COVER, **base)
    try:
        m = mail.read(raw, msgid)
    except UsageError as exc:
        return Message(kind=MALFORMED, why=str(exc), **base)
    if not m.patch:
        return Message(kind=NODIFF, why="it says PATCH but holds no diff", **base)
    mod, new = m.files()
    return Message(kind=PATCH, files=tuple(dict.fromkeys(mod + new)), **base)


def patch_ids(raws: list[bytes]) -> str:
    """The series' patches as `git patch-id --stable` sees them, in order: a
    RESEND of the same patches has the same ids, whatever its mail says."""
    from foliofarm.intake import git
    ids = []
    for raw in raws:
        p = git.git(None, "patch-id", "--stable", stdin=mail.read(raw, "patch").patch, text=False,
                    check=False, what="git patch-id")
        ids.append(p.stdout.decode(errors="replace").split(" ", 1)[0] if p.returncode == 0 else "")
    return " ".join(ids)


def safely_described(raw: bytes, blob: str, now: float, max_bytes: int) -> Message:
    """describe(), and whatever a message from a public list does to the
    parsers, a MALFORMED record of it rather than a stopped watcher."""
    try:
        return describe(raw, blob, now, max_bytes)
    except Exception as exc:          # noqa: BLE001: anything a stranger's mail can cause
        return Message(msgid=f"{blob}@unreadable", blob=blob, date=now, subject="", author="",
                       recipients=(), refs=(), kind=MALFORMED, size=len(raw),
                       why=f"unreadable: {type(exc).__name__}: {exc}"[:300])


@dataclass
class Version:
    """One version of one series, as far as it has arrived. ``sender``: the
    From address of its first message; a message from anyone else is left
    out (``foreign``), never put in its place."""
    key: str
    total: int
    version: int
    sender: str = ""
    cover: Message | None = None
    patches: dict[int, Message] = field(default_factory=dict)
    foreign: list[Message] = field(default_factory=list)

    @property
    def anchor(self) -> Message:
        """The message a reply answers: the cover letter, else patch 1."""
        return self.cover or self.patches.get(1) or self.patches[min(self.patches)]

    @property
    def trouble(self) -> list[Message]:
        """Its messages that cannot be taken: too large, unreadable, no diff."""
        return [m for m in self.messages if m.kind not in (PATCH, COVER)]

    @property
    def missing(self) -> list[int]:
        return [n for n in range(1, self.total + 1) if n not in self.patches]

    @property
    def complete(self) -> bool:
        return not self.missing

    @property
    def messages(self) -> list[Message]:
        """Cover first, then the patches in order."""
        return ([self.cover] if self.cover else []) + [self.patches[n] for n in sorted(self.patches)]

    @property
    def files(self) -> list[str]:
        return list(dict.fromkeys(f for m in self.patches.values() for f in m.files))

    @property
    def last_arrival(self) -> float:
        return max(m.date for m in self.messages)


def key_of(m: Message) -> str:
    """The series version a patch or cover belongs to: its thread, version and
    length; a lone [PATCH] is a series of its own."""
    where = f"{m.root}|v{m.version}|{m.total}" if m.positioned else f"{m.msgid}|v{m.version}|lone"
    return hashlib.sha256(where.encode()).hexdigest()[:16]


def group(messages: list[Message]) -> dict[str, Version]:
    """Series versions from a thread's (or an archive's) messages in the order
    they arrived (the archive's order, never their own Date: anyone can write
    a Date), keyed by key_of. A series is its first message's sender's: a
    message from another address does not join it. One sent twice by its
    sender (a RESEND in the same thread) replaces the earlier one in its place."""
    out: dict[str, Version] = {}
    for m in messages:
        if not m.part:
            continue
        v = out.setdefault(key_of(m), Version(key_of(m), m.total, m.version, m.sender))
        if m.sender != v.sender:
            v.foreign.append(m)
            continue
        if m.kind == COVER or (m.positioned and m.n == 0):
            v.cover = m
        else:
            v.patches[m.n] = m
    return out

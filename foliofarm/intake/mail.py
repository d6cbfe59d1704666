"""Mail as the list delivers it, read the way `git am` reads it.

An mbox is split with `git mailsplit`, and each message is decoded with `git
mailinfo` (base64, quoted-printable and 8bit bodies, declared or undeclared
charsets, folded headers, CRLF, multipart with the patch inline or attached):
whether a message holds a patch is decided on the decoded patch part, as `git
am` decides it. A thread (`b4 mbox`, a list archive) is reduced to one series:
replies are dropped, the latest version is kept, its patches go in `[PATCH n/N]`
order, and the cover letter gives the series' name and its base-commit."""

from __future__ import annotations

import re
from dataclasses import dataclass
from email.parser import BytesHeaderParser
from email.policy import compat32
from pathlib import Path

from foliofarm.errors import UsageError
from foliofarm.intake import git
from foliofarm.util import tmp_dir

# `[RFC PATCH v3 RESEND 2/7]`: the version and the position, wherever they sit
# among the brackets at the start of the subject.
PREFIX = re.compile(r"^\s*(?:\[[^\]]*\]\s*)+")
VERSION = re.compile(r"\bv(\d+)\b", re.I)
POSITION = re.compile(r"\b(\d+)\s*/\s*(\d+)\b")
REPLY = re.compile(r"^\s*(?:re|aw|sv|fwd?)\s*:", re.I)
BASE_COMMIT = re.compile(rb"^base-commit: *([0-9a-f]{7,40})\s*$", re.M)
DIFF_FILES = re.compile(rb"^diff --git a/(\S+) b/(\S+)|^\+\+\+ b/(\S+)", re.M)
NEW_FILE = re.compile(rb"^diff --git a/(\S+) b/\S+\n(?:(?:old|new) mode \d+\n)?new file mode", re.M)


@dataclass(frozen=True)
class Mail:
    name: str              # "message K" of its mbox, or its file's name
    raw: bytes             # the message as written: what `git am` is given
    subject: str           # decoded, prefix kept: "[PATCH v2 1/3] mm: x"
    message_id: str
    in_reply_to: str
    body: bytes            # the decoded commit message
    patch: bytes           # the decoded patch part; empty when it holds none

    @property
    def title(self) -> str:
        """The subject without its bracketed prefix: `mm: x`."""
        return PREFIX.sub("", self.subject).strip()

    @property
    def prefix(self) -> str:
        m = PREFIX.match(self.subject)
        return m.group(0) if m else ""

    @property
    def version(self) -> int:
        m = VERSION.search(self.prefix)
        return int(m.group(1)) if m else 1

    @property
    def position(self) -> tuple[int, int] | None:
        """(n, N) of `[PATCH n/N]`; None for a lone `[PATCH]`."""
        m = POSITION.search(self.prefix)
        return (int(m.group(1)), int(m.group(2))) if m else None

    @property
    def is_reply(self) -> bool:
        return bool(REPLY.match(self.subject))

    @property
    def is_cover(self) -> bool:
        return self.position is not None and self.position[0] == 0 and not self.patch

    def base_commit(self) -> str | None:
        for part in (self.body, self.patch):
            if m := BASE_COMMIT.search(part):
                return m.group(1).decode()
        return None

    def files(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(paths the patch modifies, paths it creates)."""
        files: list[str] = []
        for m in DIFF_FILES.finditer(self.patch):
            path = (m.group(1) or m.group(3)).decode(errors="replace")
            if path not in files:
                files.append(path)
        new = tuple(m.group(1).decode(errors="replace") for m in NEW_FILE.finditer(self.patch))
        return tuple(f for f in files if f not in new), new


def diff_trouble(m: Mail) -> str:
    """"" if the patch part of ``m`` is a diff git can apply somewhere: it
    parses, names its files and its hunks are whole (`git apply --numstat
    --summary`, which reads the diff alone, no tree needed); else git's words."""
    return numstat(m)[0]


def numstat(m: Mail) -> tuple[str, list[str]]:
    """(diff_trouble's words or "", the files the diff changes as binary: git
    numstat's "-" counts, a `GIT binary patch` or a "Binary files ... differ")."""
    p = git.git(None, "apply", "--numstat", "--summary", "-", check=False, text=False,
                what="reading a diff", stdin=m.patch)
    if p.returncode == 0 and p.stdout.strip():
        binary = [ln.split("\t", 2)[2] for ln in p.stdout.decode(errors="replace").splitlines()
                  if ln.startswith("-\t-\t")]
        if not binary and re.search(rb"^(GIT binary patch|Binary files .* differ)$", m.patch, re.M):
            binary = ["(a binary diff)"]
        return "", binary
    said = [ln.removeprefix("error: ").removeprefix("fatal: ").strip()
            for ln in p.stderr.decode(errors="replace").splitlines() if ln.strip()]
    said = [re.sub(r"\s*\(allow with \"--allow-empty\"\)", "", s) for s in said]
    return "; ".join(said[:3]) or "git apply found no change in it", []


def split(data: bytes, origin: str) -> list[bytes]:
    """The messages of an mbox (or one mail without an mbox From line), as
    `git mailsplit` cuts them."""
    if not data.strip():
        raise UsageError(f"{origin} is empty: expected patches as `git format-patch` or `b4 am` writes them")
    with tmp_dir("mail") as tmp:
        box, out = Path(tmp) / "in.mbox", Path(tmp) / "split"
        box.write_bytes(data)
        out.mkdir()
        # -b: a file that does not start with an mbox From line is one message
        p = git.git(None, "mailsplit", "-b", f"-o{out}", str(box), check=False, text=False,
                what="splitting an mbox")
        if p.returncode:
            raise UsageError(f"{origin} is not an mbox, a mail or a diff ({p.stderr.decode(errors='replace').strip()}): "
                             "expected `git format-patch` or `b4 am` output")
        return [f.read_bytes() for f in sorted(out.iterdir())]


def read(raw: bytes, name: str) -> Mail:
    """One message decoded by `git mailinfo` (-k: the subject's prefix kept,
    for the version and position; the body re-coded to UTF-8)."""
    with tmp_dir("mailinfo") as tmp:
        msg, patch = Path(tmp) / "msg", Path(tmp) / "patch"
        p = git.git(None, "mailinfo", "-k", "-u", str(msg), str(patch), check=False, text=False,
                what="decoding a mail", stdin=raw)
        if p.returncode:
            raise UsageError(f"{name}: git mailinfo cannot read it: "
                             f"{p.stderr.decode(errors='replace').strip()}")
        info = {}
        for line in map(_text, p.stdout.splitlines()):
            key, _, value = line.partition(": ")
            info.setdefault(key, value)
        body, diff = msg.read_bytes(), patch.read_bytes()
    head = BytesHeaderParser(policy=compat32).parsebytes(raw)
    return Mail(name=name, raw=raw, subject=re.sub(r"\s+", " ", info.get("Subject", "")).strip(),
                message_id=_header(head, "Message-ID"), in_reply_to=_header(head, "In-Reply-To"),
                body=body, patch=diff)


def _text(line: bytes) -> str:
    """A header line as mailinfo re-codes it: UTF-8, except raw 8-bit bytes of a
    header that declared no charset, which it passes through (read as Latin-1,
    as git itself falls back to)."""
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError:
        return line.decode("latin-1")


def _header(head, key: str) -> str:
    value = head.get(key)
    return str(value).strip() if value is not None else ""


@dataclass(frozen=True)
class Thread:
    patches: list[Mail]          # in the order they apply
    cover: Mail | None
    base_commit: str | None
    notes: list[str]             # what was left out, and why


def series_of(mails: list[Mail], origin: str) -> Thread:
    """The series a thread carries: replies dropped, the latest version kept,
    patches in `[PATCH n/N]` order (file order where they carry no position)."""
    notes: list[str] = []
    replies = [m for m in mails if m.is_reply]
    if replies:
        notes.append(f"{len(replies)} repl{'y' if len(replies) == 1 else 'ies'} left out")
    mails = [m for m in mails if not m.is_reply]
    if not mails:
        raise UsageError(f"{origin} holds only replies: no patch to apply")
    versions = sorted({m.version for m in mails})
    latest = versions[-1]
    if len(versions) > 1:
        older = [m for m in mails if m.version != latest]
        notes.append(f"v{latest} taken; {len(older)} message(s) of "
                     + ", ".join(f"v{v}" for v in versions[:-1]) + " left out")
        mails = [m for m in mails if m.version == latest]
    covers = [m for m in mails if m.is_cover]
    cover = covers[-1] if covers else None
    rest = [m for m in mails if not m.is_cover]
    for m in rest:
        if not m.patch:
            what = f"{m.name} ({m.subject!r})" if m.subject else m.name
            raise UsageError(f"{what} in {origin} has no diff: it is not a patch. Remove it, or if "
                             "it is a cover letter give it a [PATCH 0/N] subject")
    if not rest:
        raise UsageError(f"{origin} holds no patch (only a cover letter?): nothing to apply")
    rest = _in_order(rest, origin, latest)
    base = None
    for m in ([cover] if cover else []) + rest:
        base = base or m.base_commit()
    return Thread(rest, cover, base, notes)


def _in_order(patches: list[Mail], origin: str, version: int) -> list[Mail]:
    positioned = [m for m in patches if m.position is not None]
    if not positioned:
        return patches
    if len(positioned) != len(patches):
        odd = next(m for m in patches if m.position is None)
        raise UsageError(f"{origin}: {odd.name} ({odd.subject!r}) has no [PATCH n/N] position "
                         "while the others do: which place it takes is unclear")
    totals = {m.position[1] for m in positioned}
    if len(totals) > 1:
        raise UsageError(f"{origin}: v{version} patches disagree on the series length "
                         f"({', '.join(f'/{t}' for t in sorted(totals))})")
    total = totals.pop()
    by: dict[int, Mail] = {}
    for m in positioned:
        n = m.position[0]
        if n in by:
            raise UsageError(f"{origin}: two v{version} patches are {n}/{total} ({by[n].name} and {m.name})")
        by[n] = m
    missing = [n for n in range(1, total + 1) if n not in by]
    if missing:
        raise UsageError(f"{origin}: v{version} patch{'es' if len(missing) > 1 else ''} "
                         + ", ".join(f"{n}/{total}" for n in missing) + " missing")
    return [by[n] for n in sorted(by)]

"""Patch series: what is read in (apply.py applies them, checkpatch.py checks them).

A series comes as one of:
- an mbox, as `git format-patch --stdout`, `b4 am` or `b4 mbox` (a whole list
  thread) writes it, read by intake.mail as `git am` reads mail: replies are
  left out, the latest version is taken in `[PATCH n/N]` order, and the cover
  letter (`[PATCH 0/N]`, or `b4 am -o`'s NAME.cover beside NAME.mbx) names the
  series and gives its base-commit;
- a directory of patch files, in the order of a quilt `series` file if there is
  one, else by name;
- a git range ``BASE..TIP`` in a local kernel tree (``--kernel PATH``).

Everything is read and validated before the tree is touched.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from foliofarm.errors import InfraError, UsageError
from foliofarm.intake import git, mail

PATCH_SUFFIXES = (".patch", ".diff", ".mbox", ".mbx", ".eml", ".cover")
MBOX_FROM = b"From foliofarm Mon Sep 17 00:00:00 2001\n"

# A series may weigh this much in all (its messages as read): a mm series of
# 50 patches is a few hundred kB; FOLIOFARM_MAX_SERIES_KB for a local run.
MAX_SERIES_KB = int(os.environ.get("FOLIOFARM_MAX_SERIES_KB", 8192))

# A diff in a headerless patch file: git's header, or a unified diff's ---/+++ pair.
DIFF = re.compile(rb"^diff --git |^--- \S.*\n\+\+\+ \S", re.M)


@dataclass(frozen=True)
class Patch:
    number: int          # 1-based, cover letter not counted
    subject: str         # without the [PATCH n/m] prefix
    name: str            # the file it came from, or "<mbox> message K"
    raw: bytes           # one mail message, as `git am` reads it
    files: tuple[str, ...] = ()      # paths the diff modifies
    new_files: tuple[str, ...] = ()  # paths it creates
    message_id: str = ""             # its Message-ID, without <>, where it came as mail

    def mbox(self) -> bytes:
        return self.raw if self.raw.startswith(b"From ") else MBOX_FROM + self.raw


@dataclass(frozen=True)
class Series:
    spec: str                          # what --series named
    kind: str                          # "mbox", "directory" or "range"
    patches: tuple[Patch, ...]
    base_commit: str | None = None     # the series' own base-commit: trailer
    cover: str | None = None           # the cover letter's subject
    base_rev: str | None = None        # for a range: BASE, resolved to a commit
    notes: tuple[str, ...] = field(default_factory=tuple)
    message_id: str = ""               # the cover letter's (else patch 1's) Message-ID

    def describe(self) -> str:
        n = len(self.patches)
        what = f"{n} patch{'es' if n != 1 else ''} from {self.kind} {self.spec}"
        return what + (f" ({self.cover})" if self.cover else "")


def describe_read(ser: Series) -> list[str]:
    """The series as intake read it, for --dry-run: each patch in the order it
    will be applied with the files it touches, what was left out and why, and
    the base-commit it names."""
    out = [f"series: {ser.describe()}"]
    for p in ser.patches:
        files = [*p.files, *(f"{f} (new)" for f in p.new_files)]
        shown = ", ".join(files[:4]) + (f" and {len(files) - 4} more" if len(files) > 4 else "")
        out.append(f"  {p.number}/{len(ser.patches)} {p.subject} (touches {shown or 'no file'})")
    out += [f"  left out: {n}" for n in ser.notes]
    out.append(f"  base-commit: {ser.base_commit}" if ser.base_commit
               else "  base-commit: none given (the series is applied on the kernel under test)")
    return out


def strip_prefix(subject: str) -> str:
    """`[PATCH v2 3/7] mm: foo` -> `mm: foo`."""
    return re.sub(r"^(\[[^\]]*\]\s*)+", "", subject).strip()


def _with_headers(raw: bytes, name: str) -> bytes:
    """A headerless diff (quilt's usual form) gets the headers `git am` needs."""
    head = raw.split(b"\n\n", 1)[0]
    if (not raw.strip() or re.search(rb"^(From|Subject): ", head, re.M) or raw.startswith(b"From ")
            or not DIFF.search(raw)):
        return raw
    subject = re.sub(r"\.(patch|diff)$", "", name)
    return (f"From: foliofarm <foliofarm@localhost>\nSubject: [PATCH] {subject}\n\n"
            f"{subject}\n---\n").encode() + raw


def _patches(messages: list[tuple[str, bytes]], origin: str, allow_binary: bool = False
             ) -> tuple[list[Patch], mail.Mail | None, str | None, list[str]]:
    """Patches from (name, raw message) pairs, as intake.mail reads a thread.
    Returns (patches, cover letter, base-commit, notes)."""
    size = sum(len(raw) for _, raw in messages)
    if size > MAX_SERIES_KB * 1024:
        raise UsageError(f"{origin} is {size // 1024} kB, over the {MAX_SERIES_KB} kB a series may "
                         "have (FOLIOFARM_MAX_SERIES_KB for a local run)")
    thread = mail.series_of([mail.read(raw, name) for name, raw in messages], origin)
    patches = []
    for k, m in enumerate(thread.patches, 1):
        # known now, with no tree: minutes before `git am` would say it
        trouble, binary = mail.numstat(m)
        if trouble:
            raise UsageError(f"patch {k}/{len(thread.patches)} {m.title or m.name!r} ({m.name}) "
                             f"in {origin} has no diff git can apply: {trouble}. Fix the patch "
                             "(re-export it with `git format-patch` or `b4 am`)")
        if binary and not allow_binary:
            raise UsageError(f"patch {k}/{len(thread.patches)} {m.title or m.name!r} ({m.name}) "
                             f"in {origin} is a binary patch ({', '.join(binary[:3])}): binary "
                             "patches are refused (a kernel series is text); --allow-binary takes "
                             "them for a local run")
        files, new = m.files()
        patches.append(Patch(k, m.title or m.name, m.name, m.raw, files, new, m.message_id.strip("<> ")))
    return patches, thread.cover, thread.base_commit, thread.notes


def _title(cover: mail.Mail | None) -> str | None:
    return cover.title if cover else None


def _anchor_id(cover: mail.Mail | None, patches: list[Patch]) -> str:
    if cover is not None:
        return cover.message_id.strip("<> ")
    return patches[0].message_id if patches else ""


def _named(raws: list[bytes], name: str) -> list[tuple[str, bytes]]:
    return [(f"{name} message {k}" if len(raws) > 1 else name, r) for k, r in enumerate(raws, 1)]


def load(spec: str, tree: Path | None = None, allow_binary: bool = False) -> Series:
    """Read and validate a series; `tree` is the local kernel tree a range
    resolves in. A binary patch is refused unless ``allow_binary``; so is a
    series over MAX_SERIES_KB."""
    path = Path(spec).expanduser()
    if not path.exists() and ".." in spec:
        return _load_range(spec, tree, allow_binary)
    if path.is_dir():
        msgs = []
        for f in patch_files(path):
            msgs += _named(mail.split(_with_headers(_read(f), f.name), str(f)), f.name)
        patches, cover, base, notes = _patches(msgs, str(path), allow_binary)
        return Series(spec, "directory", tuple(patches), base, _title(cover), notes=tuple(notes),
                      message_id=_anchor_id(cover, patches))
    if path.is_file():
        data = _with_headers(_read(path), path.name)
        if not data.startswith(b"From ") and not re.match(rb"[A-Za-z][A-Za-z0-9-]*: ", data):
            if not data.strip():
                mail.split(data, str(path))      # says it is empty
            raise UsageError(f"{path} is not an mbox, a mail or a diff: expected `git format-patch` "
                             "or `b4 am` output")
        msgs = []
        # `b4 am -o DIR` writes the series as NAME.mbx and its cover letter
        # (with the base-commit) beside it as NAME.cover
        cover_file = path.with_suffix(".cover")
        if path.suffix == ".mbx" and cover_file.is_file():
            msgs += _named(mail.split(_read(cover_file), str(cover_file)), cover_file.name)
        msgs += [(f"message {k}" if len(raws) > 1 else path.name, r)
                 for raws in [mail.split(data, str(path))] for k, r in enumerate(raws, 1)]
        patches, cover, base, notes = _patches(msgs, str(path), allow_binary)
        return Series(spec, "mbox", tuple(patches), base, _title(cover), notes=tuple(notes),
                      message_id=_anchor_id(cover, patches))
    raise UsageError(f"series {spec!r} is not a file, a directory or a git range BASE..TIP")


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise UsageError(f"{path}: cannot read it ({exc.strerror})") from None


def patch_files(path: Path) -> list[Path]:
    """The patches of a series directory: in the order of a quilt `series` file
    if there is one, else by name."""
    quilt = path / "series"
    if quilt.is_file():
        names = [ln.split("#", 1)[0].split()[0] for ln in quilt.read_text().splitlines()
                 if ln.split("#", 1)[0].strip()]
        missing = [n for n in names if not (path / n).is_file()]
        if missing:
            raise UsageError(f"{quilt} lists patches that are not there: {', '.join(missing)}")
        if not names:
            raise UsageError(f"{quilt} lists no patches")
        return [path / n for n in names]
    patches = sorted(p for p in path.iterdir() if p.suffix in PATCH_SUFFIXES)
    if not patches:
        raise UsageError(f"series directory {path} has no {'/'.join(PATCH_SUFFIXES)} files "
                         "and no quilt series file")
    return patches


def _load_range(spec: str, tree: Path | None, allow_binary: bool) -> Series:
    if tree is None or not (tree / ".git").exists():
        raise UsageError(f"series {spec!r} looks like a git range: it needs --kernel PATH, the git "
                         "kernel tree it resolves in")
    base, _, tip = spec.partition("..")
    if not base or not tip or tip.startswith("."):
        raise UsageError(f"git range {spec!r}: write it as BASE..TIP (two dots)")
    revs = {}
    for rev in (base, tip):
        p = git.git(tree, "rev-parse", "--verify", "-q", f"{rev}^{{commit}}", check=False)
        if p.returncode:
            raise UsageError(f"git range {spec!r}: {rev!r} does not resolve to a commit in {tree}")
        revs[rev] = p.stdout.strip()
    commits = git.git(tree, "rev-list", "--reverse", f"{revs[base]}..{revs[tip]}").stdout.split()
    if not commits:
        raise UsageError(f"git range {spec!r} is empty in {tree}: no commit in {tip} that is not in {base}")
    merges = git.git(tree, "rev-list", "--merges", f"{revs[base]}..{revs[tip]}").stdout.split()
    if merges:
        raise UsageError(f"git range {spec!r} has merge commits ({merges[0][:12]}): a series must be linear")
    mbox = git.git(tree, "format-patch", "--stdout", "--no-signature", f"{revs[base]}..{revs[tip]}",
                   check=False, text=False)
    if mbox.returncode:
        raise InfraError(f"git format-patch {spec} in {tree}: {mbox.stderr.decode().strip()}")
    raws = mail.split(mbox.stdout, spec)
    patches, _, _, _ = _patches([(c[:12], r) for c, r in zip(commits, raws)], spec, allow_binary)
    return Series(spec, "range", tuple(patches), base_rev=revs[base])

"""A guest's gcov counters read into what each test executed.

An archive (boot/gcov.py) is the guest's bytes: unpacked here under caps,
regular .gcda files at plain relative paths alone. Beside each goes its
.gcno from the coverage build, and the toolchain's own gcov
(aarch64-linux-gnu-gcov --json-format) reads them in the sandbox: per
source file, the lines that ran (their counts over zero) and the functions
entered. Paths are made relative to the kernel tree."""

from __future__ import annotations

import gzip
import json
import shutil
import struct
import tarfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from foliofarm import hosttools, sandbox
from foliofarm.errors import GuestError
from foliofarm.sandbox import Limits

GCOV = "aarch64-linux-gnu-gcov"
MAX_MEMBERS = 20000
MAX_MEMBER = 16 << 20
MAX_TOTAL = 512 << 20
# gcov's JSON of one object is read whole: at most this, gzip'd and inflated
MAX_JSON = 64 << 20
GCOV_SECONDS = 600


@dataclass
class Executed:
    """What one test executed: per source file (relative to the tree), the
    lines that ran and the functions entered."""
    lines: dict[str, set[int]] = field(default_factory=dict)
    functions: dict[str, set[str]] = field(default_factory=dict)
    seen: set[str] = field(default_factory=set)      # every file gcov knew, run or not
    # every function gcov lists of a file (out of line), run or not: what a
    # map borrowed by another base can name (cmap.nearest)
    defined: dict[str, set[str]] = field(default_factory=dict)
    # the lines gcov lists of a file (executable, run or not): read only for
    # the files asked for (patch coverage), never for a map
    listed: dict[str, set[int]] = field(default_factory=dict)

    def add(self, other: "Executed") -> None:
        self.seen |= other.seen
        for f, ls in other.listed.items():
            self.listed.setdefault(f, set()).update(ls)
        for f, fs in other.defined.items():
            self.defined.setdefault(f, set()).update(fs)
        for f, ls in other.lines.items():
            self.lines.setdefault(f, set()).update(ls)
        for f, fs in other.functions.items():
            self.functions.setdefault(f, set()).update(fs)


def unpack(archive: Path, into: Path, suffix: str = ".gcda") -> list[str]:
    """The ``suffix`` files (gcov's counters, or a series' notes) of
    ``archive`` written under ``into``; their relative paths. Anything else
    (a link, a device, a path out of ``into``, more than the caps) is left
    out or refused with GuestError."""
    rels: list[str] = []
    total = 0
    try:
        with tarfile.open(archive, "r:gz") as tar:
            for n, member in enumerate(tar):
                if n >= MAX_MEMBERS:
                    raise GuestError(f"{archive.name}: over {MAX_MEMBERS} entries")
                rel = _plain(member.name)
                if rel is None or not member.isreg() or not rel.endswith(suffix):
                    continue
                if member.size > MAX_MEMBER or total + member.size > MAX_TOTAL:
                    raise GuestError(f"{archive.name}: {rel} is over the caps ({member.size} bytes)")
                total += member.size
                src = tar.extractfile(member)
                if src is None:
                    continue
                out = into / rel
                out.parent.mkdir(parents=True, exist_ok=True)
                with open(out, "xb") as f:
                    shutil.copyfileobj(src, f)
                rels.append(rel)
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise GuestError(f"{archive.name}: not an archive the farm reads: {exc}") from exc
    return rels


def _plain(name: str) -> str | None:
    """A member's path, relative and without '..', or None."""
    p = PurePosixPath(name)
    parts = [x for x in p.parts if x not in ("", ".")]
    if p.is_absolute() or not parts or ".." in parts or any("\\" in x for x in parts):
        return None
    return "/".join(parts)


MAGIC = 0x67636461           # "gcda"
TAG_FUNCTION = 0x01000000


def counted(data: bytes) -> bool:
    """Whether a .gcda (GCC 12 and later, as the kernel writes it: magic,
    version, stamp, checksum, then records of tag and length in bytes) holds
    any count over zero; True where it cannot tell, so that gcov reads it."""
    n = len(data) // 4
    words = struct.unpack(f"<{n}I", data[:n * 4])
    if n < 4 or words[0] != MAGIC:
        return True
    i = 4
    while i + 2 <= n:
        tag, length = words[i], words[i + 1]
        i += 2
        if length % 4 or i + length // 4 > n:
            return True
        if tag & 0xff000000 == TAG_FUNCTION and tag != TAG_FUNCTION and any(words[i:i + length // 4]):
            return True
        i += length // 4
    return i != n


def executed(work: Path, rels: list[str], build: Path, tree: Path,
             only: set[str] | None = None) -> Executed:
    """What the counters of ``rels`` (unpacked in ``work``) say ran: each
    beside its .gcno from ``build``, read by gcov in the sandbox (those with
    no count over zero are known, never run, and not read); with ``only``,
    of those source files alone, their listed lines too."""
    hosttools.require(GCOV)
    have = []
    out = Executed()
    for rel in rels:
        if not counted((work / rel).read_bytes()):
            out.seen.add(rel[:-len(".gcda")] + ".c")
            continue
        gcno = build / rel[:-len(".gcda")]
        gcno = gcno.with_name(gcno.name + ".gcno")
        if gcno.is_file() and not gcno.is_symlink():
            shutil.copyfile(gcno, work / (rel[:-len(".gcda")] + ".gcno"))
            have.append(rel)
    out.add(gcov(work, have, tree, build, only))
    return out


def gcov(work: Path, names: list[str], tree: Path, build: Path, only: set[str] | None = None
         ) -> Executed:
    """The cross gcov in the sandbox over ``names`` (objects' .gcda, or their
    .gcno alone: every count zero) in ``work``, its JSON read."""
    hosttools.require(GCOV)
    out = Executed()
    for batch in (names[i:i + 200] for i in range(0, len(names), 200)):
        sandbox.run([GCOV, "--json-format", "--preserve-paths", *batch], write=[work], cwd=work,
                    limits=Limits(seconds=GCOV_SECONDS), what="gcov", system=sandbox.toolchain())
        for js in sorted(work.glob("*.gcov.json.gz")):
            out.add(read_json(js, tree, build, only))
            js.unlink()
    return out


def read_json(path: Path, tree: Path, build: Path, only: set[str] | None = None) -> Executed:
    """One gcov JSON document: per source file, lines with a count over zero
    and functions entered; with ``only``, of those files alone, and the
    lines gcov lists of them (executable, run or not)."""
    with gzip.open(path, "rb") as f:
        raw = f.read(MAX_JSON + 1)
    if len(raw) > MAX_JSON:
        raise GuestError(f"{path.name}: gcov's output is over {MAX_JSON >> 20} MB")
    doc = json.loads(raw)
    out = Executed()
    for entry in doc.get("files", []):
        rel = relative(str(entry.get("file", "")), tree, build)
        if rel is None or only is not None and rel not in only:
            continue
        out.seen.add(rel)
        if only is not None:
            out.listed.setdefault(rel, set()).update(int(ln["line_number"]) for ln in entry.get("lines", []))
        ran = {int(ln["line_number"]) for ln in entry.get("lines", []) if int(ln.get("count", 0)) > 0}
        entered = {str(fn["name"]) for fn in entry.get("functions", []) if int(fn.get("execution_count", 0)) > 0}
        if ran:
            out.lines.setdefault(rel, set()).update(ran)
        if entered:
            out.functions.setdefault(rel, set()).update(entered)
        named = {str(fn["name"]) for fn in entry.get("functions", [])}
        if named and rel.endswith(".c"):
            out.defined.setdefault(rel, set()).update(named)
    return out


def relative(name: str, tree: Path, build: Path) -> str | None:
    """A source path as gcov names it, relative to the kernel tree: absolute
    in the tree or the build directory (generated files), or already relative."""
    p = PurePosixPath(name)
    for root in (tree, build):
        try:
            return str(p.relative_to(PurePosixPath(str(root))))
        except ValueError:
            continue
    if p.is_absolute() or ".." in p.parts:
        return None
    return str(p)

"""Kconfig fragments: parse, merge over allnoconfig with the kernel's own
scripts/kconfig/merge_config.sh, and verify every requested symbol in the final
.config (olddefconfig drops what it cannot satisfy, silently)."""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from foliofarm.errors import ConfigError, InfraError, UsageError
from foliofarm.beneath import read_regular, tree_file_bytes
from foliofarm.util import sha256_text, write_atomic

SET_RE = re.compile(r"^(CONFIG_\w+)=(.*)$")
UNSET_RE = re.compile(r"^# (CONFIG_\w+) is not set$")
OPTIONAL_RE = re.compile(r"^#\s*foliofarm:\s*optional\s+(CONFIG_\w+)\b\s*(.*)$")
KCONFIG_DEF_RE = re.compile(r"^\s*(?:menu)?config\s+(\w+)\s*$", re.M)


@dataclass(frozen=True)
class Requirement:
    symbol: str        # "CONFIG_EROFS_FS"
    value: str         # "y", "n", "30", "\"str\""
    fragment: str      # file name it came from
    optional: str | None = None   # reason, when the symbol may be absent from a kernel


# A Kconfig file is read up to this size (the largest in 7.3 is under 100 kB).
KCONFIG_MAX = 4 << 20


def parse_fragment(path: Path) -> list[Requirement]:
    optional: dict[str, str] = {}
    reqs: list[Requirement] = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        line = line.strip()
        if m := OPTIONAL_RE.match(line):
            optional[m.group(1)] = m.group(2) or "declared optional"
        elif m := SET_RE.match(line):
            reqs.append(Requirement(m.group(1), m.group(2), path.name))
        elif m := UNSET_RE.match(line):
            reqs.append(Requirement(m.group(1), "n", path.name))
        elif line and not line.startswith("#"):
            raise ConfigError(f"{path}:{n}: not a Kconfig line: {line!r}")
    unknown = set(optional) - {r.symbol for r in reqs}
    if unknown:
        raise ConfigError(f"{path}: optional declared for symbols it does not set: {sorted(unknown)}")
    return [Requirement(r.symbol, r.value, r.fragment, optional.get(r.symbol)) for r in reqs]


def parse_config(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in text.splitlines():
        if m := SET_RE.match(line):
            out[m.group(1)] = m.group(2)
        elif m := UNSET_RE.match(line):
            out[m.group(1)] = "n"
    return out


def kconfig_symbols(tree: Path) -> dict[str, Path]:
    """Every symbol the tree's Kconfig files define -> the file defining it.
    A series' tree: its Kconfig files are read as regular files only, no link
    followed (a link to a host file or a FIFO is passed over)."""
    found: dict[str, Path] = {}
    for d, dirs, files in os.walk(tree):      # links to directories are not walked into
        dirs[:] = sorted(x for x in dirs if not x.startswith(".") and x != "Documentation")
        for f in sorted(files):
            if not f.startswith("Kconfig"):
                continue
            path = Path(d) / f
            try:
                text = read_regular(path, KCONFIG_MAX, beneath=tree).decode(errors="replace")
            except InfraError:
                continue
            for m in KCONFIG_DEF_RE.finditer(text):
                found.setdefault("CONFIG_" + m.group(1), path)
    return found


def inputs_digest(tree: Path) -> str:
    """What the tree's configuration depends on besides the fragments and the
    toolchain: every Kconfig file, the kconfig programs and the scripts Kconfig
    runs ($(shell ...)). Equal digests give an equal .config, so a series that
    touches none of them skips allnoconfig/merge_config.sh/olddefconfig."""
    h = hashlib.sha256()
    for d, dirs, files in os.walk(tree):
        dirs[:] = sorted(x for x in dirs if not x.startswith("."))
        rel = os.path.relpath(d, tree)
        for f in sorted(files):
            if f.startswith("Kconfig") or rel == "scripts/kconfig" or (
                    rel == "scripts" and f.endswith(".sh")):
                path = os.path.join(d, f)
                h.update(os.path.join(rel, f).encode() + b"\0")
                h.update(hashlib.sha256(tree_file_bytes(path)).digest())
    return h.hexdigest()


def _depends_hint(symbol: str, defined_in: Path, tree: Path) -> str:
    try:
        text = read_regular(defined_in, KCONFIG_MAX, beneath=tree).decode(errors="replace")
    except InfraError:
        return ""
    m = re.search(rf"^\s*(?:menu)?config\s+{symbol[7:]}\s*$(.*?)(?=^\s*(?:menu)?config\s|\Z)",
                  text, re.M | re.S)
    if not m:
        return ""
    deps = re.findall(r"^\s*depends on\s+(.+)$", m.group(1), re.M)
    return f" (it depends on {' && '.join(deps)})" if deps else ""


@dataclass
class Verification:
    absent_optional: list[Requirement]     # optional symbols this kernel does not define


def verify(final_config: str, reqs: list[Requirement], tree: Path) -> Verification:
    """Every requirement must hold in ``final_config``. Raise ConfigError naming each
    symbol that Kconfig dropped and the fragment that asked for it."""
    have = parse_config(final_config)
    symbols: dict[str, Path] | None = None
    dropped: list[str] = []
    absent: list[Requirement] = []
    for r in reqs:
        actual = have.get(r.symbol, "n")
        if actual == r.value:
            continue
        if symbols is None:
            symbols = kconfig_symbols(tree)
        if r.symbol not in symbols:
            if r.optional:
                absent.append(r)
                continue
            dropped.append(f"{r.symbol}={r.value} from {r.fragment}: this kernel has no such "
                           "symbol (declare it '# foliofarm: optional' if older or newer "
                           "kernels lack it)")
        else:
            dropped.append(f"{r.symbol}={r.value} from {r.fragment}: final .config has "
                           f"{actual!r}{_depends_hint(r.symbol, symbols[r.symbol], tree)}")
    if dropped:
        raise ConfigError("Kconfig dropped requested symbols:\n  " + "\n  ".join(dropped))
    return Verification(absent_optional=absent)


EXTRA_ITEM = re.compile(r"^CONFIG_[A-Za-z0-9_]+=(?:y|m|n|-?\d+|0x[0-9a-fA-F]+|\"[^\"]*\")$")


def check_extra(items: list[str]) -> None:
    """-K items are CONFIG_NAME=VALUE, or a UsageError says how to write them."""
    bad = [i for i in items if not EXTRA_ITEM.match(i)]
    if bad:
        raise UsageError(f"-K {bad[0]!r}: write it CONFIG_NAME=VALUE (y, m, n, a number or a "
                         "quoted string)")


def extra_fragment(cache: Path, items: list[str]) -> Path | None:
    """`-K CONFIG_FOO=y` items as a fragment of their own (in the cache, named by
    its content), merged after the others and verified like them."""
    if not items:
        return None
    check_extra(items)
    text = "# -K on the command line\n" + "".join(f"{i}\n" for i in items)
    f = cache / "fragments" / f"extra-{sha256_text(text)[:16]}.config"
    if not f.is_file():
        f.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(f, text)
    return f

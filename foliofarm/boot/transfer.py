"""Files from the guest to the host: a check's dump, the selftests' output.

Over the outbox disk where the guest has one (dumps run to megabytes; the
serial console carries a few hundred kB a second under TCG), else over the
console, gzip'd and base64'd; each checked against its md5sum in the guest.
The guest is someone else's kernel running someone else's code: a file is
read only up to the cap its reader gives (a check's row: dump_kb), whatever
size the guest says it has."""

from __future__ import annotations

import base64
import hashlib
import zlib
from pathlib import Path
from typing import Any, Protocol

from foliofarm.errors import GuestError


class Guest(Protocol):
    """What a transfer needs of a session (boot/console.py GuestSession)."""
    banner: dict[str, str]
    outbox: Path | None
    device_dir: str

    def run(self, command: str, timeout: float) -> Any: ...

# The most of a file in the guest (a check's dump) the host reads, unless its
# check's row says less (dump_kb).
DUMP_CAP = 16 << 20


class OverCap(GuestError):
    """A guest file over the cap its reader gave: not read, the guest alive."""


def read_file(g: Guest, path: str, timeout: float = 120, limit: int = DUMP_CAP) -> str:
    """A guest file's text (read_bytes)."""
    return read_bytes(g, path, timeout, limit).decode(errors="replace")


def read_bytes(g: Guest, path: str, timeout: float = 120, limit: int = DUMP_CAP) -> bytes:
    """A guest file's bytes, checked against its md5sum in the guest. It
    crosses the outbox disk where the guest has one (dumps run to megabytes;
    the serial console carries a few hundred kB a second under TCG), else the
    console, gzip'd and base64'd. A file over ``limit`` bytes (its check's
    cap) is never read: OverCap, whatever the guest says its size is."""
    dev = g.banner.get("outbox")
    if g.outbox is not None and dev:
        text = _via_outbox(g, path, dev, timeout, limit)
        if text is not None:
            return text
    size = g.run(f"stat -c %s {path}", 30).output.split()
    if size and size[0].isdigit() and int(size[0]) > limit:
        raise OverCap(f"{path} holds {int(size[0])} bytes, over its cap of {limit}: not read")
    return _via_console(g, path, timeout, limit)


def _via_outbox(g: Guest, path: str, dev: str, timeout: float, limit: int) -> bytes | None:
    """The file written raw from the start of the outbox disk, flushed to
    it before the host reads; None where it does not fit (then the console)."""
    assert g.outbox is not None
    res = g.run(f"dd if={path} of={g.device_dir}/{dev} bs=1M conv=fsync 2>/dev/null "
                f"&& stat -c %s {path} && md5sum {path}", timeout)
    words = res.output.split()
    if res.status != 0 or len(words) < 2 or not words[0].isdigit():
        return None
    size, digest = int(words[0]), words[1]
    if size > limit:
        raise OverCap(f"{path} holds {size} bytes, over its cap of {limit}: not read")
    with open(g.outbox, "rb") as f:
        data = f.read(size)
    if len(data) != size or hashlib.md5(data).hexdigest() != digest:
        raise GuestError(f"{path}: outbox transfer corrupted ({len(data)} of {size} bytes, "
                         "md5 mismatch)", res.output[-2000:])
    return data

def _via_console(g: Guest, path: str, timeout: float, limit: int) -> bytes:
    res = g.run(f"gzip -1 -c {path} | base64", timeout)
    if res.status != 0:
        raise GuestError(f"cannot read {path} in the guest (exit {res.status})", res.output[-2000:])
    digest = g.run(f"md5sum {path}", 30).output.split()
    try:
        # inflated to at most limit + 1 bytes: a small gzip stream may stand for gigabytes
        inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
        data = inflate.decompress(base64.b64decode(res.output, validate=False), limit + 1)
    except (ValueError, zlib.error) as exc:
        raise GuestError(f"{path}: console transfer corrupted ({exc}); kernel messages "
                         "may have interleaved with it", res.output[-2000:]) from exc
    if len(data) > limit:
        raise OverCap(f"{path} holds more than its cap of {limit} bytes: not read")
    if not digest or hashlib.md5(data).hexdigest() != digest[0]:
        raise GuestError(f"{path}: console transfer corrupted (md5 mismatch)",
                         data[-2000:].decode(errors="replace"))
    return data

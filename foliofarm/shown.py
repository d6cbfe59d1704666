"""The one boundary untrusted text crosses on its way out.

A series' Subject, a mail, a guest's console, a compiler's or a reproducer's
output is someone else's bytes. Whatever reaches a terminal, rich, report.txt,
report.md, report.html, junit.xml, KCIDB or a mail goes through here first:

- control characters are made visible, never sent: ESC becomes the four
  characters ``\\x1b``, so an OSC 52 (write the clipboard), an OSC 0 (the window
  title) or a cursor move is shown as text; so are the C1 controls, DEL, a
  lone carriage return (which would overwrite a line) and the Unicode format
  characters that reorder or hide text (bidi overrides, zero-width ones);
- each medium's markup is escaped: rich never parses it (a console line
  ``BUG: ... [/]`` is text), Markdown's and HTML's special characters are
  quoted, a preformatted Markdown block is fenced longer than any run of
  backticks inside it;
- a line is at most LINE characters and a text at most LINES lines (head and
  tail kept, what was left out counted).

Anchors: syzkaller (every byte from a VM sanitised before a report or a mail),
Go's html/template (escaping chosen by the medium, not by the caller).
"""

from __future__ import annotations

import html as _html
import re
from typing import Any

# The longest line and the most lines of one untrusted text shown.
LINE = 2000
LINES = 400

# Everything that moves a terminal or reorders text: C0 but tab and newline,
# DEL, C1, and the Unicode format characters (zero-width, bidi embeddings,
# overrides and isolates, the BOM, the interlinear annotations).
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e"
                     "\u2060-\u206f\ufeff\ufff9-\ufffb]")


def _escape(m: re.Match[str]) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def visible(text: Any) -> str:
    """``text`` with every control character shown as an escape (``\\x1b``);
    newlines and tabs kept; a CRLF becomes a newline."""
    s = text if isinstance(text, str) else str(text)
    s = s.replace("\r\n", "\n")
    return CONTROL.sub(_escape, s)


def bounded(text: Any, line: int = LINE, lines: int = LINES) -> str:
    """visible(``text``), each line at most ``line`` characters and at most
    ``lines`` lines: the first and last halves kept, what was cut counted."""
    s = visible(text)
    rows = s.split("\n")
    if len(rows) > lines:
        head, tail = lines // 2, lines - lines // 2 - 1
        rows = [*rows[:head], f"[... {len(rows) - head - tail} lines left out ...]",
                *(rows[-tail:] if tail else [])]
    return "\n".join(r if len(r) <= line else f"{r[:line]}[... {len(r) - line} characters left out]"
                     for r in rows)


def terminal(text: Any) -> str:
    """For a terminal, written as plain text (a log line, an error)."""
    return bounded(text)


def rich_text(text: Any, style: str = "") -> Any:
    """A rich Text of ``text``: rich never parses it as markup."""
    from rich.text import Text
    return Text(bounded(text), style=style)


def rich_markup(text: Any) -> str:
    """``text`` to put inside a rich markup string: its brackets quoted."""
    from rich.markup import escape
    return escape(bounded(text))


# What makes inline Markdown (or HTML in it) anywhere, an underscore where it
# could start or end emphasis (not inside a word: moved_cont_pct stays), and
# what starts a block at the start of a line (a heading, a quote, a list).
_MD_INLINE = re.compile(r"([\\`*\[\]<>|~&]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")
_MD_BLOCK = re.compile(r"^(\s*\d*)([#>+=.)-])", re.M)


def markdown(text: Any) -> str:
    """Inline Markdown: every character Markdown (or HTML inside it) could
    take for markup quoted with a backslash; the farm's words ("4k-xfs",
    "moved_cont_pct") read as they are."""
    s = _MD_INLINE.sub(r"\\\1", bounded(text))
    return _MD_BLOCK.sub(lambda m: m.group(1) + "\\" + m.group(2), s)


def markdown_cell(text: Any) -> str:
    """A Markdown table cell: inline, on one line (inside a row, nothing
    starts a block)."""
    return _MD_INLINE.sub(r"\\\1", bounded(text)).replace("\n", " ")


def markdown_pre(text: Any) -> list[str]:
    """A fenced Markdown block of ``text`` (its lines, fences included): the
    fence one backtick longer than the longest run of them inside."""
    body = bounded(text)
    runs = [len(r) for r in re.findall("`+", body)]
    fence = "`" * max(3, max(runs, default=0) + 1)
    return [fence, body, fence]


def html(text: Any) -> str:
    """HTML text or an attribute's value."""
    return _html.escape(bounded(text), quote=True)


def mail(text: Any) -> str:
    """A mail's plain-text body: visible, lines bounded (a reply is short)."""
    return bounded(text, lines=LINES * 5)


def header(text: Any, length: int = 200) -> str:
    """A mail header's value (a Subject): one line, visible, bounded."""
    return visible(" ".join(str(text).split()))[:length]


def data(obj: Any) -> Any:
    """A JSON-like document (KCIDB's, a junit's strings) with every string in
    it made visible and bounded, keys too."""
    if isinstance(obj, str):
        return bounded(obj)
    if isinstance(obj, dict):
        return {data(k) if isinstance(k, str) else k: data(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [data(v) for v in obj]
    return obj


def is_clean(text: str) -> bool:
    """True if ``text`` holds no control character (what every output must be)."""
    return CONTROL.search(text.replace("\r\n", "\n")) is None

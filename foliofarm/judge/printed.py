"""What a reproducer printed, read as figures: each line ``key: value`` whose
value is a number (``resident_pages: 4096``, ``ratio: 0.5``) is the figure
``key``, judged base against series with the base's noise as every figure of
the farm's is; a key printed twice keeps its last value. Other lines are its
output, shown, never judged."""

from __future__ import annotations

import re

FIGURE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_.-]{0,63}):\s*(-?\d+(?:\.\d+)?)\s*$")
MAX_FIGURES = 64        # a reproducer that prints thousands is read for its first
TAIL_LINES = 12         # the last lines of its output a result keeps, for the report


def figures(output: str) -> dict[str, int | float]:
    """The ``key: number`` lines of ``output``, in the order first printed."""
    out: dict[str, int | float] = {}
    for line in output.splitlines():
        m = FIGURE.match(line)
        if m is None:
            continue
        if m[1] not in out and len(out) >= MAX_FIGURES:
            continue
        out[m[1]] = float(m[2]) if "." in m[2] else int(m[2])
    return out


def numbers(metrics: dict[str, object]) -> list[str]:
    """The names of ``metrics`` whose values are numbers (its output's last
    lines, text, are no figure to show in a column)."""
    return [k for k, v in metrics.items() if isinstance(v, (int, float)) and not isinstance(v, bool)]

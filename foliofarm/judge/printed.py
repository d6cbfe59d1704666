"""What a reproducer printed, read as figures: each line ``key: value`` whose
value is a number (``resident_pages: 4096``, ``ratio: 0.5``) is the figure
``key``, judged base against series with the base's noise as every figure of
the farm's is; a key printed twice keeps its last value. Other lines are its
output, shown, never judged."""

from __future__ import annotations

import re

FIGURE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_.-]{0,63}):\s*(-?\d+(?:\.\d+)?)\s*$")
MAX_FIGURES = 64        # a reproducer that prints thousands is read for its first


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

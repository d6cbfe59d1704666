"""`foliofarm lab up|down` (a LAVA lab on this machine: lava/lab.py) and
`foliofarm selfcheck bench|mutants|faults|emulation` (the farm's checks of itself:
selfcheck/), each handing the rest of its command line to the tool, whose
own --help says its options."""

from __future__ import annotations

import argparse
from typing import Any

SELFCHECKS = {"bench": "speed and memory as ratios against their targets",
              "mutants": "every own mutant of 7.3 as a series: caught in exactly its cells",
              "faults": "each fault injected into a real run: said and recovered from",
              "emulation": "each way to make a TCG guest cheaper, A/B on the matrix: time and results"}


def add_parser(sub: Any, d: dict[str, Any]) -> None:
    lab = sub.add_parser("lab", help="a LAVA lab on this machine (PostgreSQL, lava-server, workers "
                         "with a qemu device each, on loopback): up or down")
    lab.add_argument("what", choices=("up", "down"))
    lab.add_argument("rest", nargs=argparse.REMAINDER, help="[--workers N] [--port P] (up's options)")
    lab.set_defaults(func=lambda args, argv: _lab([args.what, *args.rest]), prefix="foliofarm lab")
    sc = sub.add_parser("selfcheck", help="the farm's checks of itself: " + "; ".join(
        f"{k} ({v})" for k, v in SELFCHECKS.items()))
    sc.add_argument("which", choices=sorted(SELFCHECKS))
    sc.add_argument("rest", nargs=argparse.REMAINDER, help="the self-check's own options (its --help)")
    sc.set_defaults(func=lambda args, argv: _selfcheck(args.which, args.rest), prefix="foliofarm selfcheck")


def _lab(rest: list[str]) -> int:
    from foliofarm.lava import lab
    return lab.main(rest)


def _selfcheck(which: str, rest: list[str]) -> int:
    from foliofarm.run import child
    from foliofarm.selfcheck import bench, emulation, faults, mutants
    child.stoppable()
    return {"bench": bench.main, "mutants": mutants.main, "faults": faults.main,
            "emulation": emulation.main}[which](rest)

"""`foliofarm watch URL|INBOX-PATH`: follow a list, test its series, reply in the thread."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from foliofarm.paths import ROOT
from foliofarm.watch import config
from foliofarm.watch.loop import Watcher, WatchOptions


def add_parser(sub: Any, d: dict[str, Any]) -> None:
    ap = sub.add_parser(
        "watch", help="follow a public-inbox archive, test each new mm series and reply in its thread",
        description="Follow a public-inbox archive, test every new series that touches the "
                    "paths of interest on the matrix, and reply in its thread.")
    ap.add_argument("archive", metavar="URL|INBOX-PATH",
                    help="an inbox URL as lore serves one (https://lore.kernel.org/linux-mm), or "
                         "a local public-inbox folder")
    ap.add_argument("--config", type=Path, default=None,
                    help=f"what to test and how to reply (default {config.DEFAULT.relative_to(ROOT)})")
    ap.add_argument("--state", type=Path, default=ROOT / "results" / "watch",
                    help="the queue, history, mirror, runs and status page (default results/watch)")
    ap.add_argument("--outbox", type=Path, default=None,
                    help="maildir the replies are written to (default STATE/outbox)")
    ap.add_argument("--once", action="store_true",
                    help="read what the archive holds now, test and answer what is due, and exit")
    ap.add_argument("--send", action="store_true",
                    help="also deliver each reply over SMTP ([smtp] of the configuration; "
                         "its login_file for a login)")
    ap.add_argument("--poll", type=float, default=300, metavar="SECONDS",
                    help="pause between two reads of the archive (default 300)")
    ap.add_argument("--kernel", default=None, help="base kernel of every run (as for run)")
    ap.add_argument("--cells", default=None, help="cells of every run, comma-separated (as for run)")
    ap.add_argument("--checks", default=None, help="checks of every run, comma-separated (as for run)")
    ap.set_defaults(func=command, prefix="foliofarm watch", interrupted=(
        "stopped; start it again to go on where it was", 0))


def command(args: argparse.Namespace, argv: list[str]) -> int:
    cfg = config.load(args.config)
    if args.kernel:
        cfg.run.kernel = args.kernel
    if args.cells:
        cfg.run.cells = args.cells.split(",")
    if args.checks:
        cfg.run.checks = args.checks.split(",")
    if args.send:
        from foliofarm.watch import reply
        reply.check_sending(cfg)
    state = args.state.resolve()
    opts = WatchOptions(args.archive, cfg, state, (args.outbox or state / "outbox").resolve(),
                        once=args.once, send=args.send, poll=args.poll)
    return Watcher(opts).serve()

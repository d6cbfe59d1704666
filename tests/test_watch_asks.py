"""A reproducer asked for on the list, end to end: a real public-inbox on
loopback, a series the watcher tests and answers, then replies in its thread
carrying `foliofarm: repro` and a reproducer: one that runs (answered once,
under its own message, with the per-cell table), one that loops forever
(killed at [repro] seconds in each guest, answered saying so), one that does
not compile (answered with the compiler's lines), and one over the
per-sender cap (held, on the status page, never answered). The watcher stays
up, and a second pass answers nothing twice."""

from __future__ import annotations

import mailbox
import sys
from email import message_from_bytes
from email.policy import default
from pathlib import Path

import pytest

from foliofarm.watch import state

sys.path.insert(0, str(Path(__file__).resolve().parent))
from inbox import Inbox, example_series, mail, needs_public_inbox  # noqa: E402
from test_watch_runs import BENIGN_DATE, config, row, watch  # noqa: E402

pytestmark = [pytest.mark.integration, needs_public_inbox]
ROOT = Path(__file__).resolve().parent.parent


def replies(st: Path) -> dict[str, object]:
    """The outbox's replies by the message they answer."""
    box = mailbox.Maildir(st / "outbox")
    out = {}
    for k in box.keys():
        m = message_from_bytes(box.get_bytes(k), policy=default)
        out[str(m["In-Reply-To"]).strip("<>")] = m
    return out


def test_reproducers_asked_for_in_replies_are_run_and_answered_once_each(tmp_path):
    ib = Inbox(tmp_path / "pi")
    dev = "A. Developer <dev@example.org>"
    ids = []
    for i, (subject, body) in enumerate(example_series("benign.mbox")):
        ids.append(f"ask.{i}@example.org")
        ib.post(mail(subject, ids[-1], body, date=BENIGN_DATE + i, frm=dev, reply_to=ids[:1] if i else []))
    st, cfg = tmp_path / "state", config(tmp_path)
    with open(cfg, "a") as f:
        f.write("[repro]\nseconds = 5\nper_sender_hour = 3\n")
    p = watch(str(ib.dir), st, cfg, "--once")
    assert p.wait(1800) == 0, (tmp_path / "watch.log").read_text()[-3000:]
    assert row(st, "[PATCH 0/1] mm/filemap").state == "replied"

    rev = "R. Viewer <rev@example.org>"
    thp = (ROOT / "examples" / "repro" / "thp-state.sh").read_text()
    asks = {
        "runs": f"On 4K the THP state is what I think it is:\n\nfoliofarm: repro\n{thp}\n-- \nR\n",
        "loops": "foliofarm: repro\n#!/bin/sh\necho spinning\nwhile :; do :; done\nfoliofarm: end\n",
        "typo": "foliofarm: repro\n#include <stdio.h>\nint main(void) { return nope; }\n",
        "capped": f"foliofarm: repro\n{thp}\n",
    }
    for n, (tag, body) in enumerate(asks.items()):
        ib.post(mail("Re: [PATCH 1/1] mm/filemap: one helper for the mmap_miss decrement",
                     f"{tag}@example.org", body, frm=rev, date=BENIGN_DATE + 100 + n, reply_to=ids))
    p = watch(str(ib.dir), st, cfg, "--once")
    assert p.wait(1800) == 0, (tmp_path / "watch.log").read_text()[-3000:]

    got = replies(st)
    assert set(got) == {ids[0], "runs@example.org", "loops@example.org", "typo@example.org"}
    runs = got["runs@example.org"]
    assert runs["To"].addresses[0].addr_spec == "rev@example.org"
    text = runs.get_content()
    assert "foliofarm ran the reproducer of this message (repro.sh)" in text
    assert "Reproducer repro.sh (shell, " in text
    assert "4k-ext4: base exit 0, after exit 0: pass" in text and "page_kb 4" in text
    loops = got["loops@example.org"].get_content()
    assert "4k-ext4: base exit 137, after exit 137: fail" in loops and "timed_out 1" in loops
    typo = got["typo@example.org"].get_content()
    assert "did not run the reproducer" in typo and "does not compile for arm64" in typo and "nope" in typo

    s = state.State(st)
    by = {a.msgid: a for a in s.asks()}
    s.close()
    assert by["capped@example.org"].state == "held" and "per_sender_hour" in by["capped@example.org"].reason
    assert {by[f"{t}@example.org"].state for t in ("runs", "loops", "typo")} == {"replied"}
    assert "Reproducers asked for" in (st / "index.html").read_text()

    p = watch(str(ib.dir), st, cfg, "--once")            # again: nothing is answered twice
    assert p.wait(600) == 0
    assert len(mailbox.Maildir(st / "outbox")) == 4

"""Reproducers asked for on the list ([repro]; what a request is:
watch/asked.py). Each is recorded with the series of its thread as the
message is read, run once that series was judged (on the base and the series
it was tested on, every cell of [run], the reproducer alone), and answered
under the asking message: the reproducer's table from report.txt, or why it
was not run (it holds no reproducer, it does not compile, the series was not
tested). At most one run per message; runs over the per-hour or per-sender
cap are held, on the status page only (a flood gets no echo). A reproducer is
someone else's code: compiled in the sandbox, run only in guests, killed
after [repro] seconds in each, its output capped by its driver."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import Any, Callable, Protocol

from foliofarm.errors import InfraError
from foliofarm.watch import asked, reply, tester, threads
from foliofarm.watch.config import WatchConfig
from foliofarm.watch.state import Ask, State, Tracked


class Asker(Protocol):
    """What of the watcher (watch/loop.py) the asks use."""
    state: State
    cfg: WatchConfig
    o: Any                      # its options: state_dir, outbox
    sender: reply.Sender | None

    def say(self, text: str) -> None: ...
    def write_status(self) -> None: ...
    def patch_folder(self, row: Tracked, folder: Path) -> Path: ...

DONE = ("tested", "sending", "replied", "quiet")        # a series' states once it was judged
GONE = ("ignored", "old", "refused", "superseded", "failed", "expired")
HOUR = 3600


def noticed(state: State, cfg: WatchConfig, m: threads.Message, raw: bytes, now: float) -> Ask | None:
    """The reproducer ``m`` asks for, if it is a reply in the thread of a
    series the watcher follows and holds the request line; refused (with the
    reason) where what it holds cannot be run."""
    if not cfg.repro.enabled or m.part or m.kind in (threads.TOO_LARGE, threads.MALFORMED) \
            or b"foliofarm:" not in raw:
        return None
    got = asked.asked(raw)
    row = state.in_thread([*m.refs, m.msgid]) if got is not None else None
    if row is None:
        return None
    a = Ask(msgid=m.msgid, series=row.key, sender=m.sender, subject=m.subject, asked=now,
            state="waiting", raw=raw)
    if isinstance(got, str):
        a.state, a.reason = "refused", got
    else:
        a.name, a.args, a.text = got.name, got.args, got.text
    return a


def step(w: Asker) -> None:
    """Each pass: the asks whose series was judged are run (within the caps),
    then those due are answered; one ask's failure is its own."""
    for a in w.state.asks("waiting", "queued"):
        _guarded(w, run, a)
        w.write_status()
    for a in w.state.asks("tested", "refused"):
        _guarded(w, answer, a)


def _guarded(w: Asker, do: Callable[[Asker, Ask], None], a: Ask) -> None:
    try:
        do(w, a)
    except Exception as exc:     # noqa: BLE001: one message, not the service
        why = f"{do.__name__} failed: {type(exc).__name__}: {exc}"[:500]
        w.say(f"reproducer asked for in <{a.msgid}>: {why}")
        w.state.move_ask(a.msgid, "failed", why, pid=None)


def run(w: Asker, a: Ask) -> None:
    """The reproducer on its series' base and series, once the series was
    judged; held over a cap; refused where the series was not tested."""
    row = w.state.get(a.series)
    if row is None or row.state in GONE:
        why = f"{row.state}: {row.reason}" if row else "not tracked"
        w.state.move_ask(a.msgid, "refused", f"the series of its thread was not tested ({why})"[:500])
        return
    if row.state not in DONE:
        return                                  # waiting for its series' verdict
    if row.outcome != tester.JUDGED:
        w.state.move_ask(a.msgid, "refused", f"the series of its thread was not judged: {row.outcome} "
                         f"({row.reason})"[:500])
        return
    r, now = w.cfg.repro, time.time()
    if w.state.runs_since(now - HOUR) >= r.per_hour:
        w.state.move_ask(a.msgid, "held", f"over [repro] per_hour ({r.per_hour} runs an hour)")
        return
    if w.state.runs_since(now - HOUR, a.sender) >= r.per_sender_hour:
        w.state.move_ask(a.msgid, "held", f"over [repro] per_sender_hour ({r.per_sender_hour} runs an "
                         "hour per sender)")
        return
    folder = w.o.state_dir / "asks" / _name(a.msgid)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / a.name).write_text(a.text)
    patches = w.patch_folder(row, folder / row.folder_name)
    argv = run_argv(w.cfg, row, folder / a.name, a.args)
    w.state.move_ask(a.msgid, "testing", f"on {row.subject[:80]!r}", started=now)
    w.say(f"running the reproducer of <{a.msgid}> on {row.subject!r} in {folder}")
    out = tester.test_series(patches, folder / "results", argv, folder / "run.log",
                             lambda pid: w.state.move_ask(a.msgid, "testing", None, pid=pid),
                             seconds=r.run_minutes * 60 + 120)
    w.say(f"the reproducer of <{a.msgid}>: {out.kind} (exit {out.rc})")
    run_dir = str(out.run_dir) if out.run_dir else None
    if out.kind == tester.JUDGED:
        w.state.move_ask(a.msgid, "tested", "", pid=None, run_dir=run_dir)
    elif "--repro" in out.said or out.kind == tester.TIMED_OUT:
        # the reproducer's own fault (it does not compile) or too long: said in the reply
        w.state.move_ask(a.msgid, "refused", out.said[:3000], pid=None, run_dir=run_dir)
    else:
        w.state.move_ask(a.msgid, "failed", f"the run failed ({out.kind}): {out.said[:400]}",
                         pid=None, run_dir=run_dir)


def run_argv(cfg: WatchConfig, row: Tracked, file: Path, args: str) -> list[str]:
    """The run options of a reproducer's run: the watcher's kernel, cells and
    options (not its checks: the reproducer runs alone), the base its series
    was tested on, its limits."""
    out = ["--kernel", cfg.run.kernel, *(["--cells", ",".join(cfg.run.cells)] if cfg.run.cells else []),
           *cfg.run.args]
    if base := tester.base_commit(Path(row.run_dir) if row.run_dir else None):
        out += ["--base", base]
    out += ["--repro", str(file), "--repro-timeout", str(cfg.repro.seconds),
            "--build-timeout", f"{cfg.series.build_minutes * 60:g}",
            "--timeout", f"{cfg.repro.run_minutes * 60:g}"]
    return out + (["--repro-args", args] if args else [])


def answer(w: Asker, a: Ask) -> None:
    """The reply under the asking message: the reproducer's table, or why it
    was not run; within the replies' hourly caps, never to an address or
    message opted out."""
    anchor = threads.describe(a.raw, a.msgid, time.time(), len(a.raw) + 1)
    if reply.opted_out(w.cfg) & {a.sender, a.msgid.lower()}:
        w.state.move_ask(a.msgid, "held", "opted out ([reply] opt_out)")
        return
    row = w.state.get(a.series)
    body = body_of(a, row)
    key = f"repro-{_name(a.msgid)}"
    msg = reply.compose(anchor, key, body, w.cfg)
    to = reply.addressed(msg)
    sent, reached = w.state.replies_since(time.time() - HOUR)
    if sent >= w.cfg.reply.per_hour or reached + len(to) > w.cfg.reply.recipients_per_hour:
        return                                  # the next pass, within the caps
    reply.to_outbox(w.o.outbox, msg)
    if w.sender:
        try:
            w.sender.send(msg)
        except InfraError as exc:
            w.state.move_ask(a.msgid, "failed", f"not sent: {exc}")
            return
    w.state.move_ask(a.msgid, "replied", a.reason, reply_id=reply.reply_id(key, w.cfg),
                     recipients=len(to), replied_at=time.time())
    w.say(f"answered the reproducer of <{a.msgid}> ({len(to)} recipients)"
          + ("" if w.sender else f" (in {w.o.outbox})"))


def body_of(a: Ask, row: Tracked | None) -> str:
    """The reply's text: the table report.txt gives the reproducer (which
    reproducer, each cell's base and series exit status, the verdict, its
    figures, what the kernel reported), or why it was not run."""
    what = f"{a.name}" + (f" {a.args}" if a.args else "")
    series = f"v{row.version} of {row.subject!r}" if row else "its series"
    if a.state == "refused" or not a.run_dir:
        lines = [f"foliofarm did not run the reproducer of this message ({what}) on {series}:", "",
                 *("  " + ln for ln in (a.reason or "(no reason given)").splitlines()[:40])]
    else:
        table = _section(tester.report_text(Path(a.run_dir), lambda said: None))
        lines = [f"foliofarm ran the reproducer of this message ({what}) on arm64 under QEMU, "
                 f"on the base and on {series}, in every cell:", "", *table]
    lines += ["", "To ask again, reply with a line 'foliofarm: repro [ARGS]' and the reproducer "
                  "(attached, or on the lines after it)."]
    return "\n".join(lines) + "\n" + reply.signature()


def _section(report: str) -> list[str]:
    """report.txt's reproducer table (report/text.py), from its head line to
    the blank line after it."""
    lines = report.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith("Reproducer ")), None)
    if start is None:
        return ["(the run's report has no reproducer table: see the status page)"]
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    return lines[start:end]


def _name(msgid: str) -> str:
    return hashlib.sha256(msgid.encode()).hexdigest()[:16]



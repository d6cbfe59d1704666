"""The watcher: read what the archive gained, sort it into series, test what
is due, reply, rewrite the status page; again after --poll seconds, or once
with --once. The archive being unreachable is waited out with a growing pause;
a watcher killed at any moment is resumed by starting it again (state.py)."""

from __future__ import annotations

import fcntl
import json
import sqlite3
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from foliofarm import shown
from foliofarm.errors import FarmError, InfraError, UsageError
from foliofarm.kernel import prune
from foliofarm.report import kcidb
from foliofarm.paths import cache_dir
from foliofarm.util import write_atomic
from foliofarm.watch import findings, reply, status, tester, threads
from foliofarm.watch.assess import assess
from foliofarm.watch.archive import Archive, Unreachable
from foliofarm.watch.config import WatchConfig
from foliofarm.watch.state import Tracked, State

WAITING = ("waiting", "incomplete", "queued")
MAX_PAUSE = 3600
# A run past its --timeout is killed by the watcher this long after.
KILL_AFTER = 120


@dataclass
class WatchOptions:
    where: str
    cfg: WatchConfig
    state_dir: Path
    outbox: Path
    once: bool = False
    send: bool = False
    poll: float = 300
    log: object = field(default=sys.stderr)


class Watcher:
    def __init__(self, opts: WatchOptions) -> None:
        self.o = opts
        self.cfg = opts.cfg
        opts.state_dir.mkdir(parents=True, exist_ok=True)
        self._lock = open(opts.state_dir / "watch.lock", "w")
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UsageError(f"another watcher is using {opts.state_dir}: stop it, or give this "
                             "one its own --state") from None
        self.state = State(opts.state_dir)
        self.archive = Archive(opts.where, opts.state_dir / "mirror")
        self.sender = reply.Sender(self.cfg) if opts.send else None

    def say(self, text: str) -> None:
        # a Subject, a sender, a reason from a run: their escapes shown (shown.py)
        print(time.strftime("[%H:%M:%S] ") + shown.terminal(text), file=self.o.log, flush=True)

    # -- the loop

    def serve(self) -> int:
        tester.check_options(self.cfg.run.argv())
        self.recover()
        pause = self.o.poll
        while True:
            try:
                self.one_pass()
                pause = self.o.poll
            except Unreachable as exc:
                if self.o.once:
                    self.say(f"archive unreachable: {exc}")
                    return 3
                pause = min(pause * 2, MAX_PAUSE)
                self.say(f"archive unreachable ({exc}); trying again in {pause:.0f}s")
            except (FarmError, OSError, sqlite3.Error) as exc:
                if self.o.once:
                    raise
                # a full disk, a lost lock, git failing: the pass is retried, the service stays
                pause = min(pause * 2, MAX_PAUSE)
                self.say(f"pass failed ({exc}); trying again in {pause:.0f}s")
            except Exception as exc:      # noqa: BLE001: a fault of the pass, not of one series
                if self.o.once:
                    raise
                pause = min(pause * 2, MAX_PAUSE)
                self.say(f"pass failed ({type(exc).__name__}: {exc}); trying again in {pause:.0f}s")
            if self.o.once:
                return 0
            time.sleep(pause)

    def one_pass(self) -> None:
        touched = self.read()
        self.sort(touched, time.time())
        self.write_status()
        for row in self.state.rows("queued"):
            self.guarded(self.test, row, "testing it")
            self.write_status()
        for row in self.state.rows("tested"):
            self.guarded(self.answer, row, "answering it")
        findings.step(self)
        self.write_status()
        self.prune()

    def prune(self) -> None:
        """Old kernels out of the cache (kernel/prune.py, [cache])."""
        c = self.cfg.cache
        for line in prune.prune(cache_dir(), c.keep_days, c.max_gb):
            self.say(f"cache: removed kernel {line}")

    def guarded(self, step, row: Tracked, doing: str) -> None:
        """One series' step; whatever goes wrong in it is that series' failure
        (recorded with the reason), and the watcher goes on with the next."""
        try:
            step(row)
        except sqlite3.Error:
            raise                               # the state itself: the pass is retried
        except Exception as exc:               # noqa: BLE001: one series, one bad mail
            why = f"{doing} failed: {type(exc).__name__}: {exc}"[:500]
            self.say(f"{row.subject[:80]!r}: {why}")
            self.state.move(row.key, "failed", why, pid=None)

    def write_status(self) -> None:
        status.write(self.state, self.o.state_dir, self.o.where, self.cfg.status.days)

    # -- reading and sorting

    def read(self) -> set[str]:
        """New messages into the state; the series they touch."""
        cursors = self.state.cursors()
        touched: set[str] = set()
        limit = self.cfg.series.max_message_kb * 1024
        for epoch in self.archive.epochs(cursors, self.cfg.series.backlog_days):
            for batch in self.archive.read(epoch, cursors.get(epoch.name)):
                now = time.time()
                rows, asks = [], []
                for blob, raw in batch.messages:
                    m = threads.safely_described(raw, blob, now, limit)
                    key = threads.key_of(m) if m.part else None
                    rows.append((m, key, raw if key and m.kind != threads.TOO_LARGE else None))
                    if key:
                        touched.add(key)
                    elif a := findings.noticed(self.state, self.cfg, m, raw, now):
                        asks.append(a)          # a reproducer asked for in a reply
                new = self.state.ingest(epoch.name, batch.commit, rows, now, asks)
                self.say(f"epoch {epoch.name}: {new} new message(s), up to {batch.commit[:12]}")
        return touched

    def sort(self, touched: set[str], now: float) -> None:
        """Each touched or waiting series to its state (state.py lists them)."""
        keys = touched | {r.key for r in self.state.rows(*WAITING)}
        for key in sorted(keys):
            try:
                self.sort_one(key, now)
            except sqlite3.Error:
                raise
            except Exception as exc:       # noqa: BLE001: one series' messages, not the pass
                why = f"sorting it failed: {type(exc).__name__}: {exc}"[:500]
                self.say(f"series {key}: {why}")
                if self.state.get(key) is not None:
                    self.state.move(key, "failed", why)
        self.supersede()

    def sort_one(self, key: str, now: float) -> None:
        """One touched or waiting series to its state."""
        v = threads.group(self.state.messages(key)).get(key)
        if v is None:
            return
        row = self.state.get(key)
        first, last = self.state.seen(key)
        a = v.anchor
        if row is None:
            row = Tracked(key, a.msgid, a.root, a.title, a.subject, a.author, v.version, v.total,
                      first, last, v.last_arrival, "waiting")
        elif row.state not in WAITING:
            return
        row.anchor, row.subject, row.author, row.last_seen = a.msgid, a.subject, a.author, last
        new, why = assess(v, self.cfg, now, first, last)
        if v.foreign and new != "refused":
            why += (f"; {len(v.foreign)} message(s) from other senders left out"
                    if why else f"{len(v.foreign)} message(s) from other senders left out")
        if new == "queued":
            row.patch_ids = row.patch_ids or threads.patch_ids(
                [self.state.raw(m.msgid) for m in v.messages if m.kind == threads.PATCH])
            if done := self.tested_before(row):
                new, why = "ignored", f"the same patches as {done.subject!r} (v{done.version}), " \
                                      f"already {done.state}: a RESEND is not tested again"
        if row.state != new or row.reason != why:
            self.say(f"{a.subject!r}: {new}{' (' + why + ')' if why else ''}")
        row.state, row.reason = new, why
        self.state.put(row)

    def tested_before(self, row: Tracked) -> Tracked | None:
        """Another series with the same patches (by patch-id) that was tested or is."""
        if not row.patch_ids or "" in row.patch_ids.split(" "):
            return None
        return next((r for r in self.state.rows("testing", "tested", "sending", "replied", "quiet")
                     if r.key != row.key and r.patch_ids == row.patch_ids), None)

    def supersede(self) -> None:
        """A series not yet tested gives way to a newer version of itself: a
        complete one (queued or further on), from the same sender, in the same
        thread or under the same title. An incomplete or a stranger's "v99"
        changes nothing."""
        for r in self.state.rows(*WAITING):
            if newer := self.newer_version(r):
                self.state.move(r.key, "superseded", f"v{newer.version} arrived")

    # -- testing and answering

    def test(self, row: Tracked) -> None:
        attempt = row.attempts + 1
        self.state.move(row.key, "testing", f"attempt {attempt}", attempts=attempt)
        folder = self.o.state_dir / "runs" / row.key
        patches = self.patch_folder(row, folder / row.folder_name)
        self.say(f"testing {row.subject!r} (v{row.version}, attempt {attempt}) in {folder}")
        out = tester.test_series(patches, folder, self.cfg.run.argv() + self.limits(),
                         folder / f"attempt-{attempt}.log",
                         lambda pid: self.state.move(row.key, "testing", None, pid=pid),
                         seconds=self.cfg.series.run_minutes * 60 + KILL_AFTER)
        self.say(f"{row.subject!r}: {out.kind} (exit {out.rc}) {json.dumps(out.pages)}")
        fields = dict(pid=None, outcome=out.kind, run_dir=str(out.run_dir) if out.run_dir else None,
                      verdicts=json.dumps(out.pages) if out.pages else None, base=out.base)
        if out.kind in (tester.JUDGED, tester.NOT_BUILT) and out.run_dir and self.cfg.kcidb.url:
            self.submit(row, out.run_dir)
        if out.kind == tester.TIMED_OUT:
            self.state.move(row.key, "failed", out.said, **fields)
        elif out.kind != tester.INFRA:
            self.state.move(row.key, "tested", out.said.splitlines()[0] if out.said else "", **fields)
        elif attempt < self.cfg.series.attempts:
            self.state.move(row.key, "queued", f"attempt {attempt} failed: {_first(out.said)}", **fields)
        else:
            self.state.move(row.key, "failed", f"{attempt} attempts failed; last: {_first(out.said)}",
                            **fields)

    def submit(self, row: Tracked, run_dir: Path) -> None:
        """The run to KCIDB ([kcidb]): a receiver's refusal is said, and the
        series' own outcome stands."""
        k = self.cfg.kcidb
        try:
            lines = reply.secret(k.token_file, "[kcidb] token_file")[0] if k.token_file else []
            token = lines[0].strip() if lines else None
            said = kcidb.submit(k.url, kcidb.convert([kcidb.read(run_dir)]), token)
            self.say(f"{row.subject[:80]!r}: submitted to KCIDB ({said.strip()[:100]})")
        except FarmError as exc:
            self.say(f"{row.subject[:80]!r}: not submitted to KCIDB: {exc}")

    def limits(self) -> list[str]:
        """The run options that bound one series' run."""
        s = self.cfg.series
        return ["--build-timeout", f"{s.build_minutes * 60:g}", "--timeout", f"{s.run_minutes * 60:g}"]

    def patch_folder(self, row: Tracked, folder: Path) -> Path:
        """The series as a folder of messages, cover first (intake reads it as a thread)."""
        v = threads.group(self.state.messages(row.key))[row.key]
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.iterdir():
            old.unlink()
        for i, m in enumerate(v.messages):
            write_atomic(folder / f"{i:04d}.eml", self.state.raw(m.msgid))
        return folder

    def answer(self, row: Tracked) -> None:
        if why := self.not_answered(row):
            self.state.move(row.key, "quiet", why + (f"; {row.reason}" if row.reason else ""))
            return
        if newer := self.newer_version(row):
            self.state.move(row.key, "superseded", f"v{newer.version} arrived before this reply "
                                                   "went out: only the newest version is answered")
            return
        msg = self.compose(row)
        to = reply.addressed(msg)
        sent, reached = self.state.replies_since(time.time() - 3600)
        r = self.cfg.reply
        if sent >= r.per_hour or reached + len(to) > r.recipients_per_hour:
            self.state.move(row.key, "tested", f"reply held: {sent} replies to {reached} "
                            f"addresses in the last hour (at most {r.per_hour} and "
                            f"{r.recipients_per_hour})")
            return
        reply.to_outbox(self.o.outbox, msg)
        rid = reply.reply_id(row.key, self.cfg)
        if self.sender:
            # from here the reply counts as sent unless the server refused it
            self.state.move(row.key, "sending", None, reply_id=rid, recipients=len(to),
                            replied_at=time.time())
            try:
                self.sender.send(msg)
            except reply.SendUnknown as exc:
                self.state.move(row.key, "sending", str(exc))
                self.say(str(exc))
                return
            except InfraError as exc:
                sends = row.sends + 1
                gone = sends >= r.attempts
                self.state.move(row.key, "failed" if gone else "tested",
                                f"not sent ({sends} of {r.attempts} attempts): {exc}",
                                sends=sends, replied_at=None, recipients=0)
                self.say(str(exc))
                return
        self.state.move(row.key, "replied", row.reason, reply_id=rid, recipients=len(to),
                        replied_at=time.time())
        self.say(f"replied to {row.subject!r} as <{rid}> ({len(to)} recipients)"
                 + ("" if self.sender else f" (in {self.o.outbox})"))

    def not_answered(self, row: Tracked) -> str:
        """Why ``row`` gets no reply, or "": opted out, nothing configured for its
        outcome, or (when = "news") nothing new to say."""
        r = self.cfg.reply
        out = reply.opted_out(self.cfg)
        if out & {threads.address_of(row.author), row.anchor.lower(), row.root.lower()}:
            return "opted out ([reply] opt_out)"
        wanted = {tester.JUDGED: True, tester.NOT_APPLIED: r.on_not_applied,
                  tester.NOT_BUILT: r.on_not_built}.get(row.outcome or "", False)
        if not wanted:
            return f"{row.outcome}: no reply configured"
        if row.outcome == tester.JUDGED and r.when == "news" and row.run_dir \
                and not tester.news(Path(row.run_dir)):
            return "no news (every check as on the base): on the status page only"
        return ""

    def newer_version(self, row: Tracked) -> Tracked | None:
        """A complete newer version of ``row`` from its sender (queued or further)."""
        me = threads.address_of(row.author)
        return next((n for n in self.state.rows() if n.version > row.version and me
                     and n.state not in ("ignored", "refused", "old", "waiting", "incomplete", "expired")
                     and threads.address_of(n.author) == me
                     and (n.root == row.root or n.title == row.title)), None)

    def compose(self, row: Tracked):
        v = threads.group(self.state.messages(row.key))[row.key]
        argv = self.cfg.run.argv()
        if base := tester.base_commit(Path(row.run_dir) if row.run_dir else None):
            argv += ["--base", base]         # the branch moves on: the commit it was tested on
        if row.outcome == tester.JUDGED:
            txt = tester.report_text(Path(row.run_dir), self.say)
            body = reply.judged_body(txt, v.version, len(v.patches), v.anchor, argv)
        else:
            said = tester.recorded_error(Path(row.run_dir) if row.run_dir else None) or row.reason
            body = reply.refused_body(row.outcome or "", said, v.version, v.anchor, argv)
        return reply.compose(v.anchor, row.key, body, self.cfg)

    def recover(self) -> None:
        """After a stop mid-way: a test under way is abandoned (what the run
        left is stopped) and queued again; a reply that was being sent is taken
        as sent if the archive has it, else left alone (never sent twice)."""
        for row in self.state.rows("testing"):
            tester.stop_group(row.pid)
            self.state.move(row.key, "queued", f"attempt {row.attempts} stopped with the watcher",
                            pid=None)
        for a in self.state.asks("testing"):
            tester.stop_group(a.pid)
            self.state.move_ask(a.msgid, "queued", "stopped with the watcher", pid=None)
        for row in self.state.rows("sending"):
            if row.reply_id and self.state.has_message(row.reply_id):
                self.state.move(row.key, "replied", "its reply is in the archive",
                                replied_at=time.time())
            else:
                self.state.move(row.key, "sending", "the watcher stopped while sending its reply: "
                                "not sent again (it may have gone out)")


def _first(text: str) -> str:
    return text.strip().splitlines()[0][:200] if text.strip() else "no reason given"

"""The watcher's queue and history, in one SQLite file (STATE/watch.sqlite).

Every change is one transaction: messages read from an epoch land together
with that epoch's new cursor, so a watcher killed at any moment reads each
message exactly once; a series moves from state to state (below) in single
updates, so a restart finds each where it was. What a state means:

  waiting      patches still arriving, or settling after the last one
  incomplete   patches missing long after the first (taken if they come)
  ignored      touches no path of interest, or not sent to a followed list
  old          from before the watcher's backlog window
  refused      too many patches, or a message too large or unreadable
  superseded   a newer version arrived before this one was tested
  queued       to be tested
  testing      a run is under way (its pid recorded)
  tested       judged; its reply is due
  sending      a reply was being sent when the watcher stopped (never resent)
  replied      done: judged and answered
  quiet        done: judged, no reply wanted (configuration)
  failed       the farm could not test it, after the configured attempts
  expired      still incomplete after [series] give_up_days: given up

A reproducer asked for in a reply (watch/findings.py) has states of its own
(ASK_STATES): waiting for its series to be tested, queued, held (over a cap:
on the status page, never run nor answered), testing, tested or refused (its
reply due: the table, or why it was not run), replied, failed (the farm's
fault: not answered).
"""

from __future__ import annotations

import json
import re
import sqlite3
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Iterable

from foliofarm.watch.threads import Message

STATES = ("waiting", "incomplete", "ignored", "old", "refused", "superseded", "queued",
          "testing", "tested", "sending", "replied", "quiet", "failed", "expired")

SCHEMA = """
CREATE TABLE IF NOT EXISTS messages (
    msgid TEXT PRIMARY KEY, series TEXT, seen REAL NOT NULL, body TEXT NOT NULL, raw BLOB);
CREATE INDEX IF NOT EXISTS messages_series ON messages(series);
CREATE TABLE IF NOT EXISTS cursors (epoch TEXT PRIMARY KEY, commit_id TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS series (
    key TEXT PRIMARY KEY, anchor TEXT NOT NULL, root TEXT NOT NULL, title TEXT NOT NULL,
    subject TEXT NOT NULL, author TEXT NOT NULL,
    version INTEGER NOT NULL, total INTEGER NOT NULL, first_seen REAL NOT NULL,
    last_seen REAL NOT NULL, date REAL NOT NULL, state TEXT NOT NULL, reason TEXT NOT NULL DEFAULT '',
    attempts INTEGER NOT NULL DEFAULT 0, pid INTEGER, run_dir TEXT, outcome TEXT,
    verdicts TEXT, reply_id TEXT, replied_at REAL, updated REAL NOT NULL);
CREATE TABLE IF NOT EXISTS events (
    at REAL NOT NULL, series TEXT, what TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS asks (
    msgid TEXT PRIMARY KEY, series TEXT NOT NULL, sender TEXT NOT NULL, subject TEXT NOT NULL,
    asked REAL NOT NULL, state TEXT NOT NULL, reason TEXT NOT NULL DEFAULT '',
    name TEXT NOT NULL DEFAULT '', args TEXT NOT NULL DEFAULT '', text TEXT NOT NULL DEFAULT '',
    pid INTEGER, run_dir TEXT, started REAL, reply_id TEXT, replied_at REAL,
    recipients INTEGER NOT NULL DEFAULT 0, raw BLOB NOT NULL, updated REAL NOT NULL);
"""
ASK_STATES = ("waiting", "queued", "held", "testing", "tested", "refused", "replied", "failed")


@dataclass
class Tracked:
    """One series version as the state keeps it."""
    key: str
    anchor: str
    root: str
    title: str
    subject: str
    author: str
    version: int
    total: int
    first_seen: float
    last_seen: float
    date: float
    state: str
    reason: str = ""
    attempts: int = 0
    pid: int | None = None
    run_dir: str | None = None
    outcome: str | None = None
    verdicts: str | None = None       # JSON: page size -> [worst verdict, how many]
    reply_id: str | None = None
    replied_at: float | None = None
    updated: float = 0.0
    recipients: int = 0               # of its reply (the hourly cap counts them)
    sends: int = 0                    # attempts to send its reply that failed
    patch_ids: str = ""               # its patches' `git patch-id --stable`, in order
    base: str = ""                    # in a followed tree: where it was applied, and why

    def page_verdicts(self) -> dict[str, list[Any]]:
        return json.loads(self.verdicts) if self.verdicts else {}

    @property
    def folder_name(self) -> str:
        """The series folder's name, which the report shows: v2-mm-filemap-one-helper."""
        slug = re.sub(r"[^A-Za-z0-9_.]+", "-", self.title).strip("-.")[:60].rstrip("-.")
        return f"v{self.version}-{slug or 'series'}"


@dataclass
class Ask:
    """A reproducer asked for in a reply: the asking message, the series of
    its thread, what it asked for (watch/asked.py) and where it is."""
    msgid: str
    series: str
    sender: str
    subject: str
    asked: float
    state: str
    raw: bytes
    reason: str = ""
    name: str = ""
    args: str = ""
    text: str = ""
    pid: int | None = None
    run_dir: str | None = None
    started: float | None = None
    reply_id: str | None = None
    replied_at: float | None = None
    recipients: int = 0
    updated: float = 0.0


class State:
    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / "watch.sqlite"
        self.db = sqlite3.connect(self.path, isolation_level=None, timeout=30)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.executescript(SCHEMA)
        have = {r[1] for r in self.db.execute("PRAGMA table_info(series)")}
        for column, kind in (("recipients", "INTEGER NOT NULL DEFAULT 0"),   # a state of an
                             ("sends", "INTEGER NOT NULL DEFAULT 0"),        # older watcher
                             ("patch_ids", "TEXT NOT NULL DEFAULT ''"),
                             ("base", "TEXT NOT NULL DEFAULT ''")):
            if column not in have:
                self.db.execute(f"ALTER TABLE series ADD COLUMN {column} {kind}")

    def close(self) -> None:
        self.db.close()

    # -- messages and cursors

    def cursor(self, epoch: str) -> str | None:
        row = self.db.execute("SELECT commit_id FROM cursors WHERE epoch=?", (epoch,)).fetchone()
        return row[0] if row else None

    def cursors(self) -> dict[str, str]:
        return dict(self.db.execute("SELECT epoch, commit_id FROM cursors"))

    def ingest(self, epoch: str, commit: str,
               messages: Iterable[tuple[Message, str | None, bytes | None]], now: float,
               asks: Iterable[Ask] = ()) -> int:
        """Messages (each with the series it belongs to, or None, and its raw
        bytes where a series may need them) read from ``epoch`` up to
        ``commit``, the reproducers they ask for, and the cursor moved there:
        all or none. A Message-ID seen before keeps its first message (and
        asks for nothing again). Returns how many were new."""
        new = 0
        with self._txn():
            fresh = set()
            for m, series, raw in messages:
                cur = self.db.execute(
                    "INSERT OR IGNORE INTO messages(msgid, series, seen, body, raw) VALUES (?,?,?,?,?)",
                    (m.msgid, series, now, json.dumps(asdict(m)), raw))
                new += cur.rowcount
                if cur.rowcount:
                    fresh.add(m.msgid)
            for a in asks:
                if a.msgid in fresh:     # at most one run per message, ever
                    a.updated = now
                    d = asdict(a)
                    self.db.execute(f"INSERT OR IGNORE INTO asks({','.join(d)}) VALUES "
                                    f"({','.join('?' * len(d))})", tuple(d.values()))
            self.db.execute("INSERT OR REPLACE INTO cursors(epoch, commit_id) VALUES (?,?)",
                            (epoch, commit))
        return new

    def messages(self, series: str) -> list[Message]:
        # in the order they were read: the archive's order (its commits)
        rows = self.db.execute("SELECT body FROM messages WHERE series=? ORDER BY rowid", (series,))
        return [_message(json.loads(b)) for (b,) in rows]

    def seen(self, series: str) -> tuple[float, float]:
        """When the first and the last message of a series were read."""
        row = self.db.execute("SELECT MIN(seen), MAX(seen) FROM messages WHERE series=?",
                              (series,)).fetchone()
        return (row[0] or time.time(), row[1] or time.time())

    def raw(self, msgid: str) -> bytes:
        row = self.db.execute("SELECT raw FROM messages WHERE msgid=?", (msgid,)).fetchone()
        return bytes(row[0]) if row and row[0] is not None else b""

    def has_message(self, msgid: str) -> bool:
        return self.db.execute("SELECT 1 FROM messages WHERE msgid=?", (msgid,)).fetchone() is not None

    def message_count(self) -> int:
        return self.db.execute("SELECT COUNT(*) FROM messages").fetchone()[0]

    # -- series

    def get(self, key: str) -> Tracked | None:
        cur = self.db.execute("SELECT * FROM series WHERE key=?", (key,))
        row = cur.fetchone()
        return Tracked(**dict(zip([d[0] for d in cur.description], row))) if row else None

    def rows(self, *states: str) -> list[Tracked]:
        q, args = "SELECT * FROM series", ()
        if states:
            q += f" WHERE state IN ({','.join('?' * len(states))})"
            args = states
        cur = self.db.execute(q + " ORDER BY first_seen, key", args)
        names = [d[0] for d in cur.description]
        return [Tracked(**dict(zip(names, r))) for r in cur.fetchall()]

    def put(self, row: Tracked) -> None:
        row.updated = time.time()
        d = asdict(row)
        with self._txn():
            self.db.execute(f"INSERT OR REPLACE INTO series({','.join(d)}) "
                            f"VALUES ({','.join('?' * len(d))})", tuple(d.values()))

    def move(self, key: str, state: str, reason: str | None = None, **fields: Any) -> None:
        """One series to ``state`` (with its reason and any other fields), and
        the move logged."""
        assert state in STATES, state
        self._moved("series", "key", key, key, state, reason, fields)

    def _moved(self, table: str, column: str, key: str, logged_as: str, state: str,
               reason: str | None, fields: dict[str, Any]) -> None:
        sets = {"state": state, "updated": time.time(), **fields}
        if reason is not None:
            sets["reason"] = reason
        with self._txn():
            self.db.execute(f"UPDATE {table} SET {', '.join(f'{k}=?' for k in sets)} WHERE {column}=?",
                            (*sets.values(), key))
            self.db.execute("INSERT INTO events(at, series, what) VALUES (?,?,?)",
                            (time.time(), logged_as, f"{state}: {reason or ''}".rstrip(": ")))

    def events(self, key: str) -> list[tuple[float, str]]:
        return list(self.db.execute("SELECT at, what FROM events WHERE series=? ORDER BY at", (key,)))

    def replies_since(self, when: float) -> tuple[int, int]:
        """Replies sent (or whose sending may have gone out) since ``when``,
        to series and to reproducers asked for, and their recipients."""
        n, r = 0, 0
        for table in ("series", "asks"):
            a, b = self.db.execute(f"SELECT COUNT(*), COALESCE(SUM(recipients), 0) FROM {table} "
                                   "WHERE replied_at >= ?", (when,)).fetchone()
            n, r = n + a, r + b
        return n, r

    # -- reproducers asked for

    def asks(self, *states: str) -> list[Ask]:
        q, args = "SELECT * FROM asks", ()
        if states:
            q += f" WHERE state IN ({','.join('?' * len(states))})"
            args = states
        cur = self.db.execute(q + " ORDER BY asked, rowid", args)      # as they arrived
        names = [d[0] for d in cur.description]
        return [Ask(**dict(zip(names, r))) for r in cur.fetchall()]

    def move_ask(self, msgid: str, state: str, reason: str | None = None, **fields: Any) -> None:
        """A reproducer asked for to ``state``, and the move logged."""
        assert state in ASK_STATES, state
        self._moved("asks", "msgid", msgid, f"ask:{msgid}", state, reason, fields)

    def runs_since(self, when: float, sender: str | None = None) -> int:
        """Reproducer runs started since ``when`` (by ``sender``)."""
        q, args = "SELECT COUNT(*) FROM asks WHERE started >= ?", [when]
        if sender is not None:
            q += " AND sender = ?"
            args.append(sender)
        return self.db.execute(q, args).fetchone()[0]

    def in_thread(self, ids: Iterable[str]) -> Tracked | None:
        """The newest series whose cover or thread root is one of ``ids``."""
        ids = list(ids)
        if not ids:
            return None
        marks = ",".join("?" * len(ids))
        cur = self.db.execute(f"SELECT * FROM series WHERE anchor IN ({marks}) OR root IN ({marks}) "
                              "ORDER BY version DESC, first_seen DESC LIMIT 1", (*ids, *ids))
        row = cur.fetchone()
        return Tracked(**dict(zip([d[0] for d in cur.description], row))) if row else None

    def _txn(self):
        return _Txn(self.db)


class _Txn:
    """BEGIN IMMEDIATE ... COMMIT, ROLLBACK on any exception."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type, exc, tb) -> None:
        self.db.execute("ROLLBACK" if exc_type else "COMMIT")


def _message(d: dict[str, Any]) -> Message:
    for k in ("recipients", "refs", "files"):
        d[k] = tuple(d.get(k, ()))
    return Message(**d)

"""`foliofarm watch` end to end: a real public-inbox served on loopback, the
watcher following it over HTTP, real series runs (one cell, for speed), the
watcher killed with SIGKILL mid-run and started again, replies read back
through public-inbox, SMTP delivery to a real server (aiosmtpd), and the status
page opened in headless Chromium."""

from __future__ import annotations

import calendar
import json
import mailbox
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from email import message_from_bytes
from email.policy import default
from pathlib import Path

import pytest

from foliofarm.report import kcidb
from foliofarm.watch import config as watch_config, reply, state

sys.path.insert(0, str(Path(__file__).resolve().parent))
from inbox import LIST, Inbox, example_series, free_port, mail, needs_public_inbox  # noqa: E402

pytestmark = [pytest.mark.integration, needs_public_inbox]
ROOT = Path(__file__).resolve().parent.parent
# benign.mbox's own date: its v2 below keeps author, date and text, so the
# series commit (and its cached 4K kernel) is the one the other tests build
BENIGN_DATE = calendar.timegm((2026, 11, 22, 10, 0, 0))
NET_PATCH = ("tidy a comment\n\nSigned-off-by: X <x@example.org>\n---\n"
             "diff --git a/net/ipv4/tcp.c b/net/ipv4/tcp.c\n--- a/net/ipv4/tcp.c\n"
             "+++ b/net/ipv4/tcp.c\n@@ -1,3 +1,3 @@\n a\n-b\n+c\n d\n")
RUN = ["--cells", "4k-ext4", "--checks", "exec-text,mmap-miss"]


def post_benign(ib: Inbox, version: int, tag: str, date: float, frm: str, reply_to=()) -> list[str]:
    ids: list[str] = []
    for i, (subject, body) in enumerate(example_series("benign.mbox")):
        if version > 1:
            subject = subject.replace("[PATCH", f"[PATCH v{version}")
        refs = [*reply_to, *ids[:1]]                 # the cover answers v1; patches the cover
        ids.append(f"{tag}.{i}@example.org")
        ib.post(mail(subject, ids[-1], body, date=date, frm=frm, cc="Reviewer <rev@example.org>",
                     reply_to=refs))
    return ids


def config(tmp: Path, **series) -> Path:
    days = (time.time() - BENIGN_DATE) / 86400 + 2
    # the page shows every series these tests post (v1 is 4 days older than
    # BENIGN_DATE), whatever day they run: fixed dates leave the default 14 days
    page_days = days + 5
    lines = ["[interest]", f'lists = ["{LIST}"]',
             "[series]", f"backlog_days = {days:.1f}", "settle_minutes = 0",
             *(f"{k} = {v}" for k, v in series.items()),
             "[status]", f"days = {page_days:.1f}",
             "[reply]", 'from = "foliofarm bot <bot@farm.example>"', 'domain = "farm.example"',
             'owner = "Farm Owner <owner@farm.example>"',
             # these series pass every check: a reply all the same; and to one that does not apply
             'when = "always"', "on_not_applied = true"]      # [reply] last: tests add to it
    path = tmp / "watch.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def watch(url: str, st: Path, cfg: Path, *extra: str, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "foliofarm", "watch", url, "--state", str(st),
                             "--config", str(cfg), *RUN, *extra], cwd=ROOT,
                            stdout=open(st.parent / "watch.log", "ab"), stderr=subprocess.STDOUT, **kw)


def wait_for(what, timeout: float, why: str):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if got := what():
            return got
        time.sleep(0.5)
    raise AssertionError(f"waited {timeout:.0f}s for {why}")


def row(st: Path, subject_part: str) -> state.Tracked | None:
    if not (st / "watch.sqlite").exists():
        return None
    s = state.State(st)
    try:
        return next((r for r in s.rows() if subject_part in r.subject), None)
    finally:
        s.close()


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:                                          # a zombie is gone for our purposes
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def leftovers(pid: int) -> list[str]:
    """Processes of a run (its QEMU guests name their disks after its pid)."""
    out = []
    for p in Path("/proc").glob("[0-9]*"):
        try:
            cmd = (p / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if f"foliofarm-{pid}-" in cmd:
            out.append(cmd[:200])
    return out


def test_a_v2_posted_while_watching_is_tested_once_across_a_kill_and_answered_in_its_thread(tmp_path):
    ib = Inbox(tmp_path / "pi")
    dev = "A. Developer <dev@example.org>"           # an address a reply may go to
    # older than the backlog window (2 days before v2), within the first clone (a week more)
    v1 = post_benign(ib, 1, "v1", BENIGN_DATE - 4 * 86400, dev)
    ib.post(mail("Re: [PATCH 0/1] mm/filemap: one helper for the mmap_miss decrement", "review@example.org",
                 "> one helper\n\nPlease post a v2 with the comment fixed.\n", reply_to=v1[:1],
                 date=BENIGN_DATE - 3 * 86400))
    ib.post(mail("[PATCH] net: tcp: tidy a comment", "net@example.org", NET_PATCH, date=time.time() - 3600))
    url = ib.serve()
    st, cfg = tmp_path / "state", config(tmp_path)
    first = None
    try:
        first = watch(url, st, cfg, "--poll", "1")
        net = wait_for(lambda: row(st, "net: tcp"), 120, "the first pass")
        assert net.state == "ignored" and "net/ipv4/tcp.c" in net.reason
        old = wait_for(lambda: row(st, "[PATCH 0/1]"), 30, "v1 recorded")
        assert old.state == "old"
        v2 = post_benign(ib, 2, "v2", BENIGN_DATE, dev, reply_to=v1[:1])
        testing = wait_for(lambda: (r := row(st, "[PATCH v2 0/1]")) and r.state == "testing" and r.pid and r,
                           120, "the v2 under test")
        run_log = st / "runs" / testing.key / "attempt-1.log"
        wait_for(lambda: run_log.exists() and "results in" in run_log.read_text(), 300, "the run started")
        first.send_signal(signal.SIGKILL)                    # the watcher alone, mid-run
        first.wait(10)
        wait_for(lambda: not alive(testing.pid), 30, "the orphaned run to die with its watcher")
        wait_for(lambda: not leftovers(testing.pid), 60, "the killed run's guests to go")

        again = watch(url, st, cfg, "--once")
        assert again.wait(3600) == 0, (tmp_path / "watch.log").read_text()[-3000:]
        done = row(st, "[PATCH v2 0/1]")
        assert (done.state, done.attempts, done.outcome) == ("replied", 2, "judged")
        assert done.page_verdicts()["4k"][0] == "pass"
        s = state.State(st)
        assert any("stopped with the watcher" in w for _, w in s.events(done.key))
        s.close()

        box = mailbox.Maildir(st / "outbox")
        assert len(box) == 1
        sent = message_from_bytes(box.get_bytes(box.keys()[0]), policy=default)
        assert sent["In-Reply-To"] == f"<{v2[0]}>" and sent["Message-ID"] == f"<{done.reply_id}>"
        assert sent["Subject"] == "Re: [PATCH v2 0/1] mm/filemap: one helper for the mmap_miss decrement"
        # To the author, Cc the followed list alone (cc = "lists"): not the reviewer
        assert sent["To"].addresses[0].addr_spec == "dev@example.org"
        assert sent["Cc"] == LIST and "rev@example.org" not in str(sent)
        body = sent.get_content()
        assert "foliofarm tested v2 of this series" in body and "Verdicts:" in body
        assert f"b4 am -o - {v2[0]} > series.mbox" in body and "--cells 4k-ext4" in body

        # the list delivers the reply: public-inbox threads it under the v2 cover
        ib.post(box.get_bytes(box.keys()[0]))
        thread = ib.thread(v2[0]).decode(errors="replace")
        assert f"Message-ID: <{done.reply_id}>" in thread.replace("Message-Id", "Message-ID")
        assert thread.index(v2[0]) < thread.index(done.reply_id)
        # a third pass reads the reply back and does nothing twice
        third = watch(url, st, cfg, "--once")
        assert third.wait(600) == 0
        assert len(mailbox.Maildir(st / "outbox")) == 1
        again_row = row(st, "[PATCH v2 0/1]")
        assert (again_row.state, again_row.attempts) == ("replied", 2)
        s = state.State(st)
        assert s.has_message(done.reply_id)
        s.close()
        page_in_chromium(st / "index.html", v2_subject="[PATCH v2 0/1] mm/filemap")
        # the run, as KernelCI would take it: the checkout names the thread
        data = kcidb.convert([kcidb.read(Path(done.run_dir))])
        [checkout] = [c for c in data["checkouts"] if c["misc"]["kernel"].endswith("+series")]
        assert checkout["message_id"] == v2[0]
        assert re.fullmatch(r"[0-9a-f]{64}", checkout["patchset_hash"])
    finally:
        if first is not None and first.poll() is None:
            first.kill()
        ib.stop()


def page_in_chromium(page: Path, v2_subject: str) -> None:
    """The status page as a person's browser shows it: Debian's Chromium,
    headless, the DOM it built from the file."""
    chromium = shutil.which("chromium")
    assert chromium, "Debian's chromium is not installed (make setup)"
    p = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom",
                        page.as_uri()], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    dom = p.stdout
    rows = re.findall(r"<tr>(.*?)</tr>", dom, re.S)
    v2 = next(r for r in rows if v2_subject in r)
    assert "replied" in v2 and 'class="v-pass"' in v2 and "report.html" in v2
    assert any("net: tcp: tidy a comment" in r and "ignored" in r for r in rows)
    assert any("[PATCH 0/1] mm/filemap" in r and ">old<" in r for r in rows)


def test_a_series_that_does_not_apply_gets_a_short_reply_over_smtp(tmp_path):
    from aiosmtpd.controller import Controller
    from aiosmtpd.handlers import Message as Handler

    got: list = []

    class Keep(Handler):
        def handle_message(self, message):
            got.append(message)

    ib = Inbox(tmp_path / "pi")
    bad = ("a change to a function that is not there\n\nSigned-off-by: D <dev@example.org>\n---\n"
           "diff --git a/mm/filemap.c b/mm/filemap.c\n--- a/mm/filemap.c\n+++ b/mm/filemap.c\n"
           "@@ -1,3 +1,3 @@\n-no such line in filemap.c\n+a new line\n context that is not there\n"
           " nor this\n")
    ib.post(mail("[PATCH] mm/filemap: a stale patch", "stale@example.org", bad))
    port = free_port()
    smtp = Controller(Keep(), hostname="127.0.0.1", port=port)
    smtp.start()
    try:
        st = tmp_path / "state"
        cfg = config(tmp_path)
        with open(cfg, "a") as f:
            f.write(f"[smtp]\nhost = \"127.0.0.1\"\nport = {port}\n"
                    "starttls = false\ninterval_seconds = 0\n")
        p = watch(str(ib.dir), st, cfg, "--once", "--send")
        assert p.wait(900) == 0, (tmp_path / "watch.log").read_text()[-3000:]
    finally:
        smtp.stop()
    r = row(st, "a stale patch")
    assert (r.state, r.outcome) == ("replied", "not-applied")
    assert len(got) == 1
    m = got[0]
    assert m["In-Reply-To"] == "<stale@example.org>" and m["X-RcptTo"] and "dev@example.org" in m["X-RcptTo"]
    text = m.get_payload(decode=True).decode()
    assert "could not apply this series" in text and "does not apply" in text and "a stale patch" in text
    assert len(mailbox.Maildir(st / "outbox")) == 1                # the copy kept
    assert m["Message-ID"] == f"<{reply.reply_id(r.key, watch_config.load(cfg))}>"


def test_hostile_mail_leaves_the_watcher_up_and_the_good_series_answered_once(tmp_path):
    """One pass over an inbox holding, besides one good mm series (its cover Cc'd to
    5,000 addresses): a forged patch 1 of it from another sender, a forged
    incomplete v99 of it, a series whose From is one quote, and a series whose
    build loops forever. The watcher stays up; the good series is tested on its
    own patch and answered once, to at most 10 addresses; the looping build is
    stopped at its (small) limit with the reason in results.json and on the
    status page; the From-less series is `failed` with its reason."""
    from foliofarm.intake import source
    from foliofarm.paths import cache_dir
    from test_hostile_series import diff

    tree = source.resolve("debian:7.3", cache_dir()).tree
    ib = Inbox(tmp_path / "pi")
    dev = "A. Developer <dev@example.org>"
    # folded, as mail is, and under public-inbox's (and postfix's) 100 kB of header
    many = ",\n ".join(f"c{i}@x.example" for i in range(5000))
    ids = []
    for i, (subject, body) in enumerate(example_series("benign.mbox")):
        ids.append(f"good.{i}@example.org")
        ib.post(mail(subject, ids[-1], body, date=BENIGN_DATE + i, frm=dev, reply_to=ids[:1] if i else [],
                     cc=many if i == 0 else ""))
    _, body = example_series("benign.mbox")[1]
    evil = "Mallory <mallory@evil.example>"
    # later Dates than the real ones: arrival, not Date, decides
    ib.post(mail("[PATCH 1/1] mm/filemap: one helper for the mmap_miss decrement", "forged.1@evil.example",
                 body.replace("mmap_miss", "mmap_hit"), frm=evil, date=BENIGN_DATE + 600, reply_to=ids[:1]))
    ib.post(mail("[PATCH v99 1/2] mm/filemap: one helper for the mmap_miss decrement", "v99.1@evil.example",
                 body, frm=evil, date=BENIGN_DATE + 700, reply_to=ids[:1]))
    stale = ("a change to a function that is not there\n\n---\n"
             "diff --git a/mm/filemap.c b/mm/filemap.c\n--- a/mm/filemap.c\n+++ b/mm/filemap.c\n"
             "@@ -1,3 +1,3 @@\n-no such line in filemap.c\n+a new line\n context that is not there\n"
             " nor this\n")
    ib.post(mail("[PATCH] mm/filemap: from no one", "quote@example.org", stale, frm='"',
                 date=BENIGN_DATE + 800))
    loop_mk = (tree / "mm/Makefile").read_text() + "\n$(shell while true; do sleep 1; done)\n"
    ib.post(mail("[PATCH] mm: a build that never ends", "loop@example.org",
                 "make waits forever\n\nSigned-off-by: L <loop@example.org>\n---\n"
                 + diff(tree, {"mm/Makefile": loop_mk}), frm="Looper <loop@example.org>",
                 date=BENIGN_DATE + 900))
    st, cfg = tmp_path / "state", config(tmp_path, build_minutes=2)
    with open(cfg, "a") as f:
        # [reply]: the looping series is not answered; a reply-all, to be capped
        f.write('on_not_built = false\ncc = "all"\n')
    p = watch(str(ib.dir), st, cfg, "--once")
    assert p.wait(3600) == 0, (tmp_path / "watch.log").read_text()[-3000:]

    good = row(st, "[PATCH 0/1] mm/filemap")
    assert (good.state, good.outcome, good.attempts) == ("replied", "judged", 1), good.reason
    doc = json.loads((Path(good.run_dir) / "results.json").read_text())
    assert [p["message_id"] for p in doc["series"]["patches"]] == [ids[1]]   # its own patch 1
    box = mailbox.Maildir(st / "outbox")
    assert len(box) == 1
    sent = message_from_bytes(box.get_bytes(box.keys()[0]), policy=default)
    to = [a.addr_spec for h in ("To", "Cc") for a in (sent[h].addresses if sent[h] else ())]
    # a reply-all to the 5,001 is capped at 10: the author, the list first, then 8 more
    assert to[0] == "dev@example.org" and to[1] == LIST and len(to) == 10
    assert len(str(sent["References"]).split()) <= 2

    quote = row(st, "from no one")
    assert quote.state == "failed" and "no address a reply may go to" in quote.reason
    looped = row(st, "a build that never ends")
    assert looped.outcome == "not-built", looped.reason
    ldoc = json.loads((Path(looped.run_dir) / "results.json").read_text())
    [k] = [k for k in ldoc["kernels"] if k["side"] == "series"]
    assert k["build_failed"] and "stopped at a limit" in k["error"] and "120 s" in k["error"]
    page = (st / "index.html").read_text()
    assert "no address a reply may go to" in page and "stopped at a limit" in page
    s = state.State(st)
    v99 = [r for r in s.rows() if r.version == 99]
    assert all(r.state in ("waiting", "incomplete") for r in v99)
    s.close()

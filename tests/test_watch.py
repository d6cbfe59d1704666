"""The watcher's parts on real mail and a real public-inbox (no kernel runs:
tests/test_watch_runs.py has those)."""

from __future__ import annotations

import json
import mailbox
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from foliofarm.watch import archive, config, reply, state, status, tester, threads
from foliofarm.watch.loop import assess

sys.path.insert(0, str(Path(__file__).resolve().parent))
from inbox import LIST, Inbox, example_series, mail, needs_public_inbox, post_series  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
NOW = time.time()
NET_PATCH = ("tidy a comment\n\nSigned-off-by: X <x@example.org>\n---\n"
             "diff --git a/net/ipv4/tcp.c b/net/ipv4/tcp.c\n--- a/net/ipv4/tcp.c\n"
             "+++ b/net/ipv4/tcp.c\n@@ -1,3 +1,3 @@\n a\n-b\n+c\n d\n")


def described(raw: bytes, max_bytes: int = 1 << 20) -> threads.Message:
    return threads.describe(raw, "0" * 40, NOW, max_bytes)


def benign(version: int = 1, tag: str = "v1", reply_to=()) -> list[threads.Message]:
    msgs, ids = [], []
    for i, (subject, body) in enumerate(example_series("benign.mbox")):
        if version > 1:
            subject = subject.replace("[PATCH", f"[PATCH v{version}")
        msgid = f"{tag}.{i}@example.org"
        msgs.append(described(mail(subject, msgid, body, date=NOW - 600 + i,
                                   reply_to=[*reply_to, *ids[:1]])))
        ids.append(msgid)
    return msgs


# -- messages and series


def test_a_series_is_read_as_its_cover_and_patches_with_the_files_they_touch():
    cover, patch = benign()
    assert cover.kind == threads.COVER and patch.kind == threads.PATCH
    assert (patch.version, patch.n, patch.total, patch.positioned) == (1, 1, 1, True)
    assert patch.files == ("mm/filemap.c",)
    assert patch.root == cover.msgid == "v1.0@example.org"
    assert threads.key_of(cover) == threads.key_of(patch)
    v = threads.group([patch, cover])[threads.key_of(cover)]
    assert v.complete and v.anchor is cover and v.files == ["mm/filemap.c"]
    assert [m.msgid for m in v.messages] == [cover.msgid, patch.msgid]


def test_replies_and_plain_mail_are_no_series_and_odd_headers_do_not_break_reading():
    r = described(mail("Re: [PATCH 1/3] mm: x", "r@x", "> quoted\nok", reply_to=["a@x"]))
    assert r.kind == threads.REPLY and not r.part
    o = described(mail("mm: a question", "q@x", "hello"))
    assert o.kind == threads.OTHER
    raw = b"From: nobody\nSubject: [PATCH] x\n\nno diff here\n"         # no Message-ID, no Date
    m = described(raw)
    assert m.kind == threads.NODIFF and m.msgid.endswith("@no-message-id") and m.date == NOW
    enc = described(mail("=?utf-8?q?=5BPATCH_v3_2/5=5D_mm=3A_caf=C3=A9?=", "odd id with spaces@x",
                         "x"))
    assert (enc.subject, enc.version, enc.n, enc.total) == ("[PATCH v3 2/5] mm: café", 3, 2, 5)


def test_a_message_over_the_size_limit_is_recorded_not_decoded():
    body = NET_PATCH + "+" * 5000 + "\n"
    m = described(mail("[PATCH 1/2] mm: big", "big@x", body), max_bytes=4096)
    assert m.kind == threads.TOO_LARGE and "over the 4 kB" in m.why and m.part


def test_a_lone_patch_in_someone_elses_thread_is_a_series_of_its_own():
    a = described(mail("[PATCH] mm: fix it", "fix1@x", NET_PATCH, reply_to=["bug@x"]))
    b = described(mail("[PATCH] mm: fix it another way", "fix2@x", NET_PATCH, reply_to=["bug@x"]))
    assert a.root == b.root == "bug@x" and threads.key_of(a) != threads.key_of(b)


CFG = config.load()


def test_assess_each_state_with_its_reason():
    cover, patch = benign()
    key = threads.key_of(cover)
    whole = threads.group([cover, patch])[key]
    assert assess(whole, CFG, NOW, NOW - 3600, NOW - 3600) == ("queued", "touches mm/filemap.c")
    assert assess(whole, CFG, NOW, NOW - 60, NOW - 60) == ("waiting", "settling")
    assert assess(whole, CFG, NOW + 10 * 86400, NOW, NOW)[0] == "old"
    part = threads.group([cover])[key]
    assert assess(part, CFG, NOW, NOW - 60, NOW - 60) == ("waiting", "0 of 1 patches so far")
    assert assess(part, CFG, NOW, NOW - 3 * 3600, NOW - 3 * 3600) == ("incomplete",
                                                                    "1/1 missing after 2 h")
    net = described(mail("[PATCH] net: tcp: tidy a comment", "n@x", NET_PATCH))
    state_, why = assess(threads.group([net])[threads.key_of(net)], CFG, NOW, NOW - 3600, NOW - 3600)
    assert state_ == "ignored" and "net/ipv4/tcp.c" in why
    listed = CFG.model_copy(deep=True)
    listed.interest.lists = ["other-list@example.org"]
    assert assess(whole, listed, NOW, NOW - 3600, NOW - 3600) == ("ignored", "not sent to other-list@example.org")


def test_a_2000_patch_series_is_refused_without_a_storm():
    cover = described(mail("[PATCH 0/2000] mm: everything", "huge.0@x", "cover"))
    parts = [threads.Message(msgid=f"huge.{n}@x", blob="0", date=NOW, subject=f"[PATCH {n}/2000] mm: p{n}",
                             author="a <a@x>", recipients=(LIST,), refs=("huge.0@x",), kind=threads.PATCH,
                             n=n, total=2000, positioned=True, files=("mm/filemap.c",), part=True)
             for n in range(1, 2001)]
    v = threads.group([cover, *parts])[threads.key_of(cover)]
    assert assess(v, CFG, NOW, NOW - 3600, NOW - 3600) == ("refused", "2000 patches, over the 50 the watcher takes")


# -- the state


def test_messages_and_the_cursor_land_together_and_survive_a_reopen(tmp_path):
    s = state.State(tmp_path)
    cover, patch = benign()
    key = threads.key_of(cover)
    assert s.ingest("0", "c1", [(cover, key, b"raw cover"), (patch, key, b"raw patch")], NOW) == 2
    assert s.ingest("0", "c2", [(cover, key, b"again")], NOW) == 0          # seen before: kept
    with pytest.raises(RuntimeError):
        with s._txn():
            s.db.execute("INSERT INTO cursors VALUES ('1', 'x')")
            raise RuntimeError("killed mid-way")
    s.close()
    s = state.State(tmp_path)
    assert s.cursors() == {"0": "c2"} and s.raw(cover.msgid) == b"raw cover"
    assert {m.msgid for m in s.messages(key)} == {cover.msgid, patch.msgid}
    row = state.Tracked(key, cover.msgid, cover.root, cover.title, cover.subject, cover.author, 1, 1,
                    NOW, NOW, NOW, "queued", "touches mm/filemap.c")
    s.put(row)
    s.move(key, "testing", "attempt 1", attempts=1, pid=123)
    got = s.get(key)
    assert (got.state, got.attempts, got.pid, got.reason) == ("testing", 1, 123, "attempt 1")
    assert [w for _, w in s.events(key)] == ["testing: attempt 1"]


# -- the archive


@needs_public_inbox
def test_the_archive_is_read_incrementally_from_a_real_inbox_local_and_served(tmp_path):
    ib = Inbox(tmp_path / "pi")
    ids = post_series(ib, "benign.mbox", 1, "v1", date=NOW - 60)
    local = archive.Archive(str(ib.dir), tmp_path / "mirror-local")
    [epoch] = local.epochs({}, 2)
    batches = list(local.read(epoch, None))
    got = [threads.describe(raw, blob, NOW, 1 << 20).msgid for b in batches for blob, raw in b.messages]
    assert got == ids
    cursor = batches[-1].commit
    assert list(local.read(epoch, cursor)) == []
    ib.post(mail("Re: [PATCH 0/1] x", "rev@example.org", "ok", reply_to=ids[:1]))
    [b] = list(local.read(epoch, cursor))
    assert [threads.describe(r, o, NOW, 1 << 20).msgid for o, r in b.messages] == ["rev@example.org"]
    url = ib.serve()
    try:
        remote = archive.Archive(url, tmp_path / "mirror")
        [e] = remote.epochs({}, 2)
        assert e.gitdir == tmp_path / "mirror" / "0.git"
        assert len([m for b in remote.read(e, None) for m in b.messages]) == 3
        ib.post(mail("mm: later", "later@example.org", "x"))
        [e] = remote.epochs({"0": cursor}, 2)                         # fetched again
        assert [threads.describe(r, o, NOW, 1 << 20).msgid for b in remote.read(e, b.commit)
                for o, r in b.messages] == ["later@example.org"]
    finally:
        ib.stop()
    dead = archive.Archive(url, tmp_path / "mirror2", timeout=2)
    with pytest.raises(archive.Unreachable):
        dead.epochs({}, 2)


def test_a_folder_that_is_no_archive_is_refused_with_what_to_give(tmp_path):
    with pytest.raises(Exception, match="holds no public-inbox archive"):
        archive.Archive(str(tmp_path), tmp_path / "m")
    with pytest.raises(Exception, match="neither an http"):
        archive.Archive(str(tmp_path / "nope"), tmp_path / "m")


# -- a watcher's pass, no kernel run


@needs_public_inbox
def test_one_pass_records_every_series_with_its_state_and_reason(tmp_path):
    ib = Inbox(tmp_path / "pi")
    ib.post(mail("[PATCH] net: tcp: tidy a comment", "net@example.org", NET_PATCH))
    ib.post(mail("[PATCH 1/2] mm: half a series", "half.1@example.org",
                 NET_PATCH.replace("net/ipv4/tcp.c", "mm/filemap.c")))
    ib.post(mail("[PATCH 0/2000] mm: all of it", "huge.0@example.org", "cover"))
    ib.post(mail("[PATCH 1/2000] mm: first", "huge.1@example.org", NET_PATCH, reply_to=["huge.0@example.org"]))
    ib.post(mail("[PATCH] mm: enormous", "enormous@example.org", NET_PATCH + "+x\n" * 3000))
    ib.post(mail("Re: [PATCH] net: tcp: tidy a comment", "rev@example.org", "ok", reply_to=["net@example.org"]))
    cfg = tmp_path / "watch.toml"
    cfg.write_text("[series]\nmax_message_kb = 8\n")
    st = tmp_path / "state"
    p = subprocess.run([sys.executable, "-m", "foliofarm", "watch", str(ib.dir), "--once", "--state", str(st),
                        "--config", str(cfg), "--cells", "4k-ext4", "--checks", "exec-text"],
                       capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert p.returncode == 0, p.stderr
    rows = {r.subject: r for r in state.State(st).rows()}
    assert rows["[PATCH] net: tcp: tidy a comment"].state == "ignored"
    assert (rows["[PATCH 1/2] mm: half a series"].state, rows["[PATCH 1/2] mm: half a series"].reason) == (
        "waiting", "1 of 2 patches so far")
    assert rows["[PATCH 0/2000] mm: all of it"].state == "refused"
    assert rows["[PATCH] mm: enormous"].state == "refused" and "over the 8 kB" in rows["[PATCH] mm: enormous"].reason
    assert len(rows) == 4                                    # the reply made no series
    page = (st / "index.html").read_text()
    assert "4 series seen" in page and "mm: half a series" in page and "1 of 2 patches so far" in page
    # the rest of the half series arrives: now complete, and settling
    ib.post(mail("[PATCH 2/2] mm: the other half", "half.2@example.org",
                 NET_PATCH.replace("net/ipv4/tcp.c", "mm/readahead.c"), reply_to=["half.1@example.org"]))
    cfg.write_text("[series]\nmax_message_kb = 8\nsettle_minutes = 60\n")
    p = subprocess.run([sys.executable, "-m", "foliofarm", "watch", str(ib.dir), "--once", "--state", str(st),
                        "--config", str(cfg), "--cells", "4k-ext4", "--checks", "exec-text"],
                       capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert p.returncode == 0, p.stderr
    half = {r.subject: r for r in state.State(st).rows()}["[PATCH 1/2] mm: half a series"]
    assert (half.state, half.reason) == ("waiting", "settling")


# -- the reply and the status page


def outcome_of(tmp_path: Path, doc: str) -> tester.Tested:
    run = tmp_path / "results" / "20261126-000000-1"
    run.mkdir(parents=True)
    shutil.copy(DATA / "results" / doc, run / "results.json")
    (tmp_path / "results" / "latest").symlink_to(run.name)
    return tester.tested(0, tmp_path / "results", tmp_path / "none.log")


def test_a_recorded_run_gives_its_verdict_per_page_size(tmp_path):
    out = outcome_of(tmp_path, "benign-4k.json")
    assert out.kind == tester.JUDGED and set(out.pages) == {"4k"} and out.pages["4k"][0] == "pass"
    broken = outcome_of(tmp_path / "b", "no-build-4k.json")
    assert broken.kind == tester.NOT_BUILT and "does not build with 4k" in broken.said


def test_the_farm_refusing_a_series_is_told_by_its_own_words(tmp_path):
    log = tmp_path / "run.log"
    log.write_text("[03:00:00] results in x\nfoliofarm: patch 1/1 'mm: x' (0001.eml) does not apply to "
                   "linux-source-7.3:\n  error: mm/filemap.c: patch does not apply\n")
    out = tester.tested(2, tmp_path, log)
    assert out.kind == tester.NOT_APPLIED and out.said.startswith("patch 1/1 'mm: x'")
    assert tester.tested(3, tmp_path, log).kind == tester.INFRA
    log.write_text("foliofarm: /cache/src/linux is still on foliofarm-work from an interrupted run\n")
    assert tester.tested(2, tmp_path, log).kind == tester.INFRA       # not the author's fault


def test_the_reply_threads_under_the_cover_and_goes_to_the_author_and_the_list(tmp_path):
    cover, patch = benign(2, "v2", reply_to=["v1.0@example.org"])
    txt = ("foliofarm: 7.3 vs 7.3+series\nVerdicts: 12 pass\n\nReproduce:\n  $ foliofarm run "
           "--series /home/farm/x\n")
    body = reply.judged_body(txt, 2, 1, cover, CFG.run.argv() + ["--cells", "4k-ext4"])
    followed = CFG.model_copy(deep=True)
    followed.interest.lists = [LIST]                           # cc = "lists", the default
    msg = reply.compose(cover, "abc", body, followed)
    assert msg["Subject"] == "Re: [PATCH v2 0/1] mm/filemap: one helper for the mmap_miss decrement"
    assert msg["In-Reply-To"] == "<v2.0@example.org>"
    assert msg["References"] == "<v1.0@example.org> <v2.0@example.org>"
    assert msg["To"].addresses[0].addr_spec == "dev@example.org" and msg["Cc"] == LIST
    assert msg["Message-ID"] == "<foliofarm-abc@foliofarm.localhost>"
    text = msg.get_content()
    assert "Verdicts: 12 pass" in text and "/home/farm" not in text
    assert "b4 am -o - v2.0@example.org > series.mbox" in text
    assert "foliofarm run --series series.mbox --kernel debian:7.3 --cells 4k-ext4" in text
    box = tmp_path / "outbox"
    reply.to_outbox(box, msg)
    reply.to_outbox(box, msg)                                  # the same reply: written once
    assert len(mailbox.Maildir(box)) == 1 and reply.in_outbox(box, "foliofarm-abc@foliofarm.localhost")
    assert reply.recipients(cover, CFG) == ('"A. Developer" <dev@example.org>', [])   # no list followed


def test_the_status_page_lists_each_series_with_its_verdicts_and_links(tmp_path):
    s = state.State(tmp_path)
    run = tmp_path / "runs" / "k1" / "r"
    run.mkdir(parents=True)
    (run / "report.html").write_text("<p>report</p>")
    s.put(state.Tracked("k1", "a@x", "a@x", "mm: x", "[PATCH v2 0/3] mm: x <b>", "Dev <d@x>", 2, 3, NOW, NOW,
                    NOW, "replied", "touches mm/filemap.c", run_dir=str(run),
                    verdicts=json.dumps({"4k": ["regression", 2], "16k": ["pass", 12]})))
    s.put(state.Tracked("k2", "b@x", "b@x", "net: y", "[PATCH] net: y", "N <n@x>", 1, 1, NOW, NOW, NOW - 5,
                    "ignored", "touches no path of interest (net/core/dev.c)"))
    page = status.render(s, tmp_path, "https://lore.example/linux-mm")
    assert "2 series seen in the last 14 days (1 ignored, 1 replied)" in page
    assert "[PATCH v2 0/3] mm: x &lt;b&gt;" in page and 'href="https://lore.example/linux-mm/a@x/"' in page
    assert '<td class="v-regression">regression &times;2</td>' in page and "pass &times;12" in page
    assert 'href="runs/k1/r/report.html"' in page and "results.json" not in page
    assert page.index("mm: x") < page.index("net: y")                  # newest first


def test_the_watch_config_is_checked_like_the_other_data_files(tmp_path):
    bad = tmp_path / "w.toml"
    bad.write_text("[reply]\ncc = 'everyone'\n")
    with pytest.raises(Exception, match=r"w.toml: reply.cc"):
        config.load(bad)
    bad.write_text("[serie]\n")
    with pytest.raises(Exception, match="serie"):
        config.load(bad)
    assert config.load().run.argv() == ["--kernel", "debian:7.3"]


def test_watch_is_a_command_with_its_own_help():
    p = subprocess.run([sys.executable, "-m", "foliofarm", "watch", "--help"], capture_output=True,
                       text=True, cwd=ROOT)
    assert p.returncode == 0 and "--once" in p.stdout and "--send" in p.stdout
    p = subprocess.run([sys.executable, "-m", "foliofarm", "watch", "/nonexistent/inbox", "--once"],
                       capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 2 and "neither an http(s) URL nor a folder" in p.stderr


from hypothesis import given, settings, strategies as hs  # noqa: E402

SUBJECTS = [b"[PATCH 1/2] mm: x", b"[PATCH v2 0/3] mm: y", b"Re: [PATCH] z", b"=?utf-8?b?W1BBVENIXQ==?= q",
            b"[PATCH 3/0] odd", b"[RFC PATCH v99999999999999999999 1/1] big", b"", b"\xff\xfe[PATCH]"]


@given(hs.binary(max_size=3000), hs.sampled_from(SUBJECTS), hs.binary(max_size=80))
@settings(max_examples=120, deadline=None)
def test_whatever_a_list_carries_is_described_never_raised(body, subject, header):
    raw = (b"From: " + header + b"\nSubject: " + subject + b"\nMessage-ID: " + header +
           b"\nReferences: " + header + b"\nDate: " + header + b"\n\n" + body)
    m = threads.describe(raw, "1" * 40, NOW, 2048)
    assert m.kind in (threads.PATCH, threads.COVER, threads.REPLY, threads.OTHER, threads.NODIFF,
                      threads.MALFORMED, threads.TOO_LARGE)
    assert m.msgid and isinstance(threads.key_of(m), str)


@needs_public_inbox
def test_an_archive_that_cannot_be_reached_is_waited_out(tmp_path):
    from inbox import free_port
    port = free_port()
    url = f"http://127.0.0.1:{port}/linux-mm"
    st = tmp_path / "state"
    once = subprocess.run([sys.executable, "-m", "foliofarm", "watch", url, "--once", "--state", str(st)],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert once.returncode == 3 and "archive unreachable" in once.stderr
    ib = Inbox(tmp_path / "pi")
    ib.post(mail("[PATCH] net: tcp: tidy a comment", "net@example.org", NET_PATCH))
    log = open(tmp_path / "watch.log", "wb")
    w = subprocess.Popen([sys.executable, "-m", "foliofarm", "watch", url, "--poll", "0.5", "--state", str(st)],
                         cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    try:
        end = time.monotonic() + 120
        while "trying again" not in (tmp_path / "watch.log").read_text() and time.monotonic() < end:
            time.sleep(0.2)
        assert w.poll() is None, "the watcher stopped instead of waiting"
        ib.serve(port)                                     # the archive comes back
        while time.monotonic() < end and not [r for r in state.State(st).rows() if r.state == "ignored"]:
            time.sleep(0.5)
        assert [r.subject for r in state.State(st).rows()] == ["[PATCH] net: tcp: tidy a comment"]
        assert w.poll() is None
    finally:
        w.kill()
        w.wait()
        ib.stop()


@needs_public_inbox
def test_a_restart_requeues_a_test_under_way_and_never_resends_an_unsure_reply(tmp_path):
    from foliofarm.watch.loop import Watcher, WatchOptions
    ib = Inbox(tmp_path / "pi")
    st = tmp_path / "state"
    s = state.State(st)
    cover, _ = benign()
    gone = subprocess.Popen(["sleep", "300"], start_new_session=True)      # what a killed run left
    for key, st_, pid, rid in (("t", "testing", gone.pid, None), ("s1", "sending", None, "seen@x"),
                               ("s2", "sending", None, "unseen@x")):
        s.put(state.Tracked(key, cover.msgid, cover.root, cover.title, cover.subject, cover.author, 1, 1,
                        NOW, NOW, NOW, st_, "", attempts=1, pid=pid, reply_id=rid))
    s.ingest("0", "c", [(described(mail("Re: x", "seen@x", "ok")), None, None)], NOW)
    s.close()
    w = Watcher(WatchOptions(str(ib.dir), CFG, st, tmp_path / "outbox", once=True))
    w.recover()
    assert gone.wait(10) == -9                                   # its process group stopped
    assert (w.state.get("t").state, w.state.get("t").pid) == ("queued", None)
    assert w.state.get("s1").state == "replied"
    assert (w.state.get("s2").state, "not sent again" in w.state.get("s2").reason) == ("sending", True)
    with pytest.raises(Exception, match="another watcher"):
        Watcher(WatchOptions(str(ib.dir), CFG, st, tmp_path / "outbox", once=True))


def test_a_500_message_thread_makes_one_series_and_odd_ids_are_quoted_for_the_shell():
    cover, patch = benign()
    replies = [described(mail(f"Re: [PATCH 0/1] {cover.title}", f"r{i}@example.org", "> x\nok",
                              reply_to=[cover.msgid, *(f"r{j}@example.org" for j in range(max(0, i - 3), i))]))
               for i in range(500)]
    assert {r.kind for r in replies} == {threads.REPLY}
    assert list(threads.group([cover, patch, *replies])) == [threads.key_of(cover)]
    odd = described(mail("[PATCH] mm: x", "it's$(odd)id@x", NET_PATCH))
    line = reply.reproduce(odd, ["--kernel", "debian:7.3"])[1]
    assert line == "  $ b4 am -o - 'it'\\''s$(odd)id@x' > series.mbox"

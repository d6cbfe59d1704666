"""The list follower against mail written to hurt it: forged patches and
versions, headers that break parsers, a Cc list of thousands. The watcher's
real parts (threads, state, the loop's sorting and answering, the reply, the
status page) on real mail; the series runs themselves are in
tests/test_watch_runs.py."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

from foliofarm.watch import config, reply, state, status, threads
from foliofarm.watch.loop import Watcher, WatchOptions

sys.path.insert(0, str(Path(__file__).resolve().parent))
from inbox import LIST, Inbox, example_series, mail, needs_public_inbox  # noqa: E402

NOW = time.time()
DEV = "A. Developer <dev@example.org>"
EVIL = "Mallory <mallory@evil.example>"
DATA = Path(__file__).resolve().parent / "data"
EXAMPLES = int(os.environ.get("FOLIOFARM_FUZZ_EXAMPLES", "200"))


def described(raw: bytes) -> threads.Message:
    return threads.safely_described(raw, "0" * 40, NOW, 1 << 20)


def benign(frm: str = DEV, tag: str = "v1", version: int = 1, date: float = NOW - 600,
           cc: str = "") -> list[threads.Message]:
    msgs, ids = [], []
    for i, (subject, body) in enumerate(example_series("benign.mbox")):
        if version > 1:
            subject = subject.replace("[PATCH", f"[PATCH v{version}")
        ids.append(f"{tag}.{i}@example.org")
        msgs.append(described(mail(subject, ids[-1], body, date=date + i, frm=frm, cc=cc,
                                   reply_to=ids[:1] if i else [])))
    return msgs


def forged_patch_1(cover: threads.Message, date: float) -> threads.Message:
    """Patch 1 of ``cover``'s series, changed, from someone else, with a later Date."""
    _, body = example_series("benign.mbox")[1]
    body = body.replace("mmap_miss", "mmap_hit")
    return described(mail("[PATCH 1/1] mm/filemap: one helper for the mmap_miss decrement",
                          "forged@evil.example", body, frm=EVIL, date=date, reply_to=[cover.msgid]))


# -- a series is its author's


def test_a_forged_patch_1_from_another_sender_does_not_join_the_series():
    cover, patch = benign()
    forged = forged_patch_1(cover, date=NOW + 3600)          # a later Date than the real one
    v = threads.group([cover, patch, forged])[threads.key_of(cover)]
    assert v.patches[1] is patch and v.foreign == [forged] and v.sender == "dev@example.org"


def test_arrival_order_decides_not_the_date_a_mail_claims():
    cover, patch = benign()
    resend = described(mail("[PATCH 1/1] mm/filemap: one helper for the mmap_miss decrement",
                            "resend@example.org", example_series("benign.mbox")[1][1], frm=DEV,
                            date=NOW - 10 * 86400, reply_to=[cover.msgid]))
    # the RESEND arrived last, though it says it was written ten days before
    v = threads.group([cover, patch, resend])[threads.key_of(cover)]
    assert v.patches[1] is resend


def raws(frm: str = DEV, tag: str = "v1", version: int = 1, reply_to=()) -> list[bytes]:
    out, ids = [], []
    for i, (subject, body) in enumerate(example_series("benign.mbox")):
        if version > 1:
            subject = subject.replace("[PATCH", f"[PATCH v{version}")
        ids.append(f"{tag}.{i}@example.org")
        out.append(mail(subject, ids[-1], body, frm=frm, date=NOW - 600 + i,
                        reply_to=[*reply_to, *ids[:1]] if i else list(reply_to)))
    return out


def watching(tmp_path: Path, raws_: list[bytes], **reply) -> Watcher:
    """A watcher (--once, settle 0) over a fresh public-inbox holding ``raws_``,
    having read and sorted them; [reply] and [smtp] fields from ``reply``."""
    ib = Inbox(tmp_path / "pi")
    for raw in raws_:
        ib.post(raw)
    cfg = config.load()
    cfg.series.settle_minutes = 0
    cfg.reply.when = "always"          # these judged runs are stand-ins: a reply for each
    for k, v in reply.items():
        part, _, name = k.partition("__")
        setattr(getattr(cfg, part), name, v)
    w = Watcher(WatchOptions(str(ib.dir), cfg, tmp_path / "state", tmp_path / "out", once=True,
                             send=bool(reply.get("smtp__host")), log=open(os.devnull, "w")))
    w.inbox = ib
    sorted_now(w)
    return w


def sorted_now(w: Watcher) -> None:
    """One pass of reading and sorting (what one_pass does before testing)."""
    w.sort(w.read(), time.time())


@needs_public_inbox
def test_only_a_complete_newer_version_from_the_same_sender_supersedes(tmp_path):
    w = watching(tmp_path, raws())
    ib = w.inbox
    [v1] = w.state.rows()
    assert v1.state == "queued", v1.reason
    # a stranger's incomplete v99 and complete v98 in the same thread: nothing changes
    _, body = example_series("benign.mbox")[1]
    ib.post(mail("[PATCH v99 1/2] mm/filemap: one helper for the mmap_miss decrement",
                 "v99@evil.example", body, frm=EVIL, reply_to=["v1.0@example.org"]))
    ib.post(mail("[PATCH v98] mm/filemap: one helper for the mmap_miss decrement",
                 "v98@evil.example", body, frm=EVIL, reply_to=["v1.0@example.org"]))
    sorted_now(w)
    assert w.state.get(v1.key).state == "queued"
    # the author's own v2: its cover alone changes nothing, the whole of it does
    cover, patch = raws(version=2, tag="v2", reply_to=["v1.0@example.org"])
    ib.post(cover)
    sorted_now(w)
    assert w.state.get(v1.key).state == "queued"
    ib.post(patch)
    sorted_now(w)
    assert w.state.get(v1.key).state == "superseded"
    w.state.close()


# -- replies go where they belong


def test_a_reply_goes_to_the_author_and_the_list_and_never_to_more_than_ten():
    many = ", ".join(f"victim{i}@example.net" for i in range(5000))
    cover, _ = benign(cc=many)
    cfg = config.load()
    cfg.interest.lists = [LIST]
    for cc in ("lists", "all"):
        cfg.reply.cc = cc
        msg = reply.compose(cover, "k", "body\n", cfg)
        to = reply.addressed(msg)
        assert to[0] == "dev@example.org" and len(to) <= cfg.reply.max_recipients
        assert LIST in to                                   # the list comes first
        assert len(str(msg["References"]).split()) <= 2
    cfg.reply.cc = "lists"
    assert reply.addressed(reply.compose(cover, "k", "b\n", cfg)) == ["dev@example.org", LIST]


def test_a_from_of_301_addresses_gives_one_recipient():
    frm = ", ".join(f"x{i}@example.net" for i in range(301))
    cover, _ = benign(frm=frm)
    cfg = config.load()
    msg = reply.compose(cover, "k", "body\n", cfg)
    assert reply.addressed(msg) == ["x0@example.net"]


def test_a_from_with_no_address_is_no_one_to_answer():
    cover = described(mail("[PATCH 0/1] mm: x", "q@x.example", "cover", frm='"'))
    assert cover.sender == ""
    try:
        reply.compose(cover, "k", "body\n", config.load())
    except reply.NoAddress as exc:
        assert "no address a reply may go to" in str(exc)
    else:
        raise AssertionError("a reply was composed to no one")


# An encoded display name that decodes to another author's address (and a comma).
POSING = "=?utf-8?q?dev=40example=2Eorg=2C?= <mallory@evil.example>"


def test_an_encoded_name_is_never_an_address():
    """Addresses are parsed as sent, names decoded after: an encoded word that
    decodes to "dev@example.org," is Mallory's name, not a second address, in
    From, To and Cc alike."""
    cover, patch = benign(frm=POSING)
    assert cover.sender == patch.sender == "mallory@evil.example"
    assert 'dev@example.org' in cover.author and threads.address_of(cover.author) == "mallory@evil.example"
    cc = described(mail("[PATCH] mm: x", "cc@evil.example", "body", frm=EVIL,
                        to="=?utf-8?q?dev=40example=2Eorg?= <list@lists.example>",
                        cc="=?utf-8?b?ZGV2QGV4YW1wbGUub3JnLCA=?= <other@lists.example>"))
    assert cc.recipients == ("list@lists.example", "other@lists.example")
    # a name of plain words still reads as it should
    plain = described(mail("[PATCH] mm: y", "y@example.org", "body",
                           frm="=?utf-8?q?J=C3=B6rg_D=C3=A9v?= <jorg@example.org>"))
    assert plain.sender == "jorg@example.org" and plain.author == 'J\u00f6rg D\u00e9v <jorg@example.org>'
    # as people write it, where that reads back the same (an initial's period included)
    initial = described(mail("[PATCH] mm: z", "z@example.org", "body", frm="B. Dev <b@example.org>"))
    assert initial.author == "B. Dev <b@example.org>" and initial.sender == "b@example.org"


def test_a_patch_from_one_posing_as_the_author_by_an_encoded_name_does_not_join_the_series():
    cover, patch = benign()
    _, body = example_series("benign.mbox")[1]
    posing = described(mail("[PATCH 1/1] mm/filemap: one helper for the mmap_miss decrement",
                            "posing@evil.example", body.replace("mmap_miss", "mmap_hit"),
                            frm=POSING, date=NOW + 3600, reply_to=[cover.msgid]))
    v = threads.group([cover, patch, posing])[threads.key_of(cover)]
    assert v.patches[1] is patch and v.foreign == [posing] and v.sender == "dev@example.org"


@needs_public_inbox
def test_a_v2_from_one_posing_as_the_author_neither_supersedes_nor_mails_the_author(tmp_path):
    """Mallory posts a complete v2 in the author's thread, From an encoded name
    that decodes to the author's address: the author's v1 stays queued, the v2
    is Mallory's own series, and its reply goes to Mallory, not the author."""
    w = watching(tmp_path, raws())
    [v1] = w.state.rows()
    assert v1.state == "queued", v1.reason
    for raw in raws(frm=POSING, version=2, tag="posing", reply_to=["v1.0@example.org"]):
        w.inbox.post(raw)
    sorted_now(w)
    rows = {r.key: r for r in w.state.rows()}
    assert rows[v1.key].state == "queued"
    [theirs] = [r for k, r in rows.items() if k != v1.key]
    assert threads.address_of(theirs.author) == "mallory@evil.example"
    cfg = config.load()
    cfg.interest.lists = [LIST]
    [cover] = [m for m in (described(r) for r in raws(frm=POSING, version=2, tag="posing",
                                                     reply_to=["v1.0@example.org"]))
               if m.msgid == theirs.anchor]
    for cc in ("lists", "all"):
        cfg.reply.cc = cc
        to = reply.addressed(reply.compose(cover, "k", "body\n", cfg))
        assert to[0] == "mallory@evil.example" and "dev@example.org" not in to, to
    w.state.close()


# -- arbitrary headers never stop it


HEADER_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=300)
HEADERS = st.fixed_dictionaries({
    "From": HEADER_TEXT, "To": HEADER_TEXT, "Cc": HEADER_TEXT, "Subject": HEADER_TEXT,
    "Message-ID": HEADER_TEXT, "References": HEADER_TEXT, "Date": HEADER_TEXT,
})


def raw_mail(h: dict[str, str], body: str, encoded: bool) -> bytes:
    from email.header import Header
    lines = []
    for k, v in h.items():
        v = v.replace("\r", " ").replace("\n", " ")
        if encoded:
            v = Header(v, "utf-8").encode()
        lines.append(f"{k}: {v}")
    return ("\n".join(lines) + "\n\n" + body).encode("utf-8", "surrogateescape")


@settings(max_examples=EXAMPLES, deadline=None, derandomize=not os.environ.get("FOLIOFARM_FUZZ_RANDOM"),
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(h=HEADERS, subject_prefix=st.sampled_from(["[PATCH 0/1] ", "[PATCH 1/1] ", "[PATCH v3 1/2] ",
                                                   "[PATCH] ", "Re: [PATCH] ", ""]),
       encoded=st.booleans())
def test_arbitrary_headers_go_through_intake_reply_and_status_page(tmp_path_factory, h, subject_prefix,
                                                                   encoded):
    """Whatever the headers, every step a message goes through is taken: read,
    sorted, a reply composed (or refused with NoAddress), and the status page
    written. No exception other than the reply's own refusal gets out."""
    _, body = example_series("benign.mbox")[1]
    h = {**h, "Subject": subject_prefix + h["Subject"]}
    m = described(raw_mail(h, body, encoded))
    cfg = config.load()
    cfg.interest.lists = [LIST]
    cfg.reply.cc = "all"
    if m.part:
        v = threads.group([m])[threads.key_of(m)]
        from foliofarm.watch.loop import assess
        assess(v, cfg, NOW, NOW - 3600, NOW - 3600)
        try:
            msg = reply.compose(v.anchor, threads.key_of(m), "body\n", cfg)
        except reply.NoAddress:
            pass
        else:
            to = reply.addressed(msg)
            assert 1 <= len(to) <= cfg.reply.max_recipients
            msg.as_bytes()                      # it can be written out
    folder = tmp_path_factory.mktemp("st")
    s = state.State(folder)
    s.ingest("0", "c" * 40, [(m, threads.key_of(m) if m.part else None, None)], NOW)
    s.put(state.Tracked(threads.key_of(m), m.msgid, m.root, m.title, m.subject, m.author, m.version,
                    m.total, NOW, NOW, m.date if m.date == m.date else NOW, "failed",
                    "some reason <b>"))
    page = status.write(s, folder, "archive").read_text()
    assert "some reason &lt;b&gt;" in page and "<b>" not in page
    s.close()


# -- one bad series never stops the others; a reply is sent once, or given up


def judged(w: Watcher, tmp_path: Path) -> None:
    """Every queued series as a judged run leaves it: its report.txt in its folder."""
    for r in w.state.rows("queued"):
        run = tmp_path / "runs" / r.key
        run.mkdir(parents=True)
        (run / "report.txt").write_text("foliofarm: 7.3 vs 7.3+series\nVerdicts: 3 pass\n")
        w.state.move(r.key, "tested", "", outcome=_tester_judged(), run_dir=str(run))


def _tester_judged() -> str:
    from foliofarm.watch import tester
    return tester.JUDGED


def answering(w: Watcher) -> None:
    for r in w.state.rows("tested"):
        w.guarded(w.answer, r, "answering it")


@needs_public_inbox
def test_a_from_of_one_quote_fails_its_series_and_the_next_is_answered(tmp_path):
    w = watching(tmp_path, [*raws(frm='"', tag="bad"), *raws(tag="good")])
    judged(w, tmp_path)
    answering(w)
    states = {r.anchor: (r.state, r.reason) for r in w.state.rows()}
    assert states["good.0@example.org"][0] == "replied"
    assert states["bad.0@example.org"][0] == "failed"
    assert "NoAddress" in states["bad.0@example.org"][1]
    w.write_status()
    w.state.close()


def smtp_server(handler):
    from aiosmtpd.controller import Controller
    from inbox import free_port
    port = free_port()
    c = Controller(handler, hostname="127.0.0.1", port=port)
    c.start()
    return c, port


@needs_public_inbox
def test_refused_sends_are_given_up_after_their_attempts_and_an_unknown_one_is_never_repeated(tmp_path):
    class Refuse:
        calls = 0

        async def handle_DATA(self, server, session, envelope):
            Refuse.calls += 1
            return "554 5.7.1 no thanks"

    class Drop:
        calls = 0

        async def handle_DATA(self, server, session, envelope):
            Drop.calls += 1
            server.transport.close()            # the connection lost with the message handed over
            return "250 OK"

    for handler, want in ((Refuse(), "failed"), (Drop(), "sending")):
        server, port = smtp_server(handler)
        try:
            d = tmp_path / type(handler).__name__
            w = watching(d, raws(), smtp__host="127.0.0.1", smtp__port=port, smtp__starttls=False,
                         smtp__interval_seconds=0)
            cfg = w.cfg
            judged(w, d)
            for _ in range(5):                   # five passes' worth of answering
                answering(w)
            [r] = w.state.rows()
            assert r.state == want, r.reason
        finally:
            server.stop()
        if want == "failed":
            assert Refuse.calls == cfg.reply.attempts and "3 of 3 attempts" in r.reason
        else:
            assert Drop.calls == 1 and "not sent again" in r.reason
        w.state.close()


@needs_public_inbox
def test_the_hourly_cap_counts_recipients(tmp_path):
    cc = b"\nCc: x1@example.net, x2@example.net\nTo: "
    # 4 a reply: author, list, two Cc; two replies fit
    w = watching(tmp_path, [raw.replace(b"\nTo: ", cc, 1) for tag in "abc" for raw in raws(tag=tag)],
                 reply__cc="all", reply__recipients_per_hour=8)
    judged(w, tmp_path)
    answering(w)
    got = sorted(r.state for r in w.state.rows())
    assert got == ["replied", "replied", "tested"]
    held = [r for r in w.state.rows() if r.state == "tested"][0]
    assert "reply held" in held.reason and "8" in held.reason
    w.state.close()


def test_the_smtp_login_comes_from_a_credentials_file_never_the_environment(tmp_path, monkeypatch):
    cfg = config.load()
    assert reply.login(cfg) is None                    # none configured: no login
    monkeypatch.setenv("FOLIOFARM_SMTP_PASSWORD", "from-the-environment")
    assert reply.login(cfg) is None
    (tmp_path / "smtp").write_text("bot\nsecret word\n")
    monkeypatch.setenv("CREDENTIALS_DIRECTORY", str(tmp_path))   # as systemd's LoadCredential=
    cfg.smtp.login_file = "smtp"
    assert reply.login(cfg) == ("bot", "secret word")
    (tmp_path / "smtp").write_text("bot\n")
    try:
        reply.login(cfg)
    except Exception as exc:         # noqa: BLE001
        assert "two lines" in str(exc)
    else:
        raise AssertionError("a one-line login file was taken")


def test_a_series_run_gets_none_of_the_watchers_secrets(monkeypatch):
    from foliofarm.watch import tester
    monkeypatch.setenv("FOLIOFARM_SMTP_PASSWORD", "x")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "y")
    monkeypatch.setenv("FOLIOFARM_CACHE", "/srv/cache")
    env = tester.child_env()
    assert "FOLIOFARM_SMTP_PASSWORD" not in env and "AWS_SECRET_ACCESS_KEY" not in env
    assert env["FOLIOFARM_CACHE"] == "/srv/cache" and "PYTHONPATH" in env


# -- a bot one can hold to account (issue: speak only with news)


def test_send_refuses_a_localhost_sender_or_domain_and_wants_an_owner():
    import pytest
    from foliofarm.errors import UsageError
    cfg = config.load()
    with pytest.raises(UsageError, match="not localhost"):
        reply.check_sending(cfg)                     # the defaults: foliofarm@localhost
    cfg.reply.from_ = "foliofarm bot <bot@farm.example.org>"
    with pytest.raises(UsageError, match=r"\[reply\] domain"):
        reply.check_sending(cfg)
    cfg.reply.domain = "farm.example.org"
    with pytest.raises(UsageError, match="owner"):
        reply.check_sending(cfg)
    cfg.reply.owner = "Farm Owner <owner@example.org>"
    reply.check_sending(cfg)
    cover, _ = benign()
    body = reply.compose(cover, "k", "body\n", cfg).get_content()
    assert "run by Farm Owner <owner@example.org>" in body and "left out" in body


def test_stable_backports_and_other_trees_are_routed_away():
    cfg = config.load()
    from foliofarm.watch.loop import assess
    for subject, tag in (("[PATCH 6.12.y] mm: fix", "6.12.y"), ("[PATCH AUTOSEL 6.1 1/1] mm: x", "autosel"),
                         ("[PATCH net-next v2] mm: y", "net-next")):
        m = described(mail(subject, f"{tag}@example.org", example_series("benign.mbox")[1][1]))
        v = threads.group([m])[threads.key_of(m)]
        assert assess(v, cfg, NOW, NOW - 3600, NOW - 3600) == \
            ("ignored", f"a {tag} series, not for this base ([route] ignore)")


@needs_public_inbox
def test_a_resend_is_not_tested_again_and_opted_out_authors_get_no_reply(tmp_path):
    w = watching(tmp_path, raws())
    judged(w, tmp_path)
    [first] = w.state.rows()
    resend = [r.replace(b"Subject: [PATCH", b"Subject: [PATCH RESEND").replace(b"v1.", b"rs.")
              for r in raws()]
    for raw in resend:
        w.inbox.post(raw)
    sorted_now(w)
    again = [r for r in w.state.rows() if r.key != first.key]
    assert [r.state for r in again] == ["ignored"] and "RESEND is not tested again" in again[0].reason
    out = tmp_path / "opt-out"
    out.write_text("# asked on 2026-11-20\nDev@Example.org\n")
    w.cfg.reply.opt_out = str(out)
    answering(w)
    assert w.state.get(first.key).state == "quiet" and "opted out" in w.state.get(first.key).reason
    assert len(list((tmp_path / "out").rglob("*"))) <= 3          # the maildir's folders, no mail


@needs_public_inbox
def test_a_held_v1_is_dropped_when_v2_arrives_and_an_all_pass_series_is_not_news(tmp_path):
    w = watching(tmp_path, raws())
    judged(w, tmp_path)
    for raw in raws(version=2, tag="v2", reply_to=["v1.0@example.org"]):
        if b"@@" in raw:                    # v2 changes the code (a RESEND would not)
            at = raw.index(b"\n+", raw.index(b"@@"))
            raw = raw[:at] + b"\n+/* v2 */" + raw[at + 2:]
        w.inbox.post(raw)
    sorted_now(w)
    answering(w)
    v1 = next(r for r in w.state.rows() if r.version == 1)
    assert v1.state == "superseded" and "v2 arrived before this reply went out" in v1.reason
    # v2's run: a real results.json of an all-pass series run, recorded
    v2 = next(r for r in w.state.rows() if r.version == 2)
    run = tmp_path / "runs" / v2.key
    run.mkdir(parents=True)
    (run / "results.json").write_bytes((DATA / "results" / "benign-4k.json").read_bytes())
    (run / "report.txt").write_text("all pass\n")
    w.state.move(v2.key, "tested", "", outcome="judged", run_dir=str(run))
    w.cfg.reply.when = "news"
    answering(w)
    assert w.state.get(v2.key).state == "quiet" and "no news" in w.state.get(v2.key).reason
    w.cfg.reply.when = "always"
    w.state.move(v2.key, "tested", "")
    answering(w)
    assert w.state.get(v2.key).state == "replied"


def test_the_status_page_shows_recent_days_and_a_page_per_earlier_month(tmp_path):
    s = state.State(tmp_path)
    old = time.mktime((2026, 9, 14, 12, 0, 0, 0, 0, 0))
    for key, when, subject in (("new", NOW - 3600, "[PATCH] mm: recent"), ("old", old, "[PATCH] mm: of september")):
        s.put(state.Tracked(key, f"{key}@x", f"{key}@x", subject, subject, DEV, 1, 1, when, when, when,
                        "quiet", "no news"))
    page = status.write(s, tmp_path, "archive", days=14).read_text()
    assert "mm: recent" in page and "mm: of september" not in page
    assert 'href="archive-2026-09.html"' in page
    month = (tmp_path / "archive-2026-09.html").read_text()
    assert "mm: of september" in month and "mm: recent" not in month
    s.close()

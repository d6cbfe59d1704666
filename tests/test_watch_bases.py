"""The watcher on a followed mm tree, end to end: a git repository of 7.3 (a
clone of Debian's linux-source-7.3, its `master`) with the mm tree's branches,
each a real change on the one before, served by `git daemon` on loopback; a real
public-inbox on loopback; real series runs on 4k-ext4 (exec-text, mmap-miss).

The branches: each adds one pr_warn to pagecache_init() (mm/filemap.c), which
every boot's console shows (loglevel=5), so the test sees which commit booted:
  mm-stable    "mmtree: mm-stable"
  mm-unstable  and "mmtree: mm-unstable"
  mm-new       and "mmtree: mm-new"; later moved on by "mmtree: mm-new moved".
The series (the config follows mm-new, mm-unstable, mm-stable, master):
  S1  benign, its cover says base-commit: mm-unstable's head: tested there; no
      reply (when = "news": no news);
  S2  the exec-text negative control plus a change of mm-new's own line (it
      applies to mm-new alone), no base-commit: tested on mm-new, its regression
      booted again on both sides, one reply naming mm-new;
  S3  applies nowhere: on the status page with every branch's reason, no reply;
  S4  [PATCH 6.12.y]: ignored;
then mm-new moves on, and
  v1  benign, no base-commit: the first series on the new mm-new, which is
      measured once; its reply held (per_hour);
  v2  of it: the same base, no base cell booted; v1's held reply dropped, v2
      answered (when = "always");
  RESEND of v2: nothing tested, nothing answered."""

from __future__ import annotations

import mailbox
import re
import shutil
import subprocess
import sys
import threading
import time
from email import message_from_bytes
from email.policy import default
from http.server import HTTPServer
from pathlib import Path

import pytest

from foliofarm.intake import source
from foliofarm.intake.source import GIT_IDENTITY
from foliofarm.paths import cache_dir
from foliofarm.report import readback
from foliofarm.results import read

sys.path.insert(0, str(Path(__file__).resolve().parent))
from inbox import LIST, EX, Inbox, example_series, git_daemon, mail, needs_public_inbox  # noqa: E402
from test_kcidb import Receiver  # noqa: E402
from test_watch_runs import row  # noqa: E402

pytestmark = [pytest.mark.integration, needs_public_inbox]
ROOT = Path(__file__).resolve().parent.parent
RUN = ["--cells", "4k-ext4", "--checks", "exec-text,mmap-miss"]
BRANCHES = "mm-new,mm-unstable,mm-stable,master"
# A fixed port, so that the followed tree's clone and build directory in the
# cache (named after where it is followed from) serve the next run of this test.
PORT = 39418
ANCHOR = "\tregister_sysctl_init(\"vm\", filemap_sysctl_table);\n"


def git(tree: Path, *args: str, **kw) -> str:
    return subprocess.run(["git", "-C", str(tree), *args], check=True, capture_output=True, text=True,
                          env={**GIT_IDENTITY, "PATH": "/usr/bin:/bin", "HOME": str(tree)}, **kw).stdout


def warn_line(text: str) -> str:
    return f'\tpr_warn("mmtree: {text}\\n");\n'


def add_line(tree: Path, after: str, text: str, subject: str) -> str:
    """Commit one pr_warn line after the line ``after`` of pagecache_init."""
    f = tree / "mm" / "filemap.c"
    src = f.read_text()
    assert src.count(after) == 1, after
    f.write_text(src.replace(after, after + warn_line(text)))
    git(tree, "commit", "-q", "-am", subject)
    return git(tree, "rev-parse", "HEAD").strip()


def formatted(tree: Path, rev_range: str) -> list[tuple[str, str]]:
    """(subject, body) of each patch of ``rev_range``, as git format-patch mails them."""
    text = git(tree, "format-patch", "--stdout", "--no-signature", rev_range)
    out = []
    for chunk in re.split(r"^From [0-9a-f]{40} .*\n", text, flags=re.M)[1:]:
        head, _, body = chunk.partition("\n\n")
        out.append((re.search(r"^Subject: (.*(?:\n .*)*)$", head, re.M).group(1).replace("\n", ""), body))
    return out


@pytest.fixture(scope="module")
def mm(tmp_path_factory):
    """The mm tree, served by git daemon on 127.0.0.1:PORT as /mm."""
    top = tmp_path_factory.mktemp("served")
    debian = source.resolve("debian:7.3", cache_dir())
    t = top / "mm"
    subprocess.run(["git", "clone", "-q", "--no-checkout", "-b", "base", str(debian.tree), str(t)],
                   check=True, capture_output=True)
    git(t, "checkout", "-q", "-b", "master")
    heads = {"master": git(t, "rev-parse", "HEAD").strip()}
    git(t, "checkout", "-q", "-b", "mm-stable")
    heads["mm-stable"] = add_line(t, ANCHOR, "mm-stable", "mm: mm-stable's change")
    git(t, "checkout", "-q", "-b", "mm-unstable")
    heads["mm-unstable"] = add_line(t, warn_line("mm-stable"), "mm-unstable", "mm: mm-unstable's change")
    git(t, "checkout", "-q", "-b", "mm-new")
    heads["mm-new"] = add_line(t, warn_line("mm-unstable"), "mm-new", "mm: mm-new's change")
    (t / ".git" / "git-daemon-export-ok").touch()
    with git_daemon(top, PORT) as where:
        # the daemon that answers is this one, serving this tree
        heads_served = git(t, "ls-remote", f"{where}/mm")
        assert f"{heads['mm-new']}\trefs/heads/mm-new" in heads_served, heads_served
        yield t, heads


def config(tmp: Path, when: str, per_hour: int, kcidb: str = "") -> Path:
    path = tmp / "watch.toml"
    (tmp / "kcidb.token").write_text("sekrit\n")
    path.write_text("\n".join([
        "[kcidb]", f'url = "{kcidb}"', f'token_file = "{tmp / "kcidb.token"}"',
        "[interest]", f'lists = ["{LIST}"]',
        "[run]", f'kernel = "git:git://127.0.0.1:{PORT}/mm#{BRANCHES}"',
        "[series]", "settle_minutes = 0",
        "[reply]", 'from = "foliofarm bot <bot@farm.example>"', 'domain = "farm.example"',
        'owner = "Farm Owner <owner@farm.example>"', f'when = "{when}"', f"per_hour = {per_hour}",
    ]) + "\n")
    return path


def watch_once(url: str, st: Path, cfg: Path) -> None:
    with open(st.parent / "watch.log", "ab") as log:
        p = subprocess.run([sys.executable, "-m", "foliofarm", "watch", url, "--state", str(st),
                            "--config", str(cfg), *RUN, "--once"], cwd=ROOT, stdout=log,
                           stderr=subprocess.STDOUT, timeout=3600)
    assert p.returncode == 0, (st.parent / "watch.log").read_text()[-4000:]


def post(ib: Inbox, patches: list[tuple[str, str]], tag: str, cover: str | None = None,
         title: str = "", frm: str = "A. Developer <dev@example.org>", prefix: str = "PATCH"
         ) -> list[str]:
    """A thread: the cover (if any) and the patches in reply to it."""
    msgs = ([(f"[{prefix} 0/{len(patches)}] {title}", cover)] if cover is not None else []) + patches
    ids: list[str] = []
    for i, (subject, body) in enumerate(msgs):
        ids.append(f"{tag}.{i}@example.org")
        ib.post(mail(subject, ids[-1], body, frm=frm, date=time.time() - 600 + i, reply_to=ids[:1]))
    return ids


def boots(run_dir: str) -> tuple[list[dict], list[dict]]:
    """(base boots, series boots) of a run, as results.json records them."""
    doc = read.plain(readback(Path(run_dir) / "results.json"))
    base = doc["sides"]["base"]["kernel"]
    return ([b for b in doc["boots"] if b["kernel"] == base],
            [b for b in doc["boots"] if b["kernel"] != base])


def console_of(run_dir: str, kernel_side: str) -> str:
    return "\n".join(p.read_text(errors="replace") for p in (Path(run_dir) / "boots").glob("*.console.log")
                     if ("+" in p.name) == (kernel_side == "series") and "-confirm" not in p.name)


def outbox(st: Path) -> list:
    box = mailbox.Maildir(st / "outbox")
    return [message_from_bytes(box.get_bytes(k), policy=default) for k in sorted(box.keys())]


def test_each_series_is_tested_on_the_base_it_was_written_for_and_answered_only_with_news(mm, tmp_path):
    tree, heads = mm
    ib = Inbox(tmp_path / "pi")
    [(_, benign_cover), (benign_subject, benign_patch)] = example_series("benign.mbox")
    title = "mm/filemap: one helper for the mmap_miss decrement"
    # S1: base-commit names mm-unstable's head
    post(ib, [(benign_subject, benign_patch)], "s1", title=title,
              cover=re.sub(r"base-commit: \w+", f"base-commit: {heads['mm-unstable']}", benign_cover))
    # S2: the exec-text negative control, and a change of mm-new's own line
    git(tree, "checkout", "-q", "-b", "s2", "mm-new")
    neg = sorted((EX / "neg-exec-text").glob("*.patch"))
    git(tree, "am", "-q", *map(str, neg))
    add_line(tree, warn_line("mm-new"), "s2 was here", "mm/filemap: say so at boot")
    s2 = post(ib, formatted(tree, "mm-new..s2"), "s2", cover="Two changes.\n",
              title="mm: read exec text around, and say so")
    # S3: a change of a line no branch has
    git(tree, "checkout", "-q", "-b", "s3", "mm-new")
    add_line(tree, warn_line("mm-new"), "nowhere", "mm: a line of no branch")
    add_line(tree, warn_line("nowhere"), "nowhere either", "mm: after it")
    s3_patch = formatted(tree, "s3~1..s3")
    post(ib, [(s.replace("[PATCH]", "[PATCH 1/1]"), b) for s, b in s3_patch], "s3",
              cover="For a tree nobody follows.\n", title="mm: a change for another tree")
    # S4: a stable backport
    [(_, s4_body)] = formatted(tree, "mm-new~1..mm-new")
    post(ib, [("[PATCH 6.12.y] mm: a backport", s4_body)], "s4")
    git(tree, "checkout", "-q", "mm-new")
    url = ib.serve()
    st = tmp_path / "state"
    receiver = HTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    Receiver.got.clear()
    try:
        watch_once(url, st, config(tmp_path, "news", 20,
                                   kcidb=f"http://127.0.0.1:{receiver.server_port}/submit"))
        r1, r2, r3, r4 = (row(st, t) for t in (title, "read exec text around", "another tree",
                                               "a backport"))
        # S1: on mm-unstable's head, as its base-commit says; no news, no reply
        assert r1.outcome == "judged" and r1.state == "quiet", (r1.state, r1.reason)
        assert f"applied to {heads['mm-unstable'][:12]}" in r1.base and "base-commit" in r1.base
        # (the series' kernel is its base's and more: its console shows the base's lines)
        assert "mmtree: mm-unstable" in console_of(r1.run_dir, "series")
        assert "mmtree: mm-new" not in console_of(r1.run_dir, "series")
        # no news, but in KCIDB (as every tested series): the receiver validated it
        assert any(c.get("message_id") == "s1.0@example.org" for d in Receiver.got
                   for c in d.get("checkouts", [])), Receiver.got
        # S2: on mm-new, the only branch it applies to; confirmed; one reply naming it
        assert r2.state == "replied", (r2.state, r2.reason)
        assert f"applied to mm-new at {heads['mm-new'][:12]}" in r2.base
        doc = read.plain(readback(Path(r2.run_dir) / "results.json"))
        [bad] = [v for v in doc["verdicts"] if v["verdict"] != "pass"]
        assert (bad["check"], bad["verdict"]) == ("exec-text", "regression")
        assert "confirmed: a regression again on a second boot" in bad["series_reason"]
        assert "mmtree: mm-new" in console_of(r2.run_dir, "series")
        [sent] = outbox(st)
        assert sent["In-Reply-To"] == f"<{s2[0]}>"
        body = sent.get_content()
        assert f"mm-new at {heads['mm-new'][:12]}" in body and "regression" in body
        assert f"--base {heads['mm-new']}" in body          # where to reproduce it, as the branch moves
        # S3: tried everywhere, on the status page, no reply
        assert (r3.outcome, r3.state) == ("not-applied", "quiet"), (r3.state, r3.reason)
        page = (st / "index.html").read_text()
        assert "applies to no followed branch" in page
        for b in BRANCHES.split(","):
            assert f"{b} at " in page
        # S4: a backport is not for this tree
        assert r4.state == "ignored" and "6.12.y" in r4.reason

        # mm-new moves on: the first series on it measures the new base, once
        # (a line of this test run's own: the new base is new to the cache too)
        moved_line = f"mm-new moved {time.time_ns()}"
        moved = add_line(tree, warn_line("mm-new"), moved_line, "mm: mm-new moves on")
        # (not S1's patches: those would be a RESEND of S1, left alone)
        [(_, v1_patch)] = example_series("benign-offpath.mbox")
        v1 = post(ib, [(f"[PATCH 1/1] {title}", v1_patch)], "v1", title=title,
                  cover="Another helper.\n", frm="B. Dev <b@example.org>")
        watch_once(url, st, config(tmp_path, "always", 1))      # S2's reply fills the hour
        [r5] = [r for r in rows_of(st) if r.author.startswith("B. Dev")]
        assert r5.state == "tested" and "reply held" in r5.reason, (r5.state, r5.reason)
        assert f"applied to mm-new at {moved[:12]}" in r5.base
        base_boots, _ = boots(r5.run_dir)
        assert base_boots and not any(b.get("reused") for b in base_boots), base_boots
        assert f"mmtree: {moved_line}" in console_of(r5.run_dir, "base")
        # v2 (another patch, the same title and thread) while v1's reply waits
        git(tree, "checkout", "-q", "-b", "v2", "mm-new")
        f = tree / "mm" / "filemap.c"
        f.write_text(f.read_text().replace(warn_line(moved_line),
                                           warn_line(moved_line) + "\t/* v2: nothing else */\n"))
        git(tree, "commit", "-q", "-am", "mm/filemap: a comment")
        git(tree, "checkout", "-q", "mm-new")
        [(_, v2_patch)] = formatted(tree, "mm-new..v2")
        v2 = post(ib, [(f"[PATCH v2 1/1] {title}", v2_patch)], "v2", title=title, prefix="PATCH v2",
                  cover="v2: another approach.\n", frm="B. Dev <b@example.org>")
        watch_once(url, st, config(tmp_path, "always", 20))
        rows = [r for r in rows_of(st) if r.author.startswith("B. Dev")]
        by_version = {r.version: r for r in rows}
        assert by_version[1].state == "superseded", (by_version[1].state, by_version[1].reason)
        assert by_version[2].state == "replied", (by_version[2].state, by_version[2].reason)
        base_boots, series_boots = boots(by_version[2].run_dir)
        assert series_boots and base_boots and all(b.get("reused") for b in base_boots), base_boots
        log = (st / "runs" / by_version[2].key / "attempt-1.log").read_text()
        assert "measurements reused from run" in log
        assert f"applied to mm-new at {moved[:12]}" in by_version[2].base
        sent = outbox(st)
        assert len(sent) == 2 and sent[1]["In-Reply-To"] == f"<{v2[0]}>"
        assert not any(m["In-Reply-To"] == f"<{v1[0]}>" for m in sent)

        # a RESEND of v2: the same patches, nothing tested or answered again
        post(ib, [(f"[PATCH RESEND v2 1/1] {title}", v2_patch)], "v2r", title=title,
             prefix="PATCH RESEND v2", cover="v2: another approach.\n", frm="B. Dev <b@example.org>")
        tested_before = len(list((st / "runs").iterdir()))
        watch_once(url, st, config(tmp_path, "always", 20))
        assert len(outbox(st)) == 2
        assert len(list((st / "runs").iterdir())) == tested_before
        resend = [r for r in rows_of(st) if "RESEND" in r.subject or r.key.startswith("v2r")]
        assert resend and all(r.state not in ("testing", "tested", "replied") for r in resend), \
            [(r.subject, r.state, r.reason) for r in resend]
    finally:
        receiver.shutdown()
        ib.stop()
        shutil.rmtree(tmp_path / "pi", ignore_errors=True)


def rows_of(st: Path):
    from foliofarm.watch import state
    s = state.State(st)
    try:
        return list(s.rows())
    finally:
        s.close()

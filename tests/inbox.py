"""A real public-inbox for the watcher's tests: a v2 inbox made by
`public-inbox-init -V2`, fed by `public-inbox-mda` (as a mail server would
deliver to it) and served by `public-inbox-httpd` on 127.0.0.1 at a free port;
plus the mails a list carries (a series from examples/, a reply)."""

from __future__ import annotations

import gzip
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from contextlib import contextmanager
from email.utils import formatdate
from pathlib import Path
from typing import Iterator

import pytest

LIST = "linux-mm@kvack.example"
EX = Path(__file__).resolve().parent.parent / "examples" / "series"


def have_public_inbox() -> bool:
    return all(shutil.which(t) for t in ("public-inbox-init", "public-inbox-mda", "public-inbox-httpd"))


needs_public_inbox = pytest.mark.skipif(not have_public_inbox(),
                                        reason="Debian's public-inbox is not installed (make setup)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Inbox:
    def __init__(self, root: Path, name: str = "linux-mm", address: str = LIST) -> None:
        self.root, self.name, self.address = root, name, address
        self.dir = root / name
        self.env = {**os.environ, "PI_CONFIG": str(root / "pi-config"), "HOME": str(root)}
        self.httpd: subprocess.Popen | None = None
        self.url = ""
        subprocess.run(["public-inbox-init", "-V2", "-L", "basic", name, str(self.dir),
                        f"http://127.0.0.1/{name}", address], env=self.env, check=True,
                       capture_output=True)
        subprocess.run(["git", "config", "-f", self.env["PI_CONFIG"], "publicinboxmda.spamcheck",
                        "none"], check=True)

    def post(self, raw: bytes) -> None:
        """Deliver one message, as the list's mail server would."""
        p = subprocess.run(["public-inbox-mda", "--no-precheck"], input=raw, capture_output=True,
                           env={**self.env, "ORIGINAL_RECIPIENT": self.address})
        assert p.returncode == 0, p.stderr.decode()

    def serve(self, port: int | None = None) -> str:
        port = port or free_port()
        self.httpd = subprocess.Popen(["public-inbox-httpd", "-l", f"http://127.0.0.1:{port}"],
                                      env=self.env, stdout=subprocess.DEVNULL,
                                      stderr=open(self.root / "httpd.log", "wb"))
        self.url = f"http://127.0.0.1:{port}/{self.name}"
        for _ in range(100):
            try:
                urllib.request.urlopen(self.url + "/", timeout=2).read()
                return self.url
            except OSError:
                time.sleep(0.1)
        raise AssertionError(f"public-inbox-httpd did not come up: {(self.root / 'httpd.log').read_text()}")

    def stop(self) -> None:
        if self.httpd:
            self.httpd.terminate()
            self.httpd.wait(10)
            self.httpd = None

    def thread(self, msgid: str) -> bytes:
        """The whole thread of ``msgid`` as public-inbox threads it (t.mbox.gz)."""
        with urllib.request.urlopen(f"{self.url}/{msgid}/t.mbox.gz", timeout=10) as r:
            return gzip.decompress(r.read())


@contextmanager
def git_daemon(base: Path, port: int) -> Iterator[str]:
    """`git daemon` serving the repositories under ``base`` (each with its
    git-daemon-export-ok) on 127.0.0.1:``port``; yields git://127.0.0.1:PORT.
    In a session of its own: `git daemon` runs git-daemon as a child, and the
    whole group goes at the end (a leftover would serve the next run's port)."""
    d = subprocess.Popen(["git", "daemon", "--reuseaddr", "--listen=127.0.0.1", f"--port={port}",
                          f"--base-path={base}", str(base)], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        for _ in range(100):
            assert d.poll() is None, f"git daemon could not listen on 127.0.0.1:{port} (in use?)"
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        else:
            raise AssertionError(f"git daemon did not listen on 127.0.0.1:{port}")
        yield f"git://127.0.0.1:{port}"
    finally:
        os.killpg(d.pid, signal.SIGKILL)
        d.wait(10)


def mail(subject: str, msgid: str, body: str, *, date: float | None = None, frm: str =
         "A. Developer <dev@example.org>", to: str = LIST, cc: str = "",
         reply_to: list[str] = ()) -> bytes:
    head = [f"From: {frm}", f"To: {to}"] + ([f"Cc: {cc}"] if cc else []) + [
        f"Subject: {subject}", f"Message-ID: <{msgid}>",
        f"Date: {formatdate(date if date is not None else time.time())}"]
    if reply_to:
        head += [f"In-Reply-To: <{reply_to[-1]}>", "References: " + " ".join(f"<{r}>" for r in reply_to)]
    head += ["MIME-Version: 1.0", "Content-Type: text/plain; charset=utf-8"]
    return ("\n".join(head) + "\n\n" + body.rstrip("\n") + "\n").encode()


def example_series(name: str) -> list[tuple[str, str]]:
    """(subject, body) of each message of examples/series/NAME, headers dropped."""
    text = (EX / name).read_text()
    out = []
    for chunk in re.split(r"^From [0-9a-f]{40} .*\n", text, flags=re.M)[1:]:
        head, _, body = chunk.partition("\n\n")
        subject = re.search(r"^Subject: (.*)$", head, re.M).group(1)
        out.append((subject, body))
    return out


def post_series(inbox: Inbox, name: str, version: int, tag: str, *, date: float,
                reply_to: list[str] = (), cc: str = "") -> list[str]:
    """examples/series/NAME posted as version ``version`` (a thread: patches
    in reply to the cover); returns the Message-IDs, cover first."""
    ids = []
    for i, (subject, body) in enumerate(example_series(name)):
        if version > 1:
            subject = re.sub(r"^\[PATCH", f"[PATCH v{version}", subject)
        msgid = f"{tag}.{i}@example.org"
        refs = list(reply_to) + ([ids[0]] if ids else [])
        inbox.post(mail(subject, msgid, body, date=date + i, reply_to=refs, cc=cc))
        ids.append(msgid)
    return ids

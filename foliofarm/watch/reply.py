"""The reply to a tested series: report.txt as a plain-text mail in its
thread (`Re:` its cover letter or patch 1, In-Reply-To and References set so
that public-inbox and lore thread it), To the author, Cc as configured, with
the commands that reproduce it. Every reply is written to the outbox (a
maildir); with --send it is also delivered over SMTP. Its Message-ID comes from
the series, so the same reply is never written twice."""

from __future__ import annotations

import mailbox
import os
import smtplib
import ssl
import time
from email.message import EmailMessage
from email.utils import formatdate, getaddresses, parseaddr
from pathlib import Path

from foliofarm.errors import InfraError
from foliofarm.watch.config import WatchConfig
from foliofarm.watch.threads import Message

USER_ENV, PASSWORD_ENV = "FOLIOFARM_SMTP_USER", "FOLIOFARM_SMTP_PASSWORD"


def reply_id(key: str, cfg: WatchConfig) -> str:
    return f"foliofarm-{key}@{cfg.reply.domain}"


def recipients(anchor: Message, cfg: WatchConfig) -> tuple[str, list[str]]:
    """(To, Cc): the author; the series' own To and Cc (reply-all), or only
    the followed lists among them, or none."""
    to = anchor.author or "unknown@invalid"
    author = parseaddr(to)[1].lower()
    mine = parseaddr(cfg.reply.from_)[1].lower()
    cc: list[str] = []
    if cfg.reply.cc != "none":
        lists = {a.lower() for a in cfg.interest.lists}
        for a in anchor.recipients:
            low = a.lower()
            if low in (author, mine) or low in (c.lower() for c in cc):
                continue
            if cfg.reply.cc == "all" or low in lists:
                cc.append(a)
    return to, cc


def compose(anchor: Message, key: str, body: str, cfg: WatchConfig) -> EmailMessage:
    msg = EmailMessage()
    to, cc = recipients(anchor, cfg)
    msg["From"] = cfg.reply.from_
    msg["To"] = to
    if cc:
        msg["Cc"] = ", ".join(cc)
    subject = anchor.subject or "(no subject)"
    msg["Subject"] = subject if subject.lower().startswith("re:") else f"Re: {subject}"
    msg["Date"] = formatdate(localtime=False)
    msg["Message-ID"] = f"<{reply_id(key, cfg)}>"
    msg["In-Reply-To"] = f"<{anchor.msgid}>"
    msg["References"] = " ".join(f"<{r}>" for r in [*anchor.refs, anchor.msgid])
    msg["X-Mailer"] = "foliofarm watch"
    msg.set_content(body, charset="utf-8", cte="quoted-printable" if not body.isascii() else "7bit")
    return msg


def in_outbox(outbox: Path, msgid: str) -> bool:
    box = mailbox.Maildir(outbox, create=True)
    want = f"<{msgid}>"
    return any((m.get("Message-ID") or "").strip() == want for m in box)


def to_outbox(outbox: Path, msg: EmailMessage) -> None:
    """Into the maildir, unless a message of that Message-ID is there already."""
    if not in_outbox(outbox, str(msg["Message-ID"]).strip("<>")):
        mailbox.Maildir(outbox, create=True).add(msg)


class Sender:
    """SMTP delivery with STARTTLS and a login from the environment, at most
    one message every ``interval_seconds``."""

    def __init__(self, cfg: WatchConfig) -> None:
        self.cfg = cfg
        self.last = 0.0

    def send(self, msg: EmailMessage) -> None:
        s = self.cfg.smtp
        wait = self.last + s.interval_seconds - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        to = [a for _, a in getaddresses([str(msg["To"]), str(msg.get("Cc", ""))]) if a]
        try:
            with smtplib.SMTP(s.host, s.port, timeout=120) as smtp:
                if s.starttls:
                    smtp.starttls(context=ssl.create_default_context())
                if os.environ.get(USER_ENV):
                    smtp.login(os.environ[USER_ENV], os.environ.get(PASSWORD_ENV, ""))
                smtp.send_message(msg, from_addr=parseaddr(self.cfg.reply.from_)[1], to_addrs=to)
        except (OSError, smtplib.SMTPException) as exc:
            raise InfraError(f"sending the reply through {s.host}:{s.port}: {exc}") from None
        finally:
            self.last = time.monotonic()


def reproduce(anchor: Message, argv: list[str]) -> list[str]:
    """The commands that test the series again, anywhere: b4 fetches it from
    the list by its Message-ID."""
    return ["To reproduce (https://b4.docs.kernel.org, and foliofarm's README):",
            f"  $ b4 am -o - {_quoted(anchor.msgid)} > series.mbox",
            "  $ foliofarm run --series series.mbox " + " ".join(_quoted(a) for a in argv)]


def _quoted(a: str) -> str:
    return a if a and all(c.isalnum() or c in "-_.,:=/+@" for c in a) else "'" + a.replace("'", "'\\''") + "'"


def judged_body(report_txt: str, version: int, patches: int, anchor: Message, argv: list[str]) -> str:
    """report.txt, its own Reproduce lines (a path on the farm's host) replaced
    by commands that work anywhere."""
    lines = report_txt.rstrip("\n").splitlines()
    if "Reproduce:" in lines:
        lines = lines[:lines.index("Reproduce:")]
    while lines and not lines[-1].strip():
        lines.pop()
    head = [f"foliofarm tested v{version} of this series ({patches} patch{'es' if patches != 1 else ''}) "
            "on arm64 under QEMU, each check on the base and on base+series.", ""]
    return "\n".join(head + lines + ["", *reproduce(anchor, argv), ""]) + _signature()


def refused_body(kind: str, said: str, version: int, anchor: Message, argv: list[str]) -> str:
    what = {"not-applied": "could not apply this series", "not-built": "could not build this series"
            }.get(kind, "could not test this series")
    said = said.strip() or "(no reason given)"
    return "\n".join([f"foliofarm {what} (v{version}) to test it on arm64:", "",
                      *("  " + ln for ln in said.splitlines()[:30]), "",
                      *reproduce(anchor, argv), ""]) + _signature()


def _signature() -> str:
    return "\n-- \nfoliofarm: arm64 folio, contpte and readahead checks for 4K, 16K and 64K pages\n"

"""The reply to a tested series: report.txt as a plain-text mail in its
thread (`Re:` its cover letter or patch 1, In-Reply-To and References set so
that public-inbox and lore thread it), To the author, Cc as configured, with
the commands that reproduce it. Every reply is written to the outbox (a
maildir); with --send it is also delivered over SMTP. Its Message-ID comes from
the series, so the same reply is never written twice."""

from __future__ import annotations

import mailbox
import os
import re
import smtplib
import ssl
import time
from email.message import EmailMessage
from email.utils import formataddr, formatdate, getaddresses, parseaddr
from pathlib import Path

from foliofarm import shown
from foliofarm.errors import InfraError, UsageError
from foliofarm.watch.config import WatchConfig
from foliofarm.watch.threads import ADDRESS, Message, address_of

class SendUnknown(InfraError):
    """The server may have taken the message: it is never sent again."""


class NoAddress(InfraError):
    """The series' From holds no address a reply may go to."""


LOCAL_DOMAINS = ("localhost", "localdomain", "local", "invalid")


def check_sending(cfg: WatchConfig) -> None:
    """What --send needs to be a bot one can hold to account: a sender and a
    Message-ID domain of the real world, and an owner to name in each reply."""
    r = cfg.reply
    addr = address_of(r.from_)
    for what, domain in (("[reply] from", addr.rpartition("@")[2]), ("[reply] domain", r.domain)):
        last = domain.lower().rstrip(".").rpartition(".")[2]
        if not domain or "." not in domain or last in LOCAL_DOMAINS:
            raise UsageError(f"--send with {what} {domain or r.from_!r}: a reply must come from a "
                             "domain of the real world (not localhost): set it in the configuration")
    if not address_of(r.owner):
        raise UsageError("--send needs [reply] owner, the address of whoever runs this bot (each "
                         "reply names them, for questions and to opt out)")


def opted_out(cfg: WatchConfig) -> set[str]:
    """The addresses and Message-IDs of [reply] opt_out (one a line, # comments),
    read anew each pass: never answered."""
    if not cfg.reply.opt_out:
        return set()
    try:
        lines = Path(cfg.reply.opt_out).expanduser().read_text().splitlines()
    except OSError as exc:
        raise InfraError(f"[reply] opt_out {cfg.reply.opt_out}: {exc.strerror}") from None
    return {ln.split("#", 1)[0].strip().strip("<>").lower() for ln in lines} - {""}


def reply_id(key: str, cfg: WatchConfig) -> str:
    return f"foliofarm-{key}@{cfg.reply.domain}"


def recipients(anchor: Message, cfg: WatchConfig) -> tuple[str, list[str]]:
    """(To, Cc): To the series' author, the first address of its From
    (validated); Cc the followed lists it was sent to (cc = "lists"), every To
    and Cc (cc = "all") or none; at most max_recipients in all, lists first."""
    author = anchor.sender
    if not author:
        raise NoAddress(f"its From ({anchor.author[:80]!r}) holds no address a reply may go to")
    name = re.sub(r"[^\w .,'-]", "", parseaddr(anchor.author)[0])[:60].strip()
    mine = address_of(cfg.reply.from_)
    lists = [a.lower() for a in cfg.interest.lists]
    seen, cc = {author, mine}, []
    if cfg.reply.cc != "none":
        given = [r.strip().lower() for r in anchor.recipients]
        for a in [r for r in given if r in lists] + [r for r in given if r not in lists]:
            if a in seen or len(a) > 254 or not ADDRESS.fullmatch(a):
                continue
            if cfg.reply.cc == "all" or a in lists:
                seen.add(a)
                cc.append(a)
    return formataddr((name, author)), cc[:cfg.reply.max_recipients - 1]


def compose(anchor: Message, key: str, body: str, cfg: WatchConfig) -> EmailMessage:
    msg = EmailMessage()
    to, cc = recipients(anchor, cfg)
    msg["From"] = cfg.reply.from_
    msg["To"] = to
    if cc:
        msg["Cc"] = ", ".join(cc)
    subject = shown.header(anchor.subject or "(no subject)")
    msg["Subject"] = subject if subject.lower().startswith("re:") else f"Re: {subject}"
    msg["Date"] = formatdate(localtime=False)
    msg["Message-ID"] = f"<{reply_id(key, cfg)}>"
    msg["In-Reply-To"] = f"<{anchor.msgid}>"
    # the anchor and its parent: a thread's place, not a copy of whatever it carried
    msg["References"] = " ".join(f"<{r}>" for r in [*anchor.refs[-1:], anchor.msgid])
    msg["X-Mailer"] = "foliofarm watch"
    body += footer(cfg)          # in the signature: who runs it, how to opt out, the status page
    body = shown.mail(body)      # a reproducer's lines, a console's, a Subject: escapes shown
    msg.set_content(body, charset="utf-8", cte="quoted-printable" if not body.isascii() else "7bit")
    return msg


def addressed(msg: EmailMessage) -> list[str]:
    """Every address a composed reply goes to."""
    return [a for _, a in getaddresses([str(msg["To"]), str(msg.get("Cc", ""))]) if a]


def in_outbox(outbox: Path, msgid: str) -> bool:
    box = mailbox.Maildir(outbox, create=True)
    want = f"<{msgid}>"
    return any((m.get("Message-ID") or "").strip() == want for m in box)


def to_outbox(outbox: Path, msg: EmailMessage) -> None:
    """Into the maildir, unless a message of that Message-ID is there already."""
    if not in_outbox(outbox, str(msg["Message-ID"]).strip("<>")):
        mailbox.Maildir(outbox, create=True).add(msg)


def login(cfg: WatchConfig) -> tuple[str, str] | None:
    """(user, password) from [smtp] login_file: two lines, a relative name read
    from $CREDENTIALS_DIRECTORY (systemd's LoadCredential=); None: no login.
    Never from the environment, which a child could inherit."""
    name = cfg.smtp.login_file
    if not name:
        return None
    lines, path = secret(name, "[smtp] login_file")
    if len(lines) < 2 or not lines[0].strip():
        raise InfraError(f"[smtp] login_file {path}: expected two lines, the user and the password")
    return lines[0].strip(), lines[1]


def secret(name: str, what: str) -> tuple[list[str], Path]:
    """The lines of a credential file (a relative name read from
    $CREDENTIALS_DIRECTORY when set), and where it was."""
    path = Path(name)
    if not path.is_absolute() and os.environ.get("CREDENTIALS_DIRECTORY"):
        path = Path(os.environ["CREDENTIALS_DIRECTORY"]) / path
    try:
        return path.read_text().splitlines(), path
    except OSError as exc:
        raise InfraError(f"{what} {path}: {exc.strerror}") from None


class Sender:
    """SMTP delivery with STARTTLS and the login of [smtp] login_file, at most
    one message every ``interval_seconds``. A refusal before the server took
    the message is an InfraError (it may be tried again); a failure after the
    message was handed over is SendUnknown (never tried again)."""

    def __init__(self, cfg: WatchConfig) -> None:
        self.cfg = cfg
        self.last = 0.0
        self.credentials = login(cfg)      # read once, at the start: a mistake shows now

    def send(self, msg: EmailMessage) -> None:
        s = self.cfg.smtp
        wait = self.last + s.interval_seconds - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        handed = sent = False
        try:
            with smtplib.SMTP(s.host, s.port, timeout=120) as smtp:
                if s.starttls:
                    smtp.starttls(context=ssl.create_default_context())
                if self.credentials:
                    smtp.login(*self.credentials)
                handed = True
                smtp.send_message(msg, from_addr=address_of(self.cfg.reply.from_),
                                  to_addrs=addressed(msg))
                handed, sent = False, True    # taken: what follows (QUIT) cannot undo it
        except (smtplib.SMTPRecipientsRefused, smtplib.SMTPSenderRefused,
                smtplib.SMTPDataError) as exc:
            raise InfraError(f"the server at {s.host}:{s.port} refused the reply: {exc}") from None
        except (OSError, smtplib.SMTPException) as exc:
            if handed:
                raise SendUnknown(f"sending through {s.host}:{s.port} broke off while the "
                                  f"message was being handed over ({exc}): it may have gone "
                                  "out, so it is not sent again") from None
            if not sent:
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


def footer(cfg: WatchConfig) -> str:
    """Who runs the bot, how to opt out, where its status page is."""
    r = cfg.reply
    lines = []
    if r.owner:
        lines.append(f"This bot is run by {r.owner}: write to them with questions, or to have "
                     "your address or series left out of its replies.")
    if r.status_url:
        lines.append(f"Every series it saw, and why: {r.status_url}")
    return ("\n" + "\n".join(lines) + "\n") if lines else ""


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
    return "\n".join(head + lines + ["", *reproduce(anchor, argv), ""]) + signature()


def refused_body(kind: str, said: str, version: int, anchor: Message, argv: list[str]) -> str:
    what = {"not-applied": "could not apply this series", "not-built": "could not build this series"
            }.get(kind, "could not test this series")
    said = said.strip() or "(no reason given)"
    return "\n".join([f"foliofarm {what} (v{version}) to test it on arm64:", "",
                      *("  " + ln for ln in said.splitlines()[:30]), "",
                      *reproduce(anchor, argv), ""]) + signature()


def signature() -> str:
    return "\n-- \nfoliofarm: arm64 folio, contpte and readahead checks for 4K, 16K and 64K pages\n"

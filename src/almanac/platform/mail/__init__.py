"""Outgoing mail (DECISIONS 7): SMTP to a configured server, or with none configured an outbox
table the portal shows, each message's recipient, subject and links printed on the standard
error of the process that sent it too (on every store), and listed by `almanac mail outbox`.
Callers see only `Mailer.send`; tests point SMTP at a loopback server."""

from __future__ import annotations

import logging
import re
import smtplib
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid
from typing import Protocol, TextIO

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from almanac.platform.mail.models import OutboxMessage
from almanac.platform.store.engine import writing

log = logging.getLogger(__name__)

DEFAULT_SENDER = "Almanac <almanac@localhost>"


class MailError(Exception):
    """The mail could not be handed over; the message says to whom and why."""


@dataclass(frozen=True, slots=True)
class MailMessage:
    to: str
    subject: str
    body: str

    def __repr__(self) -> str:
        # The body may hold a one-time link; it stays out of logs and reprs.
        return f"MailMessage(to={self.to!r}, subject={self.subject!r})"


class Mailer(Protocol):
    def send(self, message: MailMessage, now: datetime) -> None:
        """Hand the message over for delivery or raise MailError."""
        ...


def send_all(mailer: Mailer, messages: Sequence[MailMessage], now: datetime) -> None:
    """Hand each message over once its transaction is committed; one that fails is logged and
    the rest still go (the move that wrote them stands)."""
    for message in messages:
        try:
            mailer.send(message, now)
        except MailError as error:
            log.warning("mail %r not sent: %s", message.subject, error)


@dataclass(frozen=True, slots=True)
class MailSettings:
    """Where mail goes: an SMTP server, or the outbox when `smtp_host` is None."""

    smtp_host: str | None = None
    smtp_port: int = 25
    sender: str = DEFAULT_SENDER
    timeout: float = 10.0


def load_mail_settings(environ: Mapping[str, str]) -> MailSettings:
    """`ALMANAC_SMTP_HOST`, `ALMANAC_SMTP_PORT` (25) and `ALMANAC_MAIL_FROM`; no host means the
    outbox."""
    return MailSettings(
        smtp_host=environ.get("ALMANAC_SMTP_HOST") or None,
        smtp_port=int(environ.get("ALMANAC_SMTP_PORT") or "25"),
        sender=environ.get("ALMANAC_MAIL_FROM") or DEFAULT_SENDER,
    )


def _email(message: MailMessage, sender: str, now: datetime) -> EmailMessage:
    mail = EmailMessage()
    mail["From"] = sender
    mail["To"] = message.to
    mail["Subject"] = message.subject
    mail["Date"] = format_datetime(now)
    mail["Message-ID"] = make_msgid(domain="almanac.invalid")
    mail.set_content(message.body)
    return mail


class SmtpMailer:
    """Sends each message through one SMTP connection to the configured server."""

    def __init__(self, settings: MailSettings) -> None:
        if settings.smtp_host is None:
            raise ValueError("SmtpMailer needs an SMTP host")
        self._settings = settings

    def send(self, message: MailMessage, now: datetime) -> None:
        s = self._settings
        assert s.smtp_host is not None
        try:
            with smtplib.SMTP(s.smtp_host, s.smtp_port, timeout=s.timeout) as smtp:
                smtp.send_message(_email(message, s.sender, now))
        except (OSError, smtplib.SMTPException) as exc:
            raise MailError(
                f"mail to {message.to} could not be handed to {s.smtp_host}:{s.smtp_port}: {exc}"
            ) from None
        log.info("mail %r handed to %s:%s", message.subject, s.smtp_host, s.smtp_port)


_LINK = re.compile(r"https?://[^\s<>\"']+")
_CLOSING = ".,;:!?"
_PAIRS = {")": "(", "]": "[", "}": "{"}


def _bare_link(found: str) -> str:
    """A link found in running text without the punctuation of the sentence around it: a
    closing `.`, `,`, `:`... and a bracket the link does not open itself (`(https://x/a)`),
    so that a terminal that makes the printed line clickable opens the page."""
    while found:
        last = found[-1]
        if last in _CLOSING or (last in _PAIRS and found.count(last) > found.count(_PAIRS[last])):
            found = found[:-1]
        else:
            break
    return found


def mail_links(body: str) -> list[str]:
    """Every link of a message's body (a verification link, say), in order, without the
    punctuation of the sentence around it (`_bare_link`)."""
    return [_bare_link(link) for link in _LINK.findall(body)]


def console_note(message: MailMessage) -> str:
    """The lines the outbox prints for a message: recipient, subject, and each link of the body
    (a verification link, say), one a line with nothing after it."""
    lines = [f"mail to {message.to} (kept in the outbox, no SMTP server set): {message.subject}"]
    lines.extend(f"  {link}" for link in mail_links(message.body))
    return "\n".join(lines)


def outbox_entry(message: OutboxMessage) -> str:
    """One kept message as `almanac mail outbox` shows it: its time (UTC), recipient and
    subject, then each link of its body, one a line."""
    lines = [
        f"{message.created_at:%Y-%m-%d %H:%M:%S} UTC to {message.to_address}: {message.subject}"
    ]
    lines.extend(f"  {link}" for link in mail_links(message.body))
    return "\n".join(lines)


class OutboxMailer:
    """Keeps each message in the `mail_outbox` table (no SMTP server configured) and prints its
    recipient, subject and links on the console (`console`, else standard error at the time of
    sending: the console of the process that sent it)."""

    def __init__(self, engine: Engine, console: TextIO | None = None) -> None:
        self._engine = engine
        # The person who started a service with no mail server often has no operator yet to
        # read the outbox: the console is where they can open the first verification link.
        self._console = console

    def send(self, message: MailMessage, now: datetime) -> None:
        with Session(writing(self._engine)) as db, db.begin():
            db.add(
                OutboxMessage(
                    to_address=message.to,
                    subject=message.subject,
                    body=message.body,
                    created_at=now,
                )
            )
        log.info("mail %r kept in the outbox", message.subject)
        print(console_note(message), file=self._console or sys.stderr, flush=True)


def outbox(db: Session, limit: int = 100) -> list[OutboxMessage]:
    """The newest messages in the outbox, newest first."""
    return list(
        db.scalars(
            select(OutboxMessage).order_by(OutboxMessage.id.desc()).limit(max(1, min(limit, 1000)))
        )
    )


def mailer_for(settings: MailSettings, engine: Engine) -> Mailer:
    """SMTP when a host is configured, the outbox otherwise, whose messages are printed on the
    console on every store: a first account on PostgreSQL needs its verification link as much
    as one on the embedded default. A deployment whose logs others read sets an SMTP server,
    which keeps the links off the console."""
    if settings.smtp_host:
        return SmtpMailer(settings)
    return OutboxMailer(engine)

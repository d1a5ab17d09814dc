"""Outgoing mail (DECISIONS 7): the `Mailer` port every move hands its mail to, and the outbox,
a table the portal shows (each message's subject and links printed on the service's console
too) where mail goes when no SMTP server is configured. The SMTP sender, and the choice between
the two, is an adapter: `sandbox/smtp.py`."""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, TextIO

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from almanac.platform.mail.models import OutboxMessage
from almanac.platform.store.engine import writing

log = logging.getLogger(__name__)


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


_LINK = re.compile(r"https?://[^\s<>\"']+")


def console_note(message: MailMessage) -> str:
    """The lines the outbox prints for a message: recipient, subject, and each link of the body
    (a verification link, say), one a line."""
    lines = [f"mail to {message.to} (kept in the outbox, no SMTP server set): {message.subject}"]
    lines.extend(f"  {link}" for link in _LINK.findall(message.body))
    return "\n".join(lines)


class OutboxMailer:
    """Keeps each message in the `mail_outbox` table (no SMTP server configured) and, with
    `show_links`, prints its subject and links on the console (`console`, else standard error
    at the time of sending)."""

    def __init__(
        self, engine: Engine, console: TextIO | None = None, *, show_links: bool = True
    ) -> None:
        self._engine = engine
        # On the embedded default the person who started the service has no mail server and
        # often no operator yet to read the outbox: the console is where they can open a link.
        self._console = console
        self._show_links = show_links

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
        if self._show_links:
            print(console_note(message), file=self._console or sys.stderr, flush=True)


def outbox(db: Session, limit: int = 100) -> list[OutboxMessage]:
    """The newest messages in the outbox, newest first."""
    return list(
        db.scalars(
            select(OutboxMessage).order_by(OutboxMessage.id.desc()).limit(max(1, min(limit, 1000)))
        )
    )

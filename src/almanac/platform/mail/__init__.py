"""Outgoing mail (DECISIONS 7): the `Mailer` port every move hands its mail to, and the outbox,
a table the portal shows (each message's recipient, subject and links printed on the console of
the process that sent it too, on every store, and listed by `almanac mail outbox`) where mail
goes when no SMTP server is configured. The SMTP sender, and the choice between the two, is an
adapter: `sandbox/smtp.py`."""

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

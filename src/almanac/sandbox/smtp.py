"""Mail handed to an SMTP server (DECISIONS 7; `ALMANAC_SMTP_HOST`), and the service's choice
between it and the outbox of `platform/mail`. Tests point SMTP at a loopback server."""

from __future__ import annotations

import logging
import smtplib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid

from sqlalchemy import Engine

from almanac.platform.mail import Mailer, MailError, MailMessage, OutboxMailer

log = logging.getLogger(__name__)

DEFAULT_SENDER = "Almanac <almanac@localhost>"


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


def mailer_for(settings: MailSettings, engine: Engine) -> Mailer:
    """SMTP when a host is configured, the outbox otherwise, whose messages are printed on the
    console on every store: a first account on PostgreSQL needs its verification link as much
    as one on the embedded default. A deployment whose logs others read sets an SMTP server,
    which keeps the links off the console."""
    if settings.smtp_host:
        return SmtpMailer(settings)
    return OutboxMailer(engine)

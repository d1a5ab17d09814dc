"""What every request handler shares: settings, the clock, the mailer, the database."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from almanac.platform import accounts
from almanac.platform.accounts import Account, Passwords
from almanac.platform.clock import Clock
from almanac.platform.mail import Mailer, MailError, MailMessage
from almanac.platform.publishing.identity.proof import DomainProver
from almanac.platform.publishing.uploads.uploads import ImportsJudge
from almanac.platform.webhooks.endpoints import EndpointAddresses
from almanac.settings import Settings

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ApiContext:
    settings: Settings
    clock: Clock
    mailer: Mailer
    engine: Engine
    sessions: sessionmaker[Session]
    """Sessions for requests that only read (`store.engine.reading`: on SQLite a deferred
    transaction, never waiting for a writer; on PostgreSQL each statement on its own)."""
    write_sessions: sessionmaker[Session]
    """Sessions for requests that may write (the write lock taken when the transaction begins)."""
    passwords: Passwords
    tool_file: Path
    domain_prover: DomainProver
    """Tries a domain's TXT record and well-known file ("Check now")."""
    imports: ImportsJudge
    """Judges an upload's imports (the tool's `checkImports`)."""
    endpoint_addresses: EndpointAddresses
    """Checks a webhook endpoint's host resolves to public addresses only."""

    def now(self) -> datetime:
        """The one clock read of a request; an aware moment."""
        moment = self.clock()
        if moment.tzinfo is None:
            raise ValueError("the API clock must give timezone-aware moments")
        return moment

    def mail_verification(self, account: Account, token: str, now: datetime) -> None:
        """Mail the verification link; a mail server that fails is logged, the account
        stands."""
        link = accounts.verification_link(self.settings.base_url, token)
        message = MailMessage(
            to=account.email,
            subject="Verify your e-mail address for Almanac",
            body=(
                "Open this link within 24 hours to verify your e-mail address:\n\n"
                f"{link}\n\nIf you did not sign up for Almanac, ignore this message.\n"
            ),
        )
        try:
            self.mailer.send(message, now)
        except MailError as exc:
            # The account stands; the person can ask for a new mail once the server is back.
            log.warning("verification mail for account %s not sent: %s", account.id, exc)

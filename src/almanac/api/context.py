"""What every request handler shares: settings, the clock, the mailer, the database."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from almanac.platform.accounts import Passwords
from almanac.platform.clock import Clock
from almanac.platform.mail import Mailer
from almanac.platform.publishing.proof import DomainProver
from almanac.platform.publishing.uploads import ImportsJudge
from almanac.settings import Settings


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

    def now(self) -> datetime:
        """The one clock read of a request; an aware moment."""
        moment = self.clock()
        if moment.tzinfo is None:
            raise ValueError("the API clock must give timezone-aware moments")
        return moment

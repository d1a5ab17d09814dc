"""Account tests run on PostgreSQL and on SQLite, each schema made by the migrations."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine, text
from sqlalchemy.orm import Session

from almanac.platform.accounts import Argon2Parameters, Passwords
from almanac.platform.store.engine import make_engine, upgrade_database

T0 = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)

# Children before parents, so plain DELETEs (much faster than TRUNCATE) empty them.
ACCOUNT_TABLES = (
    # Agent tokens and login codes point at accounts and organizations.
    "agent_tokens",
    "agent_device_codes",
    # Publishing rows point at accounts, organizations and invitation requests.
    "store_listings",
    "plugin_shadow_runs",
    "plugin_rollouts",
    "portal_notices",
    "portal_review_decisions",
    "portal_attestations",
    "portal_review_information",
    "portal_upload_checks",
    "portal_uploads",
    "domain_checks",
    "domain_claims",
    "invitation_decisions",
    "agreement_acceptances",
    "agreement_versions",
    "plugin_id_bindings",
    # Rows of readers and reports point at accounts and organizations: they go first.
    "reader_feeds",
    "reports",
    "reader_shown_preferences",
    "organization_shown_defaults",
    "plugin_reader_organizations",
    "plugin_reader_people",
    "organization_members",
    "staff_roles",
    "web_sessions",
    "api_tokens",
    "email_verifications",
    "organizations",
    "accounts",
    "invitation_requests",
    "mail_outbox",
    # The limits' counts, so each test's attempts start from none.
    "limit_attempts",
)


class SteppedClock:
    """The moment the code under test reads; the test moves it on."""

    def __init__(self, start: datetime = T0) -> None:
        self.moment = start

    def __call__(self) -> datetime:
        return self.moment

    def advance(self, delta: timedelta) -> datetime:
        self.moment += delta
        return self.moment


def empty_account_tables(engine: Engine) -> None:
    """Remove every row of the account tables (PostgreSQL), so tests sharing the session's
    database start from nothing."""
    with engine.begin() as conn:
        conn.execute(text("UPDATE plugins SET publisher_organization_id = NULL"))
        for table in ACCOUNT_TABLES:
            conn.execute(text(f"DELETE FROM {table}"))


@pytest.fixture(scope="session")
def migrated_postgres_url(postgres_url: str) -> str:
    upgrade_database(postgres_url)
    return postgres_url


@pytest.fixture(scope="session")
def accounts_sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("accounts-template") / "almanac.db"
    upgrade_database(f"sqlite:///{path}")
    return path


@pytest.fixture(scope="session")
def passwords() -> Passwords:
    return Passwords(Argon2Parameters.fast())


@pytest.fixture
def clock() -> SteppedClock:
    return SteppedClock()


@pytest.fixture(params=["postgresql", "sqlite"])
def accounts_engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    if request.param == "postgresql":
        engine = make_engine(request.getfixturevalue("migrated_postgres_url"))
        empty_account_tables(engine)
    else:
        path = tmp_path / "almanac.db"
        shutil.copy(request.getfixturevalue("accounts_sqlite_template"), path)
        engine = make_engine(f"sqlite:///{path}")
    yield engine
    engine.dispose()


@pytest.fixture
def db(accounts_engine: Engine) -> Iterator[Session]:
    with Session(accounts_engine, expire_on_commit=False) as session:
        yield session

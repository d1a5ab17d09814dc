"""The sessions of requests that only read, on PostgreSQL: each statement on its own
(`almanac.platform.store.engine.reading`), so a read spends no round trips on BEGIN and
ROLLBACK; the sessions of requests that may write keep their one transaction."""

from __future__ import annotations

from sqlalchemy import Engine, text

from almanac.api.app import create_app
from almanac.api.context import ApiContext
from almanac.platform.mail import OutboxMailer
from tests.accounts.conftest import SteppedClock
from tests.api.conftest import offline_prover, settings_for


def _context(engine: Engine) -> ApiContext:
    app = create_app(
        settings_for(str(engine.url), "http://127.0.0.1:9"),
        clock=SteppedClock(),
        mailer=OutboxMailer(engine),
        engine=engine,
        domain_prover=offline_prover(),
    )
    context: ApiContext = app.state.almanac
    return context


def _state_between_statements(engine: Engine, sessions: object) -> str:
    """The state PostgreSQL shows for a session's connection after its first statement."""
    with sessions() as db:  # type: ignore[operator]
        pid = db.scalar(text("SELECT pg_backend_pid()"))
        with engine.connect() as other:
            state = other.scalar(
                text("SELECT state FROM pg_stat_activity WHERE pid = :pid"), {"pid": pid}
            )
    return str(state)


def test_a_reading_session_holds_no_transaction_between_statements(pg_engine: Engine) -> None:
    context = _context(pg_engine)
    assert _state_between_statements(pg_engine, context.sessions) == "idle"
    assert _state_between_statements(pg_engine, context.write_sessions) == "idle in transaction"


def test_a_reading_session_still_reads_what_was_committed(pg_engine: Engine) -> None:
    context = _context(pg_engine)
    with context.write_sessions() as writer, context.sessions() as reader:
        writer.execute(text("CREATE TABLE read_probe (n int)"))
        writer.execute(text("INSERT INTO read_probe VALUES (1)"))
        writer.commit()
        try:
            assert reader.scalar(text("SELECT count(*) FROM read_probe")) == 1
            writer.execute(text("INSERT INTO read_probe VALUES (2)"))
            # Not committed: not seen.
            assert reader.scalar(text("SELECT count(*) FROM read_probe")) == 1
            writer.rollback()
        finally:
            writer.execute(text("DROP TABLE read_probe"))
            writer.commit()

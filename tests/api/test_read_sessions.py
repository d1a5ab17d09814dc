"""The requests' sessions on PostgreSQL. Those of requests that only read run each statement on
its own (`almanac.platform.store.engine.reading`), so a read spends no round trips on BEGIN and
ROLLBACK; those of requests that may write keep their one transaction. Closing a session never
waits for the thread pool the requests waiting for a connection hold."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import anyio
import httpx
from sqlalchemy import Engine, create_engine, text

from almanac.api.app import create_app
from almanac.api.context import ApiContext
from almanac.platform.mail import OutboxMailer
from tests.accounts.conftest import SteppedClock
from tests.api.conftest import offline_prover, settings_for


def _app(engine: Engine):  # type: ignore[no-untyped-def]
    return create_app(
        settings_for(str(engine.url), "http://127.0.0.1:9"),
        clock=SteppedClock(),
        mailer=OutboxMailer(engine),
        engine=engine,
        domain_prover=offline_prover(),
    )


def _context(engine: Engine) -> ApiContext:
    context: ApiContext = _app(engine).state.almanac
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


def test_closing_sessions_does_not_wait_for_threads_held_by_requests_waiting_for_them(
    pg_engine: Engine,
) -> None:
    """One pooled connection, two threads, six requests at once (each reads a session cookie,
    then is refused): a session's close must not queue behind requests whose threads wait for
    the connection it is returning; each request is answered, none fails on the pool's
    timeout."""
    engine = create_engine(pg_engine.url, pool_size=1, max_overflow=0, pool_timeout=5)
    app = _app(engine)

    async def six_at_once() -> list[int]:
        anyio.to_thread.current_default_thread_limiter().total_tokens = 2
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(
            transport=transport,
            base_url="http://almanac.test",
            cookies={"almanac_session": "no-such-session"},
        ) as c:
            answers: list[int] = []

            async def one() -> None:
                answer = await c.get("/api/v1/store/plugins")
                answers.append(answer.status_code)

            async with anyio.create_task_group() as group:
                for _ in range(6):
                    group.start_soon(one)
            return answers

    try:
        # A thread of its own: Playwright's sync API, when a page test ran first in this
        # process, leaves an event loop set on the main thread.
        with ThreadPoolExecutor(1) as pool:
            assert pool.submit(anyio.run, six_at_once).result() == [401] * 6
    finally:
        engine.dispose()

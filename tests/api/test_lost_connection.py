"""Requests in flight when PostgreSQL drops the app's connections (issue 31, item 5): the real
app over HTTP on the real server, each request held on a table lock so that it is surely
waiting inside the database when every backend of the app is terminated
(`pg_terminate_backend`, as a restarted server or an administrator does). A read loses nothing
by running again on a new connection, so it is answered; a POST is not run a second time."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import httpx
import psycopg
from sqlalchemy import select

from almanac.platform.feeds.models import ReaderFeed
from tests.api.conftest import Api, assert_problem

LOCKED = "web_sessions"
"""Every signed-in request reads its session first: with this table locked, each request waits
inside the database until the lock goes."""
WAIT_SECONDS = 20


@dataclass
class Held:
    """The test's own connections: one holding the lock, one watching and terminating."""

    locker: psycopg.Connection
    watcher: psycopg.Connection
    terminated: set[int] = field(default_factory=set)

    def waiting(self) -> set[int]:
        """The backends of the app's database waiting for a lock."""
        rows = self.watcher.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
            " AND wait_event_type = 'Lock'"
        ).fetchall()
        return {pid for (pid,) in rows}

    def wait_for_waiters(
        self, count: int, *, new: bool = False, unless: Callable[[], bool] = lambda: False
    ) -> set[int]:
        """The backends waiting for a lock (those not terminated, when `new`) once there are
        `count`, or when `unless()` holds or the wait is over."""
        deadline = time.monotonic() + WAIT_SECONDS
        while True:
            found = self.waiting() - (self.terminated if new else set())
            if len(found) >= count or unless() or time.monotonic() > deadline:
                return found
            time.sleep(0.05)

    def terminate_the_apps_backends(self) -> set[int]:
        """Every client backend of the database but the test's own two, as
        `pg_terminate_backend` ends them."""
        rows = self.watcher.execute(
            "SELECT pid, pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND backend_type = 'client backend'"
            " AND pid <> pg_backend_pid() AND pid <> %s",
            (self.locker.info.backend_pid,),
        ).fetchall()
        ended = {pid for pid, done in rows if done}
        self.terminated |= ended
        return ended

    def release(self) -> None:
        self.locker.rollback()


@contextmanager
def held_lock(api: Api) -> Iterator[Held]:
    url = api.engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
    with (
        psycopg.connect(url) as locker,
        psycopg.connect(url, autocommit=True) as watcher,
    ):
        locker.execute(f"LOCK TABLE {LOCKED} IN ACCESS EXCLUSIVE MODE")
        held = Held(locker, watcher)
        try:
            yield held
        finally:
            held.release()


def _in_thread(call: Callable[[], httpx.Response]) -> tuple[threading.Thread, list[object]]:
    answers: list[object] = []

    def run() -> None:
        try:
            answers.append(call())
        except Exception as exc:  # the test reports it as the answer
            answers.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, answers


READS = ["/api/v1/reader/plugins", "/api/v1/reader/preferences", "/api/v1/reader/feed"]


def test_reads_in_flight_when_the_connections_are_terminated_are_answered(api: Api) -> None:
    reader = api.signed_in("reader@example.org")
    for path in READS:
        assert reader.get(path).status_code == 200
    with held_lock(api) as held:
        started = []
        for path in READS:
            client = api.client()
            client.cookies = reader.cookies
            started.append(_in_thread(lambda c=client, p=path: c.get(p, timeout=60)))
        assert len(held.wait_for_waiters(len(READS))) == len(READS)
        ended = held.terminate_the_apps_backends()
        assert len(ended) >= len(READS)
        # Run again on new connections, each read waits for the lock once more.
        answered = lambda: not any(thread.is_alive() for thread, _ in started)  # noqa: E731
        again = held.wait_for_waiters(len(READS), new=True, unless=answered)
        held.release()
        for thread, _ in started:
            thread.join(60)
    answers = [answers[0] for _, answers in started]
    statuses = [a.status_code if isinstance(a, httpx.Response) else repr(a) for a in answers]
    print(f"reads in flight at the termination answered {statuses}; run again on {len(again)}")
    assert statuses == [200] * len(READS), [
        a.text if isinstance(a, httpx.Response) else a for a in answers
    ]
    # The app goes on reading on its new connections.
    assert reader.get("/api/v1/reader/plugins").status_code == 200


def test_a_post_in_flight_when_the_connections_are_terminated_runs_once(api: Api) -> None:
    reader = api.signed_in("reader@example.org")
    assert reader.get("/api/v1/reader/feed").status_code == 200
    with held_lock(api) as held:
        thread, answers = _in_thread(lambda: reader.post("/api/v1/reader/feed", timeout=60))
        assert len(held.wait_for_waiters(1)) == 1
        held.terminate_the_apps_backends()
        # Answered while the lock is still held: it did not go back to wait for it.
        thread.join(WAIT_SECONDS)
        answered_before_release = not thread.is_alive()
        again = held.waiting() - held.terminated
        held.release()
        thread.join(60)
    [answer] = answers
    assert isinstance(answer, httpx.Response), answer
    print(f"the POST in flight at the termination answered {answer.status_code}")
    assert answered_before_release and again == set()
    assert_problem(answer, 500, "INTERNAL-ERROR")
    with api.engine.connect() as conn:
        assert conn.execute(select(ReaderFeed.id)).all() == []


def test_a_read_that_loses_its_connection_twice_is_answered_internal_error(api: Api) -> None:
    """Run again once, not for as long as the database goes away."""
    reader = api.signed_in("reader@example.org")
    with held_lock(api) as held:
        thread, answers = _in_thread(lambda: reader.get("/api/v1/reader/plugins", timeout=60))
        assert len(held.wait_for_waiters(1)) == 1
        held.terminate_the_apps_backends()
        assert len(held.wait_for_waiters(1, new=True)) == 1
        held.terminate_the_apps_backends()
        thread.join(WAIT_SECONDS)
        answered_before_release = not thread.is_alive()
        held.release()
        thread.join(60)
    [answer] = answers
    assert isinstance(answer, httpx.Response), answer
    assert answered_before_release
    assert_problem(answer, 500, "INTERNAL-ERROR")

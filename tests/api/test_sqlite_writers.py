"""The API on the embedded SQLite default while another process writes to the same file
(issue 21): no request fails and no keep-alive connection is reset.

On SQLite in WAL mode a deferred transaction that reads, and then writes after another
connection committed, fails at once with "database is locked" (SQLITE_BUSY_SNAPSHOT: its
snapshot is stale, and no busy timeout covers that). Requests that may write therefore take
the write lock when their transaction begins (BEGIN IMMEDIATE, `ApiContext.write_sessions`)
and wait for the other writer instead.

- Through the real app over HTTP (uvicorn on loopback), a few hundred mixed requests from
  several keep-alive clients at once (sign-in, preferences, tokens used and revoked, reports,
  host actions, and reads) while a second process commits short write transactions in a
  loop, then while a child process makes real runs of an example plug-in (downloads from a
  loopback TLS server, the locked room, `write_run`): no answer >= 500, no transport error,
  every answer the one the request should get, and the writer really committed meanwhile.
- The session `get_db` gives a request that may write, on its own: it reads, another
  connection starts a write in a thread, then it writes and commits. The other writer waits
  for it and both succeed; a deferred session fails there with "database is locked".
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest
from anyio.from_thread import start_blocking_portal
from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session
from starlette.requests import Request

from almanac.api.app import create_app
from almanac.api.context import ApiContext
from almanac.api.deps import get_db, may_write
from almanac.orchestration.folders import register_folder
from almanac.platform import accounts
from almanac.platform.accounts import Passwords
from almanac.platform.mail import OutboxMailer
from almanac.platform.store.engine import make_engine, upgrade_database, writing
from almanac.platform.store.models import Record, Run
from tests.accounts.conftest import T0, SteppedClock
from tests.accounts.helpers import PASSWORD
from tests.api.conftest import Api, Dispatcher, live_api, settings_for
from tests.conftest import REPO
from tests.orchestration.harness import approve, write_plugin

EXAMPLE = REPO / "examples" / "bcrd-reference-dollar"
"""The example with the largest batch (8,112 records on its first run)."""
READERS = 4
"""Reader clients making requests at once, besides the operator's."""
ROUNDS = 8
"""Rounds of requests per client: 4 readers x 8 x 11 + the operator's 8 x 7 = 408 requests."""
WRITER_SECONDS = 60
"""The writers' own bound; each test stops its writer as soon as its requests are done."""


# -- the store and the second process -------------------------------------------------------


@pytest.fixture(scope="module")
def store_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sqlite-writers") / "almanac.db"
    upgrade_database(f"sqlite:///{path}")
    return path


@pytest.fixture
def store_path(store_template: Path, tmp_path: Path) -> Path:
    """A fresh embedded store file (a copy of the migrated template)."""
    path = tmp_path / "almanac.db"
    shutil.copy(store_template, path)
    return path


@pytest.fixture
def engine(store_path: Path) -> Iterator[Engine]:
    engine = make_engine(f"sqlite:///{store_path}")
    yield engine
    engine.dispose()


def approved_plugin(engine: Engine, folder: Path) -> str:
    """Register the plug-in folder and approve its digest, as an operator would."""
    now = datetime.now(UTC)
    plugin_id, _ = register_folder(engine, folder, now=now)
    approve(engine, plugin_id, now)
    return plugin_id


def successful_runs(engine: Engine, plugin_id: str) -> int | None:
    with engine.connect() as conn:
        return conn.scalar(
            select(func.count())
            .select_from(Run)
            .where(Run.plugin_id == plugin_id, Run.outcome == "success")
        )


def small_plugin(engine: Engine, parent: Path, plugin_id: str) -> str:
    return approved_plugin(
        engine, write_plugin(parent, plugin_id, schedule="0 6 * * *", timezone="UTC")
    )


@dataclass
class Writer:
    """The second process (`tests/api/sqlite_writer.py`) and what it printed."""

    process: subprocess.Popen[bytes]
    out: Path
    err: Path
    stop_file: Path

    def events(self) -> list[dict[str, Any]]:
        lines = self.out.read_text().splitlines()
        return [json.loads(line) for line in lines if line.endswith("}")]

    def commits(self, between: tuple[float, float] | None = None) -> list[dict[str, Any]]:
        found = [e for e in self.events() if e["event"] == "commit"]
        if between is None:
            return found
        return [e for e in found if between[0] <= e["at"] <= between[1]]

    def why(self) -> str:
        return f"writer stderr:\n{self.err.read_text()[-4000:]}"


@contextmanager
def second_process(folder: Path, *args: str) -> Iterator[Writer]:
    """Start the writer and wait until it is ready to write; at the end ask it to stop (a
    file it looks for between commits) and wait for it to finish."""
    out, err, stop_file = folder / "writer.jsonl", folder / "writer.err", folder / "writer.stop"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "tests.api.sqlite_writer", *args,
             "--seconds", str(WRITER_SECONDS), "--stop-file", str(stop_file)],
            cwd=REPO, stdout=stdout, stderr=stderr,
        )  # fmt: skip
    writer = Writer(process, out, err, stop_file)
    try:
        deadline = time.monotonic() + 30
        while not any(e["event"] == "ready" for e in writer.events()):
            assert writer.process.poll() is None, writer.why()
            assert time.monotonic() < deadline, "the writer did not get ready in 30 s"
            time.sleep(0.05)
        yield writer
    finally:
        writer.stop_file.touch()
        try:
            writer.process.wait(60)
        except subprocess.TimeoutExpired:
            writer.process.kill()
            writer.process.wait(10)
    assert writer.process.returncode == 0, writer.why()
    assert writer.events()[-1]["event"] == "done", writer.why()


# -- the requests -----------------------------------------------------------------------------


@dataclass
class Tally:
    """Every answer and transport error of the requests, from every client thread."""

    answers: list[tuple[str, int]] = field(default_factory=list)
    unexpected: list[tuple[str, int, str]] = field(default_factory=list)
    transport_errors: list[tuple[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def call(
        self, client: httpx.Client, label: str, expect: int, method: str, url: str, **kw: Any
    ) -> httpx.Response | None:
        """One request; None when it never got an answer (reset, closed, timed out)."""
        try:
            response = client.request(method, url, **kw)
        except httpx.TransportError as error:
            with self.lock:
                self.transport_errors.append((label, repr(error)))
            return None
        with self.lock:
            self.answers.append((label, response.status_code))
            if response.status_code != expect:
                self.unexpected.append((label, response.status_code, response.text[:300]))
        return response

    def server_errors(self) -> list[tuple[str, int]]:
        return [(label, status) for label, status in self.answers if status >= 500]


@dataclass(frozen=True)
class Scene:
    """What the clients work on: the reader's plug-in, the operator's, the reader's days."""

    reader_plugin: str
    host_plugin: str
    first: date
    last: date


def reader_rounds(client: httpx.Client, tally: Tally, scene: Scene, email: str) -> None:
    """A reader on one keep-alive client: per round it signs in, reads, turns the plug-in on
    or off, reads the days, reports, makes a token, uses it and revokes it."""
    days = {"from": scene.first.isoformat(), "to": scene.last.isoformat()}
    days["today"] = days["to"]
    shown = f"plugins.{scene.reader_plugin}.shown"
    for n in range(ROUNDS):
        signin = {"email": email, "password": PASSWORD}
        tally.call(client, "sign-in", 200, "POST", "/api/v1/auth/signin", json=signin)
        tally.call(client, "me", 200, "GET", "/api/v1/auth/me")
        preference = {"preferences": {shown: n % 2 == 0}}
        tally.call(client, "preferences", 200, "PUT", "/api/v1/reader/preferences", json=preference)
        tally.call(client, "days", 200, "GET", "/api/v1/reader/days", params=days)
        report = {"category": "wrong-data", "note": f"round {n}"}
        reports = f"/api/v1/reader/plugins/{scene.reader_plugin}/reports"
        tally.call(client, "report", 201, "POST", reports, json=report)
        tally.call(client, "plugins", 200, "GET", "/api/v1/reader/plugins")
        made = tally.call(client, "token", 201, "POST", "/api/v1/tokens", json={"name": f"t{n}"})
        if made is not None and made.status_code == 201:
            # A GET with a bearer token keeps the token's last use in a short write of its own.
            bearer = {"Authorization": f"Bearer {made.json()['token']}"}
            tally.call(client, "bearer", 200, "GET", "/api/v1/reader/preferences", headers=bearer)
            tally.call(client, "tokens", 200, "GET", "/api/v1/tokens")
            revoke = f"/api/v1/tokens/{made.json()['id']}"
            tally.call(client, "revoke", 204, "DELETE", revoke)
        records = f"/api/v1/reader/plugins/{scene.reader_plugin}/records"
        tally.call(client, "records", 200, "GET", records, params=days)


def operator_rounds(client: httpx.Client, tally: Tally, scene: Scene) -> None:
    """An operator on one keep-alive client: per round pause, resume, take off and put back on
    the shelf, record the retain answer, and read the plug-in and its runs."""
    base = f"/api/v1/host/plugins/{scene.host_plugin}"
    for n in range(ROUNDS):
        tally.call(client, "pause", 200, "POST", f"{base}/pause")
        tally.call(client, "resume", 200, "POST", f"{base}/resume")
        tally.call(client, "off-shelf", 200, "POST", f"{base}/take-off-shelf")
        tally.call(client, "on-shelf", 200, "POST", f"{base}/put-on-shelf")
        retain = {"answer": "yes" if n % 2 else "unknown", "terms_read": True}
        tally.call(client, "retention", 200, "POST", f"{base}/retention", json=retain)
        tally.call(client, "host-plugin", 200, "GET", base)
        tally.call(client, "runs", 200, "GET", f"{base}/runs")


WRITE_LABELS = frozenset(
    {"sign-in", "preferences", "report", "token", "bearer", "revoke", "pause", "resume",
     "off-shelf", "on-shelf", "retention"}
)  # fmt: skip


@dataclass
class Clients:
    """The signed-in clients, made before the second process starts (the test's own set-up
    writes through plain sessions, which the other writer would make fail)."""

    readers: dict[str, httpx.Client]
    operator: httpx.Client

    @classmethod
    def of(cls, api: Api) -> Clients:
        emails = [f"reader{i}@example.org" for i in range(READERS)]
        return cls(
            readers={email: api.signed_in(email) for email in emails},
            operator=api.signed_in("operator@example.org", operator=True),
        )


def requests_meanwhile(clients: Clients, scene: Scene) -> tuple[Tally, tuple[float, float]]:
    """Every client's rounds at once; the tally and the wall-clock span they took."""
    tally = Tally()
    work: list[Callable[[], None]] = [
        *(partial(reader_rounds, client, tally, scene, email)
          for email, client in clients.readers.items()),
        partial(operator_rounds, clients.operator, tally, scene),
    ]  # fmt: skip
    started = time.time()
    with ThreadPoolExecutor(len(work)) as pool:
        for done in [pool.submit(job) for job in work]:
            done.result()
    return tally, (started, time.time())


def assert_all_answered(tally: Tally) -> None:
    lost = tally.transport_errors
    assert lost == [], f"{len(lost)} requests got no answer (connection reset?): {lost[:3]}"
    failed = tally.server_errors()
    assert failed == [], f"{len(failed)} answers >= 500 of {len(tally.answers)}: {failed[:3]}"
    assert tally.unexpected == [], tally.unexpected[:5]
    assert len(tally.answers) == READERS * ROUNDS * 11 + ROUNDS * 7
    assert sum(label in WRITE_LABELS for label, _ in tally.answers) >= 200


# -- the tests --------------------------------------------------------------------------------


def test_requests_never_fail_while_another_process_commits(
    live_server: tuple[Dispatcher, str],
    engine: Engine,
    store_path: Path,
    passwords: Passwords,
    tmp_path: Path,
) -> None:
    ticking = small_plugin(engine, tmp_path, "ticks-writer")
    host = small_plugin(engine, tmp_path, "host-moves")
    today = datetime.now(UTC).date()
    scene = Scene(ticking, host, today - timedelta(days=6), today)
    with live_api(live_server, engine, passwords) as api:
        clients = Clients.of(api)
        with second_process(tmp_path, "ticks", str(store_path), ticking) as writer:
            tally, span = requests_meanwhile(clients, scene)
    assert_all_answered(tally)
    # The other process really wrote while the requests went on, and all it wrote is kept.
    meanwhile = writer.commits(between=span)
    assert len(meanwhile) >= 20, (len(meanwhile), writer.why())
    assert successful_runs(engine, ticking) == len(writer.commits())


def test_requests_never_fail_while_an_example_run_writes(
    live_server: tuple[Dispatcher, str],
    engine: Engine,
    store_path: Path,
    passwords: Passwords,
    tmp_path: Path,
) -> None:
    example = approved_plugin(engine, EXAMPLE)
    host = small_plugin(engine, tmp_path, "host-moves")
    context = json.loads((EXAMPLE / "fixtures" / "context.json").read_text())
    today = date.fromisoformat(context["today"])
    scene = Scene(example, host, today - timedelta(days=61), today)
    with live_api(live_server, engine, passwords) as api:
        clients = Clients.of(api)
        with second_process(tmp_path, "example", str(store_path), str(EXAMPLE)) as writer:
            tally, span = requests_meanwhile(clients, scene)
    assert_all_answered(tally)
    # Real runs wrote while the requests went on: the first one the whole fixture batch.
    runs = writer.commits()
    assert writer.commits(between=span), (runs, writer.why())
    fixture = (EXAMPLE / "fixtures" / "records.jsonl").read_text().splitlines()
    assert runs[0]["counts"]["new"] == len(fixture)
    with engine.connect() as conn:
        stored = conn.scalar(
            select(func.count()).select_from(Record).where(Record.plugin_id == example)
        )
    assert stored == len(fixture)
    assert successful_runs(engine, example) == len(runs)


# -- the session of a request that may write, on its own ------------------------------------


def request_of(method: str, *, bearer: bool = False) -> Request:
    """A request as the app receives it (only what `get_db` looks at: method and headers)."""
    headers = [(b"authorization", b"Bearer some-token")] if bearer else []
    return Request({"type": "http", "method": method, "path": "/", "headers": headers})


@dataclass
class OtherWrite:
    """A sign-up through another connection (its own engine and pool), in a thread."""

    engine: Engine
    passwords: Passwords
    committed_at: float | None = None
    error: BaseException | None = None

    def start(self) -> threading.Thread:
        """Start the sign-up in a thread of its own; returns the thread."""
        thread = threading.Thread(target=self.run)
        thread.start()
        return thread

    def run(self) -> None:
        try:
            with Session(writing(self.engine)) as db:
                accounts.sign_up(db, "other@example.org", PASSWORD, self.passwords, T0)
                db.commit()
            self.committed_at = time.monotonic()
        except BaseException as error:  # kept for the test thread to report
            self.error = error


@contextmanager
def request_session(request: Request, ctx: ApiContext) -> Iterator[Session]:
    """The session `get_db` gives `request`, opened and closed on an event loop as FastAPI
    does."""
    with start_blocking_portal() as portal:
        sessions = get_db(request, ctx)
        db = portal.call(sessions.__anext__)
        try:
            yield db
        finally:
            portal.call(sessions.aclose)


def app_context(engine: Engine, passwords: Passwords) -> ApiContext:
    """The context of the real app over `engine` (its sessions are what `get_db` hands out)."""
    app = create_app(
        settings_for(str(engine.url), "http://127.0.0.1:9"),
        clock=SteppedClock(),
        mailer=OutboxMailer(engine),
        engine=engine,
        passwords=passwords,
    )
    return app.state.almanac


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE"])
def test_a_write_request_waits_for_another_writer_instead_of_failing(
    engine: Engine, store_path: Path, passwords: Passwords, method: str
) -> None:
    """Read, another connection writes and commits, then write: the classic stale snapshot.
    The request's session holds the write lock from its first statement, so the other
    writer waits until the request commits, and both writes are kept."""
    request = request_of(method)
    assert may_write(request)
    other_engine = make_engine(f"sqlite:///{store_path}")
    with request_session(request, app_context(engine, passwords)) as db:
        assert db.scalar(select(func.count()).select_from(accounts.Account)) == 0
        other = OtherWrite(other_engine, passwords)
        thread = other.start()
        # Time enough for the other write to commit, were it not kept waiting.
        thread.join(1.0)
        accounts.sign_up(db, "first@example.org", PASSWORD, passwords, T0)
        db.commit()
        committed_at = time.monotonic()
    thread.join(30)
    other_engine.dispose()
    assert other.error is None, repr(other.error)
    assert other.committed_at is not None and other.committed_at > committed_at
    with Session(engine) as check:
        emails = check.scalars(select(accounts.Account.email).order_by(accounts.Account.email))
        assert list(emails) == ["first@example.org", "other@example.org"]


@pytest.mark.parametrize("bearer", [False, True])
def test_a_read_request_never_keeps_a_writer_waiting(
    engine: Engine, store_path: Path, passwords: Passwords, bearer: bool
) -> None:
    """A GET, with a token or not, reads in a deferred transaction: another connection's write
    goes through while it is open, and the read still sees its own snapshot (a token's use is
    kept in a short transaction of its own)."""
    request = request_of("GET", bearer=bearer)
    assert not may_write(request)
    other_engine = make_engine(f"sqlite:///{store_path}")
    try:
        with request_session(request, app_context(engine, passwords)) as db:
            assert db.scalar(select(func.count()).select_from(accounts.Account)) == 0
            other = OtherWrite(other_engine, passwords)
            thread = other.start()
            thread.join(10)
            assert not thread.is_alive() and other.error is None, repr(other.error)
            assert db.scalar(select(func.count()).select_from(accounts.Account)) == 0
    finally:
        other_engine.dispose()

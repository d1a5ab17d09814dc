"""Inside a network namespace of its own (run by `test_attempt_limits_processes.py`): two uvicorn
processes of `almanac.service:api_app`, the app `almanac up` serves in each API worker, on one
store (`LIMITS_DATABASE_URL`: a fresh PostgreSQL database reached through a Unix socket relay;
unset: an embedded SQLite file), with the real clock and production argon2.

Each limit's attempts are sent at once, alternately to the two processes, each on a new
connection: exactly the limit's number pass, the rest are 429 with `Retry-After` and the
limit's code; then each process, asked once more, refuses too. The namespace keeps Check now's
look-ups on loopback: its DNS server is a closed loopback port and no name resolves."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from sqlalchemy.orm import Session

from almanac.api.deps import SESSION_COOKIE
from almanac.platform import accounts
from almanac.platform.accounts import Passwords
from almanac.platform.publishing.identity import domains
from almanac.platform.store.engine import make_engine, upgrade_database
from tests.service.namespace import loopback_up
from tests.service.up import free_port

PASSWORD = "a long pass phrase for ada"
WRONG = PASSWORD + " (wrong)"
START_SECONDS = 120


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> str:
    loopback_up()
    url = os.environ.get("LIMITS_DATABASE_URL") or (
        f"sqlite:///{tmp_path_factory.mktemp('store') / 'almanac.db'}"
    )
    upgrade_database(url)
    return url


def _closed_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def processes(store: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[str]]:
    """The two API processes' base URLs."""
    work = tmp_path_factory.mktemp("api")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ALMANAC_", "DAGSTER_"))}
    env.update(
        ALMANAC_HOME=str(work / "home"),
        ALMANAC_DATABASE_URL=store,
        ALMANAC_DNS_SERVERS=f"127.0.0.1:{_closed_udp_port()}",
    )
    started: list[tuple[subprocess.Popen[bytes], Path]] = []
    bases = []
    try:
        for n in range(2):
            port = free_port()
            log = work / f"api-{n}.log"
            with log.open("wb") as out:
                command = [sys.executable, "-m", "uvicorn", "almanac.service:api_app"]
                command += ["--factory", "--host", "127.0.0.1", "--port", str(port)]
                process = subprocess.Popen(
                    command, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
                )
            started.append((process, log))
            bases.append(f"http://127.0.0.1:{port}")
        for (process, log), base in zip(started, bases, strict=True):
            _wait_for(base, process, log)
        yield bases
    finally:
        for process, _ in started:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
        for process, _ in started:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def _wait_for(base: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        assert process.poll() is None, log.read_text()[-5000:]
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{base}/health", timeout=2).status_code == 200:
                return
        time.sleep(0.3)
    pytest.fail(f"{base} did not answer within {START_SECONDS} s:\n{log.read_text()[-5000:]}")


@pytest.fixture(scope="module")
def owner(store: str) -> tuple[str, int]:
    """Ada's account (production argon2), an organization she owns with a named domain, and
    her session cookie."""
    engine = make_engine(store)
    now = datetime.now(UTC)
    try:
        with Session(engine, expire_on_commit=False) as db:
            made = accounts.sign_up(db, "ada@example.org", PASSWORD, Passwords(), now)
            accounts.verify_email(db, made.verification_token, now)
            org = accounts.create_organization(db, made.account, "Bank", now)
            domains.name_domain(db, org.id, made.account, "bank-limits.org", now)
            cookie = accounts.start_session(db, made.account, now)
            db.commit()
    finally:
        engine.dispose()
    return cookie, org.id


def at_once(bases: list[str], requests: list[Callable[[str], httpx.Response]]) -> Counter[int]:
    """The requests sent together, the n-th to process n % 2, each on a new connection; the
    count of each status answered. Every 429 carries `Retry-After` and is a problem."""
    with ThreadPoolExecutor(len(requests)) as pool:
        answers = list(pool.map(lambda n: requests[n](bases[n % 2]), range(len(requests))))
    for answer in answers:
        if answer.status_code == 429:
            assert answer.headers["content-type"].startswith("application/problem+json")
            assert int(answer.headers["retry-after"]) > 0
    return Counter(a.status_code for a in answers)


def refused_by_each(
    bases: list[str], request: Callable[[str], httpx.Response], code: str, most_seconds: int
) -> None:
    for base in bases:
        answer = request(base)
        assert answer.status_code == 429, answer.text
        assert answer.json()["code"] == code
        assert 0 < int(answer.headers["retry-after"]) <= most_seconds


def sign_in(email: str, password: str, address: str) -> Callable[[str], httpx.Response]:
    def send(base: str) -> httpx.Response:
        return httpx.post(
            f"{base}/api/v1/auth/signin",
            json={"email": email, "password": password},
            headers={"X-Forwarded-For": address},
            timeout=60,
        )

    return send


def test_failed_sign_ins_of_one_account(processes: list[str], owner: tuple[str, int]) -> None:
    tries = [sign_in("ada@example.org", WRONG, f"192.0.2.{n + 1}") for n in range(16)]
    assert at_once(processes, tries) == {401: 10, 429: 6}
    right = sign_in("ada@example.org", PASSWORD, "198.51.100.1")
    refused_by_each(processes, right, "SIGN-IN-LOCKED", 900)


def test_failed_sign_ins_from_one_address(processes: list[str]) -> None:
    tries = [sign_in(f"user{n}@example.org", WRONG, "203.0.113.9") for n in range(36)]
    assert at_once(processes, tries) == {401: 30, 429: 6}
    other = sign_in("someone@example.org", WRONG, "203.0.113.9")
    refused_by_each(processes, other, "SIGN-IN-ADDRESS-LIMITED", 900)


def device_code(address: str) -> Callable[[str], httpx.Response]:
    def send(base: str) -> httpx.Response:
        form = {"client_id": "almanac-plugin", "agent_name": "Claude", "machine_id": "machine-01"}
        return httpx.post(
            f"{base}/api/v1/device/code",
            data=form,
            headers={"X-Forwarded-For": address},
            timeout=60,
        )

    return send


def test_device_codes_from_one_address(processes: list[str]) -> None:
    assert at_once(processes, [device_code("192.0.2.77")] * 14) == {200: 10, 429: 4}
    refused_by_each(processes, device_code("192.0.2.77"), "DEVICE-CODE-LIMITED", 3600)


def test_check_now_of_one_organization(processes: list[str], owner: tuple[str, int]) -> None:
    cookie, org = owner

    def check(base: str) -> httpx.Response:
        return httpx.post(
            f"{base}/api/v1/portal/organizations/{org}/domain/check",
            cookies={SESSION_COOKIE: cookie},
            timeout=60,
        )

    assert at_once(processes, [check] * 13) == {200: 10, 429: 3}
    refused_by_each(processes, check, "DOMAIN-CHECK-LIMITED", 3600)


def ask(domain: str) -> Callable[[str], httpx.Response]:
    def send(base: str) -> httpx.Response:
        body = {"email": "dev@example.org", "organization": "Dev", "domain": domain, "note": ""}
        return httpx.post(f"{base}/api/developers/invitations", json=body, timeout=60)

    return send


def test_invitation_requests_of_one_address(processes: list[str]) -> None:
    requests = [ask(f"d{n}.example.org") for n in range(12)]
    assert at_once(processes, requests) == {202: 5, 429: 7}
    refused_by_each(processes, ask("d99.example.org"), "RATE-LIMITED", 86400)

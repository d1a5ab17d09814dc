"""Mail with no SMTP server (issue 30): the API as `almanac up` starts it (uvicorn, two worker
processes) prints each message's recipient, subject and links on its console, on PostgreSQL as
on the embedded default, so a first account can verify its address; and `almanac mail outbox`
reads the outbox of the store (ALMANAC_DATABASE_URL, or the embedded default), newest first."""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from almanac.platform.store.engine import upgrade_database
from almanac.service import commands
from almanac.settings import load_settings
from tests.accounts.helpers import PASSWORD
from tests.service.namespace import fresh_database
from tests.service.up import free_port

ALMANAC = str(Path(sys.executable).parent / "almanac")
VERIFY = r"http://\S+/api/v1/auth/verify\?token=\S+"
SUBJECT = "Verify your e-mail address for Almanac"


def _environment(home: Path, database_url: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ALMANAC_", "DAGSTER_"))}
    env.update(ALMANAC_HOME=str(home), ALMANAC_PORT=str(free_port()), ALMANAC_API_WORKERS="2")
    if database_url is not None:
        env["ALMANAC_DATABASE_URL"] = database_url
    return env


@contextmanager
def _store(kind: str, server_url: str, tmp_path: Path) -> Iterator[str | None]:
    """A migrated store: a fresh PostgreSQL database (its URL), or the embedded default in the
    data folder (None: no ALMANAC_DATABASE_URL)."""
    home = tmp_path / "home"
    home.mkdir()
    if kind == "sqlite":
        upgrade_database(f"sqlite:///{home / 'almanac.db'}")
        yield None
        return
    name = f"almanac_outbox_{secrets.token_hex(4)}"
    with fresh_database(server_url, name):
        url = f"{server_url.rpartition('/')[0]}/{name}"
        upgrade_database(url)
        yield url


@contextmanager
def _api(env: dict[str, str], log: Path) -> Iterator[str]:
    """The API exactly as `almanac up` runs it, its console kept in `log`; its address."""
    command = commands(load_settings(env))["api"]
    assert "--workers" in command
    with log.open("w") as out:
        process = subprocess.Popen(
            command, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    base = f"http://127.0.0.1:{env['ALMANAC_PORT']}"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            assert process.poll() is None, log.read_text()[-5000:]
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{base}/health", timeout=2).status_code == 200:
                    break
            time.sleep(0.3)
        else:
            pytest.fail("the API did not answer: " + log.read_text()[-5000:])
        yield base
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def _printed(log: Path, email: str) -> str:
    """The verification link the API's console shows for `email` (waits for it a while)."""
    head = f"mail to {email} (kept in the outbox, no SMTP server set): {SUBJECT}"
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        text = log.read_text()
        if head in text:
            after = text.split(head, 1)[1]
            found = re.match(rf"\n  ({VERIFY})\n", after)
            assert found, after[:500]
            return found.group(1)
        time.sleep(0.1)
    pytest.fail(f"the console shows no mail to {email}:\n{log.read_text()[-5000:]}")


def _outbox(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [ALMANAC, "mail", "outbox", *args], env=env, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("kind", ["postgresql", "sqlite"])
def test_without_smtp_the_api_prints_each_mail_and_almanac_mail_outbox_lists_it(
    kind: str, postgres_server_url: str, tmp_path: Path
) -> None:
    with _store(kind, postgres_server_url, tmp_path) as database_url:
        env = _environment(tmp_path / "home", database_url)
        log = tmp_path / "api.log"
        with _api(env, log) as base:
            for email in ("ada@example.org", "bob@example.org"):
                made = httpx.post(
                    f"{base}/api/v1/auth/signup", json={"email": email, "password": PASSWORD}
                )
                assert made.status_code == 201, made.text
            # The first account verifies its address from the console alone.
            link = _printed(log, "ada@example.org")
            assert link.startswith(f"{base}/api/v1/auth/verify?token=")
            answer = httpx.get(link)
            assert answer.json() == {"verified": True, "email": "ada@example.org"}
            bob = _printed(log, "bob@example.org")

        # The operators' command reads the same outbox from the store, newest first.
        listed = _outbox(env)
        assert listed.returncode == 0, listed.stderr
        entries = re.findall(
            rf"^(\d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d UTC) to (\S+): (.+)\n  ({VERIFY})$",
            listed.stdout,
            re.M,
        )
        assert [(to, subject, url) for _, to, subject, url in entries] == [
            ("bob@example.org", SUBJECT, bob),
            ("ada@example.org", SUBJECT, link),
        ], listed.stdout
        assert entries[0][0] >= entries[1][0]
        newest = _outbox(env, "--limit", "1")
        assert newest.returncode == 0, newest.stderr
        assert "bob@example.org" in newest.stdout and "ada@example.org" not in newest.stdout


def test_almanac_mail_outbox_names_a_store_it_cannot_use_and_a_bad_limit(tmp_path: Path) -> None:
    env = _environment(tmp_path / "nowhere", None)
    missing = _outbox(env)
    assert missing.returncode == 1
    assert missing.stderr.startswith(
        f"almanac: there is no store yet at {tmp_path / 'nowhere' / 'almanac.db'} "
        "(the embedded default; ALMANAC_DATABASE_URL names another store): run `almanac up` once"
    ), missing.stderr
    for bad in ("0", "many"):
        refused = _outbox(env, "--limit", bad)
        assert refused.returncode == 2
        assert f"--limit: {bad!r} is not a whole number from 1 to 1000" in refused.stderr

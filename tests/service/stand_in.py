"""What the inside modules (run in a namespace by `test_up.py` and `test_faults.py`) share:
the plug-in source served over TLS from the public stand-in address, the developers' tool, and
the people of a running service (an operator, a reader) made as people are made, over HTTP."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
import trustme
from sqlalchemy import create_engine, text

from almanac.node import node_binary
from tests.sandbox.tls_server import TLSServer
from tests.service.namespace import PUBLIC, enter_public_stand_in
from tests.service.up import REPO

SOURCE_HOST = "rates.example.org"
EMAIL = "operator@example.org"
PASSWORD = "a long pass phrase for the operator"


@pytest.fixture(scope="module")
def source_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TLSServer]:
    """An HTTPS server on the public stand-in address, `SOURCE_HOST` resolving to it."""
    ca = trustme.CA()
    enter_public_stand_in([SOURCE_HOST], ca.cert_pem.bytes(), tmp_path_factory.mktemp("ns"))
    with TLSServer(ca, (SOURCE_HOST,), bind=(PUBLIC, 443)) as server:
        yield server


def plugin_tool(*args: str, cwd: Path) -> str:
    """The developers' tool (`tool/almanac-plugin.mjs`); fails the test unless it succeeds."""
    done = subprocess.run(
        [str(node_binary()), str(REPO / "tool" / "almanac-plugin.mjs"), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "ALMANAC_PLUGIN_NOW": datetime.now(UTC).isoformat()},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def packed_digest(tool_output: str) -> str:
    digest = re.search(r"^digest (sha256:[0-9a-f]{64})$", tool_output, re.MULTILINE)
    assert digest, tool_output
    return digest.group(1)


def signed_up_person(api: str, database_url: str, email: str) -> httpx.Client:
    """A new person as one becomes one: sign-up over HTTP, the mailed link (kept in the
    outbox: no SMTP here), sign-in over HTTP."""
    client = httpx.Client(base_url=api, timeout=30)
    made = client.post("/api/v1/auth/signup", json={"email": email, "password": PASSWORD})
    assert made.status_code == 201, made.text
    engine = create_engine(database_url)
    with engine.connect() as conn:
        body = conn.execute(
            text("SELECT body FROM mail_outbox WHERE to_address = :to ORDER BY id DESC"),
            {"to": email},
        ).scalar_one()
    engine.dispose()
    link = re.search(r"https?://\S+/api/v1/auth/verify\?token=\S+", body)
    assert link, body
    assert client.get(link.group(0)).status_code == 200
    signed = client.post("/api/v1/auth/signin", json={"email": email, "password": PASSWORD})
    assert signed.status_code == 200, signed.text
    return client


def signed_up_operator(api: str, database_url: str) -> httpx.Client:
    """An operator: a new person granted the role by `almanac staff grant` on the machine."""
    client = signed_up_person(api, database_url, EMAIL)
    granted = subprocess.run(
        [str(Path(sys.executable).parent / "almanac"), "staff", "grant", EMAIL, "operator"],
        env={**os.environ, "ALMANAC_DATABASE_URL": database_url},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert granted.returncode == 0, granted.stderr
    return client


def ok(response: httpx.Response, status: int = 200) -> Any:
    """The JSON answer, once the status is `status`."""
    assert response.status_code == status, response.text
    return response.json()

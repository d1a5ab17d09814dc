"""What the inside modules (run in a namespace by `test_up.py` and `test_faults.py`) share:
the plug-in source served over TLS from the public stand-in address, the developers' tool and
a plug-in packed with it, the people of a running service (an operator, a reader) made as
people are made, over HTTP, and what an operator does to a plug-in there (register its pack,
approve it) and a reader (show it)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
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
from tests.service.up import REPO, START_SECONDS, Service, almanac_up, wait_for

SOURCE_HOST = "rates.example.org"
EMAIL = "operator@example.org"
PASSWORD = "a long pass phrase for the operator"

HOLD = "LOCK TABLE held_series IN SHARE MODE"
"""Taken by a fault test before the approval and kept until its fault: the write of a run
replaces the plug-in's Held details after its records' COPY, so it waits there with its whole
batch inserted and not committed (readers' reads are not held: SHARE lets them read)."""
HELD_WRITE = (
    "SELECT w.pid FROM pg_stat_activity AS w WHERE w.datname = current_database()"
    " AND %(holder)s = ANY(pg_blocking_pids(w.pid)) AND EXISTS (SELECT FROM pg_locks AS l"
    " WHERE l.pid = w.pid AND l.relation = 'records'::regclass AND l.granted"
    " AND l.mode = 'RowExclusiveLock')"
)
"""The store's write of the batch held by `HOLD`: a backend waiting for the test's lock whose
open transaction has written into the records table. (Caught by polling alone, the COPY of
the 75,000 records is over in a few tenths of a second, shorter than a poll: a run whose write
was missed succeeded, and the test waited in vain for a write to come.)"""


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


@dataclass(frozen=True)
class Pack:
    """A plug-in made from the tool's template and packed by the tool."""

    plugin_id: str
    folder: Path
    manifest: dict[str, Any]
    archive: bytes
    digest: str

    def fixture_source(self) -> bytes:
        """The template's own copy of its one source (what its fixtures were made from)."""
        return (
            self.folder / "fixtures" / "sources" / self.manifest["sources"][0]["name"]
        ).read_bytes()


def value_plugin_pack(
    work: Path, plugin_id: str, edit: Callable[[dict[str, Any]], None] | None = None
) -> Pack:
    """A public value plug-in from the tool's template, its one source at
    `https://SOURCE_HOST/rates.csv`, its manifest changed further by `edit`, packed in `work`."""
    plugin_tool("init", plugin_id, "--kind", "value", cwd=work)
    folder = work / plugin_id
    manifest = json.loads((folder / "plugin.json").read_text())
    manifest["audience"] = "public"
    manifest["sources"][0]["url"] = f"https://{SOURCE_HOST}/rates.csv"
    if edit is not None:
        edit(manifest)
    (folder / "plugin.json").write_text(json.dumps(manifest, indent=2) + "\n")
    packed = plugin_tool("pack", plugin_id, "--out", str(work / "pack.zip"), cwd=work)
    archive = (work / "pack.zip").read_bytes()
    return Pack(plugin_id, folder, manifest, archive, packed_digest(packed))


@dataclass
class Served:
    """`almanac up` answering, its store's URL, the API's health once the webserver answered,
    and an operator signed up over HTTP."""

    up: Service
    database_url: str
    health: dict[str, Any]
    operator: httpx.Client


@contextmanager
def served(home: Path, database_url: str | None) -> Iterator[Served]:
    """`almanac up` as in production, with two API workers, on `database_url` (PostgreSQL) or
    else its embedded default in `home`, once its API and its Dagster webserver answer."""
    from almanac.settings import load_settings

    store = database_url or load_settings({"ALMANAC_HOME": str(home)}).database_url
    with almanac_up(home, database_url, ("--api-workers", "2")) as up:
        deadline = time.monotonic() + START_SECONDS
        wait_for(f"{up.ui}/server_info", deadline, up)
        health = wait_for(f"{up.api}/health", deadline, up).json()
        yield Served(up, store, health, signed_up_operator(up.api, store))


def registered(operator: httpx.Client, pack: Pack) -> None:
    """The pack registered by an operator over HTTP, as a new plug-in (not approved yet)."""
    made = ok(
        operator.post(
            "/api/v1/host/plugins/pack",
            content=pack.archive,
            headers={"Content-Type": "application/zip"},
        ),
        201,
    )
    assert (made["plugin_id"], made["digest"]) == (pack.plugin_id, pack.digest)


def approved(operator: httpx.Client, pack: Pack) -> None:
    """The pack's plug-in approved by an operator by its digest (its first run follows)."""
    done = ok(
        operator.post(
            f"/api/v1/host/plugins/{pack.plugin_id}/approve", json={"digest": pack.digest}
        )
    )
    assert done["state"] == "approved"


def shown(reader: httpx.Client, plugin_id: str) -> None:
    """The plug-in turned on in the reader's preferences."""
    turned = reader.put(
        "/api/v1/reader/preferences", json={"preferences": {f"plugins.{plugin_id}.shown": True}}
    )
    assert turned.status_code == 200, turned.text


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

"""A service that cannot reach the network does not blame the publisher (issue 30): the upload
checks run in a network namespace of their own (see `inside_network_down.py`), first with no
route and no name server, then with the stand-in network up, through the service's own
downloader and resolver, on a fresh PostgreSQL database."""

from __future__ import annotations

import secrets
from pathlib import Path

from almanac.platform.store.engine import upgrade_database
from tests.service.namespace import (
    PostgresRelay,
    fresh_database,
    run_module_in_namespace,
    server_address,
)

HERE = Path(__file__).resolve().parent


def test_checks_could_not_run_without_a_network_and_run_again_when_it_is_back(
    postgres_server_url: str,
) -> None:
    name = f"almanac_netdown_{secrets.token_hex(4)}"
    base = postgres_server_url.rpartition("/")[0]
    with (
        fresh_database(postgres_server_url, name),
        PostgresRelay(server_address(postgres_server_url)) as relay,
    ):
        upgrade_database(f"{base}/{name}")
        url = f"postgresql+psycopg://postgres@/{name}?host={relay.folder}"
        done = run_module_in_namespace(
            HERE / "inside_network_down.py", {"NETDOWN_DATABASE_URL": url}, timeout=900
        )
    assert done.returncode == 0, done.stdout[-20000:] + done.stderr[-5000:]

"""Running the real `almanac up` where nothing it does can leave the machine: a pytest module run
in a network and mount namespace of its own (`unshare --net --mount`, as root, so the locked
room still works inside it).

Inside, `enter_public_stand_in` puts a public stand-in address on the namespace's loopback
device, names source hosts for it in a private /etc/hosts and adds a test CA to the CA bundle
the service's downloader trusts (certifi's file, covered by a bind mount that only this
namespace sees). The service's own code is unchanged: its resolver, address policy and TLS
verification run as in production. The example plug-ins' real hosts resolve to nothing there.

PostgreSQL stays outside: `PostgresRelay` carries a Unix socket (reachable from any network
namespace through the file system) to the test server's TCP address.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import psycopg

REPO = Path(__file__).resolve().parents[2]
PUBLIC = "93.184.216.34"
"""The stand-in public address: checked by the downloader like any other, and in the namespace
bound to its own loopback device, so packets to it never leave."""
INSIDE = "ALMANAC_TEST_INSIDE_NAMESPACE"


class PostgresRelay:
    """A Unix socket `<folder>/.s.PGSQL.5432` whose connections are carried to `address`."""

    def __init__(self, address: tuple[str, int]) -> None:
        self.address = address
        self.folder = Path(tempfile.mkdtemp(prefix="almanac-pg-relay-"))
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(str(self.folder / ".s.PGSQL.5432"))
        self._listener.listen(64)
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)

    def __enter__(self) -> PostgresRelay:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopped.set()
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        self._thread.join(5)
        shutil.rmtree(self.folder, ignore_errors=True)

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                inner, _ = self._listener.accept()
            except OSError:
                return
            outer = socket.create_connection(self.address)
            for a, b in ((inner, outer), (outer, inner)):
                threading.Thread(target=_pump, args=(a, b), daemon=True).start()


def _pump(source: socket.socket, sink: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while chunk := source.recv(65536):
            sink.sendall(chunk)
    for sock in (source, sink):
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


@contextmanager
def fresh_database(server_url: str, name: str) -> Iterator[str]:
    """A new empty database on the test server (dropped afterwards); yields its name."""
    plain = server_url.replace("+psycopg", "")
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield name
    finally:
        with psycopg.connect(plain, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def fresh_database_through_a_relay(server_url: str, prefix: str) -> Iterator[str]:
    """A new empty database on the test server named `prefix` and a random suffix (dropped
    afterwards), and a `PostgresRelay` to the server; yields the database's URL through the
    relay's Unix socket, which a namespace of its own reaches."""
    name = f"{prefix}_{secrets.token_hex(4)}"
    with fresh_database(server_url, name), PostgresRelay(server_address(server_url)) as relay:
        yield f"postgresql+psycopg://postgres@/{name}?host={relay.folder}"


def server_address(server_url: str) -> tuple[str, int]:
    parts = urlsplit(server_url.replace("+psycopg", ""))
    return parts.hostname or "127.0.0.1", parts.port or 5432


def run_module_in_namespace(
    module: Path, env: Mapping[str, str], *, timeout: float, test: str | None = None
) -> subprocess.CompletedProcess[str]:
    """pytest on `module` (only its test `test`, when given) in a new network and mount
    namespace; its output is returned."""
    unshare = shutil.which("unshare")
    assert unshare, "util-linux unshare is needed (the locked room needs namespaces too)"
    assert os.geteuid() == 0, "the service's locked room and these namespaces need root"
    return subprocess.run(
        [
            unshare,
            "--net",
            "--mount",
            "--propagation",
            "private",
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-x",
            "-q",
            "-s",
            str(module) if test is None else f"{module}::{test}",
        ],
        cwd=REPO,
        env={**os.environ, **env, INSIDE: "1"},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def loopback_up() -> None:
    """Inside the namespace: its loopback device up (a new network namespace starts with it
    down, and the service's parts talk to each other over it)."""
    assert os.environ.get(INSIDE) == "1", "only inside run_module_in_namespace's namespace"
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)


def enter_public_stand_in(hosts: list[str], ca_pem: bytes, work: Path) -> None:
    """Inside the namespace: loopback up with the stand-in address, `hosts` resolving to it,
    and the test CA trusted beside certifi's roots (for this namespace only)."""
    import certifi

    loopback_up()
    subprocess.run(["ip", "addr", "add", f"{PUBLIC}/32", "dev", "lo"], check=True)
    hosts_file = work / "hosts"
    hosts_file.write_text(
        "127.0.0.1 localhost\n::1 localhost\n" + "".join(f"{PUBLIC} {h}\n" for h in hosts)
    )
    bundle = work / "cacert.pem"
    bundle.write_bytes(Path(certifi.where()).read_bytes() + b"\n" + ca_pem)
    for made, covered in ((hosts_file, "/etc/hosts"), (bundle, certifi.where())):
        subprocess.run(["mount", "--bind", str(made), covered], check=True)

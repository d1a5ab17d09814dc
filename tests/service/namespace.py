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
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import pytest

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


@dataclass(frozen=True)
class NamespaceRun:
    """pytest on `module` (only its test `test`, when given) in a namespace of its own, with
    `env` beside this process's environment, killed after `timeout` seconds."""

    module: Path
    env: Mapping[str, str]
    timeout: float
    test: str | None = None


class Started:
    """A `NamespaceRun` started now, its output read as it comes, awaited by `result`."""

    def __init__(self, run: NamespaceRun) -> None:
        unshare = shutil.which("unshare")
        assert unshare, "util-linux unshare is needed (the locked room needs namespaces too)"
        assert os.geteuid() == 0, "the service's locked room and these namespaces need root"
        target = str(run.module) if run.test is None else f"{run.module}::{run.test}"
        self.args = [
            unshare, "--net", "--mount", "--propagation", "private",
            sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-x", "-q", "-s", target,
        ]  # fmt: skip
        self.timeout = run.timeout
        self._began = time.monotonic()
        self._process = subprocess.Popen(
            self.args,
            cwd=REPO,
            env={**os.environ, **run.env, INSIDE: "1"},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._output: tuple[str, str] = ("", "")
        # Read in a thread: a run awaited after another's must not stop on a full pipe meanwhile.
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        self._output = self._process.communicate()

    def done(self) -> bool:
        return not self._reader.is_alive()

    def result(self) -> subprocess.CompletedProcess[str]:
        """The run's output once it ended; TimeoutExpired (the run killed) past its timeout."""
        self._reader.join(max(0.0, self.timeout - (time.monotonic() - self._began)))
        if self._reader.is_alive():
            self._process.kill()
            self._reader.join()
            raise subprocess.TimeoutExpired(self.args, self.timeout, *self._output)
        return subprocess.CompletedProcess(self.args, self._process.returncode, *self._output)

    def stop(self) -> None:
        if not self.done():
            self._process.kill()
            self._reader.join()


def run_module_in_namespace(
    module: Path, env: Mapping[str, str], *, timeout: float, test: str | None = None
) -> subprocess.CompletedProcess[str]:
    """pytest on `module` (only its test `test`, when given) in a new network and mount
    namespace; its output is returned."""
    return Started(NamespaceRun(module, env, timeout, test)).result()


Planned = Callable[[ExitStack], NamespaceRun]
"""How a test's namespace run is made: what it needs for as long as it goes (a database and
its relay) entered into the stack, which closes when the module's tests are done."""


class Ahead:
    """The namespace runs of one test module's selected tests, started ahead of the tests that
    read them, at most `most` at a time in the tests' order. Such a run spends most of its time
    waiting on the service it started (its start, sensor ticks, runs), so two side by side take
    little longer than one, and the module far less than their sum."""

    def __init__(self, planned: Mapping[str, Planned], order: list[str], most: int) -> None:
        self._planned = planned
        self._waiting = [name for name in order if name in planned]
        self._started: dict[str, Started] = {}
        self._most = most
        self._stack = ExitStack()

    @classmethod
    @contextmanager
    def of_module(
        cls, request: pytest.FixtureRequest, planned: Mapping[str, Planned], most: int = 2
    ) -> Iterator[Ahead]:
        """For a module-scoped fixture: the module's selected tests among `planned`."""
        order = [item.name for item in request.session.items if item.module is request.module]
        ahead = cls(planned, order, most)
        with ahead._stack:
            try:
                ahead._fill()
                yield ahead
            finally:
                for started in ahead._started.values():
                    started.stop()

    def _fill(self) -> None:
        going = sum(not started.done() for started in self._started.values())
        while self._waiting and going < self._most:
            self._start(self._waiting[0])
            going += 1

    def _start(self, name: str) -> Started:
        self._waiting.remove(name)
        started = self._started[name] = Started(self._planned[name](self._stack))
        return started

    def result(self, name: str) -> subprocess.CompletedProcess[str]:
        """The run of test `name` (started now if it was not yet), once it ended."""
        started = self._started.get(name) or self._start(name)
        try:
            return started.result()
        finally:
            self._fill()


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

"""The code location's one code server, and the watch that reloads it when the catalog changes
(issue 30: every plug-in approved during the service's life is a Dagster asset).

Dagster loads a `python_module` code location once per process that serves it: the webserver
kept the plug-ins of its start for good, and the daemon started a fresh code server every minute
to see new ones. `almanac up` instead runs Dagster's own standalone code server (`dagster
code-server start`, the proxy server Dagster's deployments run) on a Unix socket and points the
webserver and the daemon at it (a `grpc_server` entry in the workspace it writes). Both already
watch a code server's id (Dagster's `create_grpc_watch_thread`, once a second) and load the
location again when it changes. What changes it is the code server's `ReloadCode`: the proxy
starts a new process that builds the definitions from the store, then swaps it in.

`CatalogWatch` asks for that reload when `catalog_fingerprint` changes (approval, publish,
rollback, removal, pause, resume, takedown, retirement), polling the store every
`WATCH_SECONDS`: a change shows in the webserver and the daemon within that plus one load of the
definitions. Run workers need nothing: each reads its own plug-in's entry from the store.
"""

from __future__ import annotations

import hashlib
import logging
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from almanac.settings import Settings

LOCATION_NAME = "almanac"
DEFINITIONS_MODULE = "almanac.definitions"
WATCH_SECONDS = 10.0
"""How often the watch reads the catalog's fingerprint: one indexed read of the plug-ins."""
RELOAD_TIMEOUT_SECONDS = 600
"""A reload waits for the new process to build every plug-in's asset (seconds with 1,000)."""
_SOCKET_PATH_MAX = 100
"""A Unix socket's path must fit in 108 bytes (sun_path); a longer home gets one in /tmp."""

log = logging.getLogger(__name__)


def code_server_socket(settings: Settings) -> Path:
    """Where the code server listens: in Dagster's home, or under /tmp named by that home when
    the home's path is too long for a socket."""
    inside = settings.dagster_home / "code-server.sock"
    if len(str(inside)) <= _SOCKET_PATH_MAX:
        return inside
    name = hashlib.sha256(str(settings.dagster_home).encode()).hexdigest()[:16]
    return Path("/tmp") / f"almanac-code-{name}.sock"


def code_server_command(settings: Settings) -> list[str]:
    return [
        str(Path(sys.executable).parent / "dagster"),
        "code-server",
        "start",
        "--module-name",
        DEFINITIONS_MODULE,
        "--location-name",
        LOCATION_NAME,
        "--socket",
        str(code_server_socket(settings)),
    ]


def workspace_yaml(settings: Settings) -> str:
    """The workspace of the webserver and the daemon: the code server, by its socket."""
    return (
        "load_from:\n"
        "  - grpc_server:\n"
        f"      socket: {code_server_socket(settings)}\n"
        f"      location_name: {LOCATION_NAME}\n"
    )


def wait_until_served(settings: Settings, alive: Callable[[], bool], deadline: float) -> str | None:
    """Wait until the code server answers with its location loaded (or its load error, which
    the Dagster UI then shows); returns None, or why it never answered."""
    from dagster._grpc.client import DagsterGrpcClient

    client = DagsterGrpcClient(socket=str(code_server_socket(settings)))
    while time.monotonic() < deadline:
        if not alive():
            return "the code server stopped while loading the definitions"
        try:
            client.list_repositories()
            return None
        except Exception:
            time.sleep(0.5)
    return "the code server did not load the definitions in time"


class CatalogWatch:
    """Reloads the code server when the catalog's fingerprint changes; see the module."""

    def __init__(
        self,
        fingerprint: Callable[[], str],
        reload: Callable[[], None],
        interval: float = WATCH_SECONDS,
    ) -> None:
        self._fingerprint = fingerprint
        self._reload = reload
        self._interval = interval
        self._seen: str | None = None
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="catalog-watch", daemon=True)

    def start(self) -> None:
        """Read the fingerprint now (before the code server's first load, so no change after
        it is missed), then watch in a thread of its own."""
        self._seen = self._read()
        self._thread.start()

    def stop(self) -> None:
        self._stopped.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def check(self) -> bool:
        """One look: reload when the fingerprint changed since the last; True if it did."""
        now = self._read()
        if now is None or now == self._seen:
            return False
        try:
            self._reload()
        except Exception:
            log.exception("almanac: reloading the code server failed; trying again")
            return False
        self._seen = now
        print("almanac: the plug-in catalog changed; Dagster's definitions reloaded", flush=True)
        return True

    def _read(self) -> str | None:
        try:
            return self._fingerprint()
        except Exception:
            log.exception("almanac: reading the plug-in catalog failed")
            return None

    def _watch(self) -> None:
        while not self._stopped.wait(self._interval):
            self.check()


def catalog_watch(settings: Settings) -> CatalogWatch:
    """The watch `almanac up` runs over its store and its code server."""
    from dagster._grpc.client import DagsterGrpcClient

    from almanac.orchestration.catalog import catalog_fingerprint
    from almanac.platform.store.engine import make_engine

    engine = make_engine(settings.database_url)
    client = DagsterGrpcClient(socket=str(code_server_socket(settings)))

    def fingerprint() -> str:
        with engine.connect() as conn:
            return catalog_fingerprint(conn)

    def reload() -> None:
        client.reload_code(timeout=RELOAD_TIMEOUT_SECONDS)

    return CatalogWatch(fingerprint, reload)

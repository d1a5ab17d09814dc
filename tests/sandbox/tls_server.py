"""Test parts for the source downloader: a real HTTPS server on loopback signed by a test CA,
a table resolver and a dialer that carries connections meant for checked public addresses to
that server. No packet ever leaves loopback."""

from __future__ import annotations

import socket
import ssl
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from ipaddress import ip_address

import trustme

from almanac.sandbox.addresses import IPAddress

Route = Callable[["Handler"], None]


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: bytes = b""


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server
    body: bytes = b""
    """The request's body (POST), as the route sees it."""

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(10)

    def do_GET(self) -> None:
        self._answer(b"")

    def do_POST(self) -> None:
        self._answer(self.rfile.read(int(self.headers.get("Content-Length") or 0)))

    def _answer(self, body: bytes) -> None:
        owner = self.server.owner
        self.body = body
        with owner.lock:
            owner.requests.append(
                Recorded(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            )
        route = owner.routes.get(self.path.split("?", 1)[0])
        if route is None:
            self.reply(404, b"not here")
        else:
            route(self)

    def reply(
        self, status: int, body: bytes = b"", headers: Mapping[str, str] | None = None
    ) -> None:
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: TLSServer

    def get_request(self) -> tuple[socket.socket, object]:
        sock, address = super().get_request()
        wrapped = self.owner.server_context.wrap_socket(
            sock, server_side=True, do_handshake_on_connect=False
        )
        return wrapped, address

    def finish_request(self, request: socket.socket, client_address: object) -> None:
        try:
            request.settimeout(10)
            request.do_handshake()  # type: ignore[attr-defined]
        except (OSError, ssl.SSLError):
            return
        super().finish_request(request, client_address)

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # clients that abort on purpose (limits, deadlines) are expected here


@dataclass
class TLSServer:
    """HTTPS on `bind` (loopback by default), with a certificate for `hostnames` from `ca`;
    `routes` map a path to a function answering through the handler; `requests` and `sni`
    record what arrived."""

    ca: trustme.CA
    hostnames: tuple[str, ...]
    routes: dict[str, Route] = field(default_factory=dict)
    requests: list[Recorded] = field(default_factory=list)
    sni: list[str | None] = field(default_factory=list)
    state: dict[str, object] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    bind: tuple[str, int] = ("127.0.0.1", 0)

    def __post_init__(self) -> None:
        self.server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.ca.issue_cert(*self.hostnames).configure_cert(self.server_context)
        self.server_context.sni_callback = self._record_sni
        self._httpd = _Server(self.bind, Handler)
        self._httpd.owner = self
        self.port: int = self._httpd.server_address[1]
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def _record_sni(self, _sslobj: object, name: str | None, _ctx: object) -> None:
        with self.lock:
            self.sni.append(name)

    def __enter__(self) -> TLSServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(5)


def client_context(ca: trustme.CA) -> ssl.SSLContext:
    """A verifying client context that trusts only the test CA."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ca.configure_trust(context)
    return context


class TableResolver:
    """Answers from a table; a host given a list of answers answers the next one at each call.
    Records every call, so a test can count resolutions."""

    def __init__(self, table: Mapping[str, list[str] | list[list[str]]]) -> None:
        self._answers: dict[str, list[list[str]]] = {}
        for host, answer in table.items():
            if answer and isinstance(answer[0], list):
                self._answers[host] = [list(a) for a in answer]  # type: ignore[arg-type]
            else:
                self._answers[host] = [list(answer)]  # type: ignore[arg-type]
        self.calls: list[str] = []
        self._lock = threading.Lock()

    def resolve(self, host: str, port: int, timeout: float) -> list[IPAddress]:
        from almanac.sandbox.resolver import ResolveError

        with self._lock:
            self.calls.append(host)
            answers = self._answers.get(host)
            if answers is None:
                raise ResolveError(f"could not resolve {host}: no such host in the test table")
            answer = answers.pop(0) if len(answers) > 1 else answers[0]
        return [ip_address(a) for a in answer]


class LoopbackDialer:
    """Stands in for the network: a connection to one of the `stand_ins` public addresses goes
    to that loopback port instead; any other address is refused without a packet sent."""

    def __init__(self, stand_ins: Mapping[str, int], receive_buffer: int | None = None) -> None:
        self._ports = {ip_address(a): port for a, port in stand_ins.items()}
        self._receive_buffer = receive_buffer
        self.dialed: list[tuple[IPAddress, int]] = []

    def dial(self, address: IPAddress, port: int, timeout: float) -> socket.socket:
        self.dialed.append((address, port))
        target = self._ports.get(address)
        if target is None:
            raise ConnectionRefusedError(f"no test server stands in for {address}")
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if self._receive_buffer is not None:
            # A fixed small buffer (no autotuning) bounds what the server can push unread.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, self._receive_buffer)
        sock.settimeout(timeout)
        sock.connect(("127.0.0.1", target))
        return sock


def chunks(total: int, size: int = 65536) -> Iterator[bytes]:
    while total > 0:
        step = min(size, total)
        yield b"x" * step
        total -= step

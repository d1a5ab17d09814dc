"""Safe source downloads before each run (spec: Source download rules).

`SourceDownloader.download` fetches a plug-in's declared sources in order into a fresh folder.
Every connection resolves its host once through the injected `Resolver`, checks EVERY answer
with the address policy (`almanac.sandbox.addresses`), and connects to a checked address only,
through the injected `Dialer`; TLS is then verified, with SNI, against the host name. The
policy has no switch: tests keep it on and inject a dialer that carries a connection meant for
a checked public address to a TLS server on loopback instead.

Choices where the spec is silent: `{today}` is YYYY-MM-DD, `{year}` YYYY, `{month}` MM; a
`maxBytes` above 20 MB counts as 20 MB; only 301, 302, 303, 307 and 308 are followed (always as
GET), any other status but 200 fails; an explicit port in a URL is allowed; the 60 seconds cover
resolution, connections, every hop and the whole body of one source.

Content encodings: the body is asked for uncompressed (`Accept-Encoding: identity`) and read
raw; httpx never decodes it (its decoders expand a whole network read at once, and stacked
layers multiply that: 2 KB could become 2 GB in memory before any size check). A server that
encodes anyway is still answered: `gzip` (and `x-gzip`) and `deflate` (zlib-wrapped, or raw
deflate as browsers accept) are decoded here, at most 3 layers, each in steps of at most 64 KiB
of output, so a download holds a few hundred KiB whatever it decodes to, and the kept body goes
to its file as it arrives. Decoding rather than refusing keeps sources working whose servers or
CDNs compress whatever was asked, and the bounded steps cost no more memory than a refusal. Any
other encoding (br, zstd, compress, ...) fails with `the server sent a <encoding> body, which
was not asked for`: no decoder is trusted that has not been bounded here. `maxBytes` counts
the bytes kept, after any decoding; the bytes on the wire and the output of every layer are held
to it too, so no layer works through more than `maxBytes`. An encoded body is kept only when
every layer ends exactly (a gzip body may hold several members).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import http.cookiejar
import os
import re
import select
import shutil
import socket
import ssl
import tempfile
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, Protocol

import httpcore
import httpx

from almanac.platform.publishing.uploads.network import HostFailure
from almanac.sandbox.addresses import AddressRefused, IPAddress, check_resolved, parse_address
from almanac.sandbox.resolver import ResolveError, Resolver, SystemResolver

MAX_BYTES = 20_971_520
"""No download is ever larger than 20 MB, whatever `maxBytes` says."""
MAX_REDIRECTS = 5
DEADLINE_SECONDS = 60.0
REASON_LIMIT = 300
PRODUCT = "Almanac plug-ins"

_SOURCE_NAME = re.compile(r"[a-z][a-z0-9_-]{0,47}\Z")
_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_SHOWN_URL = 120
_REDIRECT_BODY_LIMIT = 64 * 1024

MAX_CONTENT_CODINGS = 3
"""The most content encodings one body may stack; more is refused, never decoded."""
_DECODED_CODINGS = frozenset({"gzip", "x-gzip", "deflate"})
_DECODE_STEP = 64 * 1024
"""The most one decoding step may produce: what bounds a layer's memory, whatever it expands."""
_SHOWN_CODING = 40


@dataclass(frozen=True, slots=True)
class Source:
    """One declared source of a manifest: its key, URL template and size limit."""

    name: str
    url: str
    max_bytes: int = MAX_BYTES


@dataclass(frozen=True, slots=True)
class DownloadedSource:
    """What the store records of one kept download."""

    name: str
    url: str
    """The final URL, after redirects."""
    bytes: int
    sha256: str
    fetched_at: datetime
    path: Path


@dataclass(frozen=True, slots=True)
class Downloads:
    """A run's downloads: a fresh folder holding one regular file per source, named by it."""

    folder: Path
    sources: tuple[DownloadedSource, ...]


class DownloadError(Exception):
    """A download failed, so the run fails and nothing is written; `reason` is the run reason.
    `failure` says whether anything on the network answered for the host (the upload checks
    tell the service's own network from a publisher's URL by it)."""

    def __init__(
        self, source: str, detail: str, failure: HostFailure = HostFailure.ANSWERED
    ) -> None:
        self.source = source
        self.detail = detail
        self.failure = failure
        self.reason = download_reason(source, detail)
        super().__init__(self.reason)


def download_reason(source: str, detail: str) -> str:
    """`could not download <source name>: <detail>`, cut to the 300 characters a run reason
    holds (spec: Source download rules 7, The write 4)."""
    reason = f"could not download {source}: {detail}"
    if len(reason) > REASON_LIMIT:
        reason = reason[: REASON_LIMIT - 3] + "..."
    return reason


def fill_source_url(template: str, today: date) -> str:
    """Fill `{today}` (YYYY-MM-DD), `{year}` (YYYY) and `{month}` (MM) of a source URL
    (spec: Source download rules 1). `today` is the run's today, already taken in the manifest's
    time zone by the caller (the date of the run's moment in that zone)."""
    return (
        template.replace("{today}", today.isoformat())
        .replace("{year}", f"{today.year:04d}")
        .replace("{month}", f"{today.month:02d}")
    )


def user_agent(base_url: str) -> str:
    """The product string every download sends (spec: Source download rules 6; DECISIONS 1)."""
    return f"{PRODUCT} (+{base_url})"


def named_hosts(urls: Iterable[str]) -> frozenset[str]:
    """The hosts the sources name (IDNA form): the only hosts a download or redirect may reach
    (spec: Source download rules 2 and 4; `links.hosts` does not count)."""
    hosts: set[str] = set()
    for text in urls:
        try:
            url = httpx.URL(text)
        except httpx.InvalidURL:
            continue
        host = url.raw_host.decode("ascii")
        if url.scheme == "https" and host and parse_address(host) is None:
            hosts.add(host)
    return frozenset(hosts)


class Dialer(Protocol):
    def dial(self, address: IPAddress, port: int, timeout: float) -> socket.socket:
        """A TCP socket connected to exactly `address` and `port` within `timeout` seconds."""
        ...


class SystemDialer:
    """Connects to the checked address itself: no name is resolved here."""

    def dial(self, address: IPAddress, port: int, timeout: float) -> socket.socket:
        family = socket.AF_INET6 if address.version == 6 else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.settimeout(timeout)
            sock.connect((str(address), port))
        except BaseException:
            sock.close()
            raise
        return sock


class SourceDownloader:
    """Downloads declared sources by the spec's rules; one instance serves many runs.

    `resolver`, `dialer` and `ssl_context` default to the system resolver, a direct connection
    to the checked address and the certifi CA bundle. `clock` gives the time stamps.
    `deadline_seconds` is the whole time one source may take, redirects included (60 by the
    spec; lower only in tests). The address policy applies whatever is injected."""

    def __init__(
        self,
        *,
        base_url: str,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        resolver: Resolver | None = None,
        dialer: Dialer | None = None,
        ssl_context: ssl.SSLContext | None = None,
        deadline_seconds: float = DEADLINE_SECONDS,
    ) -> None:
        if not 0 < deadline_seconds <= DEADLINE_SECONDS:
            raise ValueError(f"deadline_seconds must be above 0 and at most {DEADLINE_SECONDS}")
        context = ssl_context or httpx.create_ssl_context(trust_env=False)
        if context.verify_mode != ssl.CERT_REQUIRED or not context.check_hostname:
            raise ValueError("source downloads keep TLS certificate and host name verification")
        self._user_agent = user_agent(base_url)
        self._clock = clock
        self._resolver: Resolver = resolver or SystemResolver()
        self._dialer: Dialer = dialer or SystemDialer()
        self._ssl_context = context
        self._deadline_seconds = float(deadline_seconds)

    def download(self, sources: Sequence[Source], *, today: date, work_dir: Path) -> Downloads:
        """Download every source in declared order into a fresh folder made inside `work_dir`.
        `today` is the run's today in the manifest's time zone; it fills the URLs. Raise
        DownloadError at the first failure, after removing the folder with everything in it
        (spec: Source download rules 7). The caller deletes the folder after the run."""
        filled = [(source, fill_source_url(source.url, today)) for source in sources]
        hosts = named_hosts(url for _, url in filled)
        folder = Path(tempfile.mkdtemp(prefix="sources-", dir=work_dir))
        try:
            folder.chmod(0o755)
            kept = tuple(self._download_one(source, url, hosts, folder) for source, url in filled)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        return Downloads(folder=folder, sources=kept)

    def _download_one(
        self, source: Source, url_text: str, hosts: frozenset[str], folder: Path
    ) -> DownloadedSource:
        if not _SOURCE_NAME.match(source.name):
            raise DownloadError(source.name[:48], "not a valid source name")
        limit = min(source.max_bytes, MAX_BYTES)
        deadline = Deadline(self._deadline_seconds)
        try:
            url = checked_url(httpx.URL(url_text), hosts, redirect=False)
            with self._client(deadline) as client:
                for hop in range(MAX_REDIRECTS + 1):
                    with client.stream("GET", url) as response:
                        status = response.status_code
                        if status in _REDIRECT_STATUSES:
                            if hop == MAX_REDIRECTS:
                                raise Refused(f"more than {MAX_REDIRECTS} redirects")
                            location = response.headers.get("location")
                            if not location:
                                raise Refused(f"HTTP {status} redirect without a Location")
                            url = checked_url(url.join(location), hosts, redirect=True)
                            _drain(response)
                            continue
                        if status != 200:
                            raise Refused(f"the server answered HTTP {status}, not 200")
                        path = folder / source.name
                        size, sha256 = _keep_body(response, path, limit, deadline)
                        return DownloadedSource(
                            name=source.name,
                            url=str(url),
                            bytes=size,
                            sha256=sha256,
                            fetched_at=self._clock(),
                            path=path,
                        )
        except Exception as exc:
            raise DownloadError(
                source.name, failure_detail(exc, deadline), _failure(exc, deadline)
            ) from exc
        raise AssertionError("unreachable: the redirect loop returns or raises")

    def _client(self, deadline: Deadline) -> httpx.Client:
        return checked_client(
            resolver=self._resolver,
            dialer=self._dialer,
            ssl_context=self._ssl_context,
            deadline=deadline,
            headers={
                "User-Agent": self._user_agent,
                "Accept": "*/*",
                "Accept-Encoding": "identity",
            },
        )


def checked_client(
    *,
    resolver: Resolver,
    dialer: Dialer,
    ssl_context: ssl.SSLContext,
    deadline: Deadline,
    headers: dict[str, str],
) -> httpx.Client:
    """An httpx client whose every connection resolves its host once, checks every answer with
    the address policy and connects to a checked address only (spec: Source download rules 3),
    follows no redirect, keeps no cookie and ends each step by `deadline`. The source
    downloads and the webhook deliveries both connect through it."""
    pool = httpcore.ConnectionPool(
        ssl_context=ssl_context,
        http1=True,
        http2=False,
        retries=0,
        network_backend=_CheckedBackend(resolver, dialer, deadline),
    )
    return httpx.Client(
        transport=_CheckedTransport(pool),
        follow_redirects=False,
        trust_env=False,
        cookies=http.cookiejar.CookieJar(policy=_NoCookies()),
        headers=headers,
        timeout=httpx.Timeout(deadline.seconds),
    )


class Refused(Exception):
    """A rule refused the download; the message is the detail as it stands."""


class DeadlinePassed(Exception):
    """The 60 seconds of one source have run out."""


class Deadline:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._ends = time.monotonic() + seconds
        self.connected = False
        """A connection of this source was made: something on the network answered."""

    def remaining(self) -> float:
        return self._ends - time.monotonic()

    @property
    def passed(self) -> bool:
        return self.remaining() <= 0

    def bound(self, timeout: float | None) -> float:
        """The time one network step may take: never past the deadline."""
        remaining = self.remaining()
        if remaining <= 0:
            raise DeadlinePassed
        return remaining if timeout is None else min(timeout, remaining)


def checked_url(url: httpx.URL, hosts: frozenset[str], *, redirect: bool) -> httpx.URL:
    """Spec, Source download rules 2 and 4: https, no user information, a host some source
    names (never an IP address)."""
    what = "redirect refused: " if redirect else ""
    if url.scheme != "https":
        shown = str(url)[:_SHOWN_URL] if not url.userinfo else f"{url.scheme}:..."
        raise Refused(f"{what}only https addresses are downloaded ({shown})")
    if url.userinfo:
        raise Refused(f"{what}the address carries a user name or password")
    host = url.raw_host.decode("ascii")
    if not host:
        raise Refused(f"{what}the address has no host")
    if parse_address(host) is not None:
        raise Refused(f"{what}IP-address hosts are refused ({host})")
    if host not in hosts:
        raise Refused(f"{what}{host} is not a host any source names")
    return url


def _keep_body(
    response: httpx.Response, path: Path, limit: int, deadline: Deadline
) -> tuple[int, str]:
    """Write the whole body to a new regular file as it arrives, decoding any content encoding
    in bounded steps, and stop as soon as the bytes on the wire, any decoded layer or the body
    kept exceed `limit` (spec: Source download rules 5)."""
    codings = _content_codings(response.headers)
    declared = response.headers.get("content-length", "").strip()
    if declared.isdigit() and int(declared) > limit:
        raise Refused(f"the body of {declared} bytes is larger than maxBytes ({limit})")
    too_large = f"the body is larger than maxBytes ({limit} bytes)"
    pieces: Iterable[bytes] = _bounded(response.iter_raw(), limit, too_large)
    # The last coding listed was applied last, so it is undone first.
    for coding in reversed(codings):
        layer = _Decoder(coding, deadline)
        expanded = f"the {layer.coding} body decodes to more than maxBytes ({limit} bytes)"
        pieces = _bounded(layer.decode(pieces), limit, expanded)
    size = 0
    digest = hashlib.sha256()
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    with os.fdopen(os.open(path, flags, 0o644), "wb") as out:
        for chunk in pieces:
            size += len(chunk)
            if size > limit:
                raise Refused(too_large)
            if deadline.passed:
                raise DeadlinePassed
            digest.update(chunk)
            out.write(chunk)
    return size, digest.hexdigest()


def _content_codings(headers: httpx.Headers) -> list[str]:
    """The content encodings of a body in the order the server applied them, `identity` left
    out; refuses an encoding not decoded here, and more than MAX_CONTENT_CODINGS layers."""
    codings = [
        coding.lower()
        for coding in headers.get_list("content-encoding", split_commas=True)
        if coding and coding.lower() != "identity"
    ]
    for coding in codings:
        if coding not in _DECODED_CODINGS:
            raise Refused(f"the server sent a {_shown(coding)} body, which was not asked for")
    if len(codings) > MAX_CONTENT_CODINGS:
        raise Refused(
            f"the server sent a body in {len(codings)} stacked content encodings; at most "
            f"{MAX_CONTENT_CODINGS} are decoded"
        )
    return codings


def _shown(text: str) -> str:
    """A value a server chose, safe to put in a run reason."""
    cut = text[:_SHOWN_CODING]
    safe = "".join(c if c.isascii() and c.isprintable() else "?" for c in cut)
    return safe + ("..." if len(text) > _SHOWN_CODING else "")


def _bounded(pieces: Iterable[bytes], limit: int, refusal: str) -> Iterator[bytes]:
    """The pieces as they come, refused with `refusal` once they add up to more than `limit`."""
    seen = 0
    for piece in pieces:
        seen += len(piece)
        if seen > limit:
            raise Refused(refusal)
        yield piece


def _is_zlib_header(first: int, second: int) -> bool:
    """RFC 1950: method 8 (deflate), a window of at most 32 KiB, and the header check."""
    return first & 0x0F == 8 and first >> 4 <= 7 and (first << 8 | second) % 31 == 0


class _Decoder:
    """One content encoding undone in bounded steps: each step yields at most _DECODE_STEP
    bytes, so a layer holds one input piece and one step's output whatever they expand to."""

    def __init__(self, coding: str, deadline: Deadline) -> None:
        self.coding = "gzip" if coding == "x-gzip" else coding
        self._deadline = deadline
        self._inflater: Any = None
        self._head = b""

    def decode(self, pieces: Iterable[bytes]) -> Iterator[bytes]:
        """The decoded bytes of the encoded `pieces`; refuses a body that does not decode or
        does not end exactly. A layer given no bytes at all gives none."""
        for piece in pieces:
            yield from self._feed(piece)
        if self._head or (self._inflater is not None and not self._inflater.eof):
            raise Refused(f"the {self.coding} body is cut short")

    def _start(self, head: bytes) -> Any:
        if self.coding == "gzip":
            return zlib.decompressobj(16 + zlib.MAX_WBITS)
        # "deflate" means zlib-wrapped (RFC 9110), but some servers send raw deflate; browsers
        # take both, told apart by the zlib header.
        wrapped = _is_zlib_header(head[0], head[1])
        return zlib.decompressobj(zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS)

    def _feed(self, data: bytes) -> Iterator[bytes]:
        data = self._head + data
        self._head = b""
        while True:
            inflater = self._inflater
            if inflater is None or inflater.eof:
                if not data:
                    return
                if inflater is not None and self.coding != "gzip":
                    raise Refused(f"the {self.coding} body goes on after its end")
                if len(data) < 2:
                    # Too little to tell raw deflate from zlib: wait for the next piece.
                    self._head = data
                    return
                # A gzip body may be several members, one after another (RFC 1952).
                inflater = self._inflater = self._start(data)
            if self._deadline.passed:
                raise DeadlinePassed
            try:
                out = inflater.decompress(data, _DECODE_STEP)
            except zlib.error as error:
                raise Refused(f"the {self.coding} body does not decode ({error})") from None
            if out:
                yield out
            if inflater.eof:
                data = inflater.unused_data
                continue
            data = inflater.unconsumed_tail
            # A full step may leave output inside zlib with no input left: ask again.
            if not data and len(out) < _DECODE_STEP:
                return


def _drain(response: httpx.Response) -> None:
    """Read a short redirect body so its connection can carry the next hop; a long one is left
    unread and its connection is dropped."""
    seen = 0
    for chunk in response.iter_raw():
        seen += len(chunk)
        if seen > _REDIRECT_BODY_LIMIT:
            return


def failure_detail(exc: Exception, deadline: Deadline) -> str:
    """What went wrong with a connection, in a sentence (downloads and webhook deliveries)."""
    if isinstance(exc, Refused | AddressRefused | ResolveError):
        return str(exc)
    if isinstance(exc, DeadlinePassed) or deadline.passed:
        return f"did not finish within {deadline.seconds:g} seconds"
    if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
        return f"could not connect: {exc}"
    if isinstance(exc, httpx.RemoteProtocolError):
        return f"the response broke off or was malformed: {exc}"
    if isinstance(exc, httpx.TimeoutException):
        return f"timed out: {exc}"
    if isinstance(exc, httpx.InvalidURL):
        return f"invalid address: {exc}"
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


_CONNECT_FAILURES = {
    errno.ECONNREFUSED: HostFailure.REFUSED,
    errno.ENETUNREACH: HostFailure.NO_ROUTE,
    errno.EHOSTUNREACH: HostFailure.UNREACHABLE,
    errno.ETIMEDOUT: HostFailure.TIMED_OUT,
}


def _causes(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _failure(exc: Exception, deadline: Deadline) -> HostFailure:
    """Whether anything on the network answered for the host (`HostFailure.ANSWERED`, also
    for a rule's refusal), or how nothing did: the name lookup, the route, the connection."""
    if deadline.connected or isinstance(exc, Refused | AddressRefused | httpx.InvalidURL):
        return HostFailure.ANSWERED
    if isinstance(exc, ResolveError):
        return HostFailure.NO_NAME_ANSWER if exc.no_answer else HostFailure.NO_SUCH_HOST
    for cause in _causes(exc):
        if isinstance(cause, ssl.SSLError):
            return HostFailure.ANSWERED
        if isinstance(cause, ConnectionRefusedError):
            return HostFailure.REFUSED
        if isinstance(cause, OSError) and cause.errno in _CONNECT_FAILURES:
            return _CONNECT_FAILURES[cause.errno]
        if isinstance(cause, TimeoutError | httpx.TimeoutException | DeadlinePassed):
            return HostFailure.TIMED_OUT
    if deadline.passed:
        return HostFailure.TIMED_OUT
    return HostFailure.ANSWERED


class _NoCookies(http.cookiejar.CookiePolicy):
    """Downloads neither keep nor send cookies."""

    netscape = True
    rfc2965 = False
    hide_cookie2 = True

    def set_ok(self, cookie: http.cookiejar.Cookie, request: Any) -> bool:
        return False

    def return_ok(self, cookie: http.cookiejar.Cookie, request: Any) -> bool:
        return False

    def domain_return_ok(self, domain: str, request: Any) -> bool:
        return False

    def path_return_ok(self, path: str, request: Any) -> bool:
        return False


@contextlib.contextmanager
def _socket_errors(
    timeout_error: type[httpcore.TimeoutException], error: type[httpcore.NetworkError]
) -> Iterator[None]:
    try:
        yield
    except TimeoutError as exc:
        raise timeout_error(str(exc) or "timed out") from exc
    except OSError as exc:
        raise error(str(exc) or type(exc).__name__) from exc


class _CheckedBackend(httpcore.NetworkBackend):
    """httpcore's network backend for downloads: one resolution per connection, every address
    checked, a connection to a checked address only (DNS rebinding cannot change it)."""

    def __init__(self, resolver: Resolver, dialer: Dialer, deadline: Deadline) -> None:
        self._resolver = resolver
        self._dialer = dialer
        self._deadline = deadline

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        literal = parse_address(host)
        if literal is not None:
            resolved = [literal]
        else:
            resolved = self._resolver.resolve(host, port, self._deadline.bound(timeout))
        checked = check_resolved(host, resolved)
        failure: httpcore.ConnectError | httpcore.ConnectTimeout | None = None
        for address in checked:
            try:
                with _socket_errors(httpcore.ConnectTimeout, httpcore.ConnectError):
                    sock = self._dialer.dial(address, port, self._deadline.bound(timeout))
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
                continue
            self._deadline.connected = True
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                for option in socket_options or ():
                    sock.setsockopt(*option)
            except OSError:
                sock.close()
                raise
            return DeadlineStream(sock, self._deadline)
        assert failure is not None
        raise failure

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        raise httpcore.UnsupportedProtocol("downloads never use unix sockets")

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


class DeadlineStream(httpcore.NetworkStream):
    """A socket stream whose every read, write and handshake ends by the source's deadline."""

    def __init__(self, sock: socket.socket, deadline: Deadline) -> None:
        self._sock = sock
        self._deadline = deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        with _socket_errors(httpcore.ReadTimeout, httpcore.ReadError):
            self._sock.settimeout(self._deadline.bound(timeout))
            return self._sock.recv(max_bytes)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        with _socket_errors(httpcore.WriteTimeout, httpcore.WriteError):
            while buffer:
                self._sock.settimeout(self._deadline.bound(timeout))
                sent = self._sock.send(buffer)
                buffer = buffer[sent:]

    def close(self) -> None:
        self._sock.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        try:
            with _socket_errors(httpcore.ConnectTimeout, httpcore.ConnectError):
                self._sock.settimeout(self._deadline.bound(timeout))
                tls = ssl_context.wrap_socket(self._sock, server_hostname=server_hostname)
        except BaseException:
            self._sock.close()
            raise
        return DeadlineStream(tls, self._deadline)

    def get_extra_info(self, info: str) -> Any:
        if info == "ssl_object" and isinstance(self._sock, ssl.SSLSocket):
            return self._sock
        if info == "client_addr":
            return self._sock.getsockname()
        if info == "server_addr":
            return self._sock.getpeername()
        if info == "socket":
            return self._sock
        if info == "is_readable":
            # An idle kept-alive connection that is readable has been closed by the server.
            readable, _, _ = select.select([self._sock], [], [], 0)
            return bool(readable)
        return None


_HTTPCORE_TO_HTTPX: tuple[tuple[type[Exception], type[httpx.HTTPError]], ...] = (
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.ProtocolError, httpx.ProtocolError),
)


@contextlib.contextmanager
def _httpx_errors() -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        for core, mapped in _HTTPCORE_TO_HTTPX:
            if isinstance(exc, core):
                raise mapped(str(exc)) from exc
        raise


class _ResponseStream(httpx.SyncByteStream):
    def __init__(self, stream: Iterable[bytes]) -> None:
        self._stream = stream

    def __iter__(self) -> Iterator[bytes]:
        with _httpx_errors():
            yield from self._stream

    def close(self) -> None:
        close = getattr(self._stream, "close", None)
        if close is not None:
            close()


class _CheckedTransport(httpx.BaseTransport):
    """An httpx transport over a connection pool whose connections are all checked."""

    def __init__(self, pool: httpcore.ConnectionPool) -> None:
        self._pool = pool

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, httpx.SyncByteStream)
        core_request = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=request.url.raw_scheme,
                host=request.url.raw_host,
                port=request.url.port,
                target=request.url.raw_path,
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        with _httpx_errors():
            response = self._pool.handle_request(core_request)
        assert isinstance(response.stream, Iterable)
        return httpx.Response(
            status_code=response.status,
            headers=response.headers,
            stream=_ResponseStream(response.stream),
            extensions=response.extensions,
        )

    def close(self) -> None:
        self._pool.close()

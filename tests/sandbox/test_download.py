"""Source downloads against a real TLS server on loopback (spec: Source download rules).

The address policy stays on: the test resolver answers public addresses (or refused ones), and
the test dialer carries a connection meant for a checked public address to the loopback server.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import socket
import ssl
import stat
import time
import zlib
from collections.abc import Iterator
from datetime import UTC, date, datetime
from ipaddress import ip_address
from pathlib import Path

import pytest
import trustme

from almanac.platform.publishing.uploads.network import HostFailure
from almanac.sandbox.download import (
    MAX_BYTES,
    REASON_LIMIT,
    DownloadError,
    Downloads,
    Source,
    SourceDownloader,
    SystemDialer,
    download_reason,
    fill_source_url,
    user_agent,
)
from almanac.sandbox.resolver import SystemResolver
from tests.sandbox.test_addresses import REFUSED
from tests.sandbox.tls_server import (
    Handler,
    LoopbackDialer,
    TableResolver,
    TLSServer,
    chunks,
    client_context,
)

RATES = "rates.example.org"
FILES = "files.example.net"
OTHER = "other.example.com"
WRONG = "wrong.example.org"  # resolves, but the server's certificate does not name it
PUBLIC = "93.184.216.34"
PUBLIC2 = "93.184.216.35"
PUBLIC6 = "2606:2800:220:1:248:1893:25c8:1946"
BASE_URL = "https://almanac.test"
NOW = datetime(2026, 3, 7, 12, 30, tzinfo=UTC)
TODAY = date(2026, 3, 7)


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture
def server(ca: trustme.CA) -> Iterator[TLSServer]:
    with TLSServer(ca, (RATES, FILES, OTHER)) as running:
        yield running


def resolver_for(**overrides: list[str] | list[list[str]]) -> TableResolver:
    table: dict[str, list[str] | list[list[str]]] = {
        RATES: [PUBLIC],
        FILES: [PUBLIC2],
        OTHER: [PUBLIC],
        WRONG: [PUBLIC],
    }
    table.update({host.replace("_", "."): answer for host, answer in overrides.items()})
    return TableResolver(table)


def downloader(
    server: TLSServer,
    ca: trustme.CA,
    *,
    resolver: TableResolver | None = None,
    dialer: LoopbackDialer | None = None,
    deadline: float = 10.0,
) -> SourceDownloader:
    return SourceDownloader(
        base_url=BASE_URL,
        clock=lambda: NOW,
        resolver=resolver or resolver_for(),
        dialer=dialer or LoopbackDialer({PUBLIC: server.port, PUBLIC2: server.port}),
        ssl_context=client_context(ca),
        deadline_seconds=deadline,
    )


def body(payload: bytes, headers: dict[str, str] | None = None):
    def route(handler: Handler) -> None:
        handler.reply(200, payload, headers)

    return route


def redirect(location: str, status: int = 302, headers: dict[str, str] | None = None):
    def route(handler: Handler) -> None:
        handler.reply(status, b"", {"Location": location, **(headers or {})})

    return route


def status(code: int):
    def route(handler: Handler) -> None:
        handler.reply(code, f"status {code}".encode())

    return route


def close_delimited(total: int, key: str = "sent"):
    """A body with no Content-Length, ended by closing; records how much was written."""

    def route(handler: Handler) -> None:
        handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 16 * 1024)
        handler.send_response(200)
        handler.send_header("Connection", "close")
        handler.end_headers()
        handler.close_connection = True
        sent = 0
        try:
            for piece in chunks(total, 4096):
                handler.wfile.write(piece)
                sent += len(piece)
        except OSError:
            pass
        finally:
            handler.server.owner.state[key] = sent

    return route


def run(d: SourceDownloader, tmp_path: Path, *sources: Source, today: date = TODAY) -> Downloads:
    return d.download(list(sources), today=today, work_dir=tmp_path)


def refused(d: SourceDownloader, tmp_path: Path, *sources: Source) -> DownloadError:
    with pytest.raises(DownloadError) as caught:
        run(d, tmp_path, *sources)
    assert list(tmp_path.iterdir()) == [], "a failed download leaves nothing behind"
    assert len(caught.value.reason) <= REASON_LIMIT
    return caught.value


# --- what is kept ---------------------------------------------------------------------------


def test_sources_are_downloaded_in_order_into_a_fresh_folder_of_regular_files(
    server: TLSServer, ca: trustme.CA, tmp_path: Path
) -> None:
    server.routes["/rates.csv"] = body(b"date,rate\n2026-03-06,1.08\n")
    server.routes["/files/list.json"] = body(b'{"items": []}')
    dialer = LoopbackDialer({PUBLIC: server.port, PUBLIC2: server.port})
    d = downloader(server, ca, dialer=dialer)
    sources = (
        Source("rates", f"https://{RATES}/rates.csv", max_bytes=1000),
        Source("list", f"https://{FILES}/files/list.json"),
    )

    first = run(d, tmp_path, *sources)
    second = run(d, tmp_path, *sources)

    assert first.folder != second.folder
    assert first.folder.parent == tmp_path
    assert sorted(p.name for p in first.folder.iterdir()) == ["list", "rates"]
    assert [s.name for s in first.sources] == ["rates", "list"]
    assert [r.path for r in server.requests[:2]] == ["/rates.csv", "/files/list.json"]
    rates = first.sources[0]
    assert rates.url == f"https://{RATES}/rates.csv"
    assert rates.bytes == len(b"date,rate\n2026-03-06,1.08\n")
    assert rates.sha256 == hashlib.sha256(b"date,rate\n2026-03-06,1.08\n").hexdigest()
    assert rates.fetched_at == NOW
    for kept in first.sources:
        mode = os.lstat(kept.path).st_mode
        assert stat.S_ISREG(mode) and not stat.S_ISLNK(mode)
        assert kept.path == first.folder / kept.name
        assert hashlib.sha256(kept.path.read_bytes()).hexdigest() == kept.sha256
    # Each connection went to the checked public address, TLS verified for the host name.
    assert dialer.dialed[:2] == [(ip_address(PUBLIC), 443), (ip_address(PUBLIC2), 443)]
    assert server.sni[:2] == [RATES, FILES]


def test_today_year_and_month_are_filled(server: TLSServer, ca: trustme.CA, tmp_path: Path) -> None:
    server.routes["/r/2026/03/2026-03-07.csv"] = body(b"ok")
    template = f"https://{RATES}/r/{{year}}/{{month}}/{{today}}.csv?d={{today}}"
    assert fill_source_url(template, date(2026, 3, 7)) == (
        f"https://{RATES}/r/2026/03/2026-03-07.csv?d=2026-03-07"
    )
    got = run(downloader(server, ca), tmp_path, Source("rates", template))
    assert server.requests[0].path == "/r/2026/03/2026-03-07.csv?d=2026-03-07"
    assert got.sources[0].url == f"https://{RATES}/r/2026/03/2026-03-07.csv?d=2026-03-07"


def test_product_string_is_sent_and_no_cookie_or_credentials_ever(
    server: TLSServer, ca: trustme.CA, tmp_path: Path
) -> None:
    server.routes["/first"] = body(b"one", {"Set-Cookie": "session=abc; Path=/"})
    server.routes["/hop"] = redirect("/second", headers={"Set-Cookie": "hop=1; Path=/"})
    server.routes["/second"] = body(b"two")
    run(
        downloader(server, ca),
        tmp_path,
        Source("first", f"https://{RATES}/first"),
        Source("second", f"https://{RATES}/hop"),
    )
    assert [r.path for r in server.requests] == ["/first", "/hop", "/second"]
    for request in server.requests:
        assert request.headers["user-agent"] == "Almanac plug-ins (+https://almanac.test)"
        assert "cookie" not in request.headers
        assert "authorization" not in request.headers
    assert user_agent(BASE_URL) == "Almanac plug-ins (+https://almanac.test)"


def test_a_body_of_exactly_max_bytes_is_kept(
    server: TLSServer, ca: trustme.CA, tmp_path: Path
) -> None:
    server.routes["/declared"] = body(b"y" * 1000)
    server.routes["/streamed"] = close_delimited(1000)
    got = run(
        downloader(server, ca),
        tmp_path,
        Source("declared", f"https://{RATES}/declared", max_bytes=1000),
        Source("streamed", f"https://{RATES}/streamed", max_bytes=1000),
    )
    assert [s.bytes for s in got.sources] == [1000, 1000]


def test_redirects_up_to_five_across_named_hosts_each_checked(
    server: TLSServer, ca: trustme.CA, tmp_path: Path
) -> None:
    for n in range(1, 7):
        host = FILES if n % 2 else RATES
        server.routes[f"/c{n}"] = redirect(f"https://{host}/c{n - 1}" if n > 1 else "/end")
    server.routes["/end"] = body(b"end")
    resolver = resolver_for()
    got = run(
        downloader(server, ca, resolver=resolver),
        tmp_path,
        Source("chain", f"https://{RATES}/c5"),
        Source("files", f"https://{FILES}/end"),
    )
    paths = ["/c5", "/c4", "/c3", "/c2", "/c1", "/end", "/end"]
    assert [r.path for r in server.requests] == paths
    assert got.sources[0].url == f"https://{RATES}/end"
    # Hops alternate between the two hosts; each host was resolved and checked once for its
    # kept-alive connection, and again for the next source's fresh connection.
    assert resolver.calls == [RATES, FILES, FILES]


def test_an_ipv6_host_is_reached_at_its_checked_address(
    server: TLSServer, ca: trustme.CA, tmp_path: Path
) -> None:
    server.routes["/x"] = body(b"six")
    dialer = LoopbackDialer({PUBLIC6: server.port})
    d = downloader(server, ca, resolver=resolver_for(rates_example_org=[PUBLIC6]), dialer=dialer)
    assert run(d, tmp_path, Source("rates", f"https://{RATES}/x")).sources[0].bytes == 3
    assert dialer.dialed == [(ip_address(PUBLIC6), 443)]


def test_the_next_checked_address_is_tried_when_one_does_not_answer(
    server: TLSServer, ca: trustme.CA, tmp_path: Path
) -> None:
    server.routes["/x"] = body(b"ok")
    dialer = LoopbackDialer({PUBLIC: server.port})  # nothing answers at PUBLIC2
    resolver = resolver_for(rates_example_org=[PUBLIC2, PUBLIC])
    d = downloader(server, ca, resolver=resolver, dialer=dialer)
    assert run(d, tmp_path, Source("rates", f"https://{RATES}/x")).sources[0].bytes == 2
    assert dialer.dialed == [(ip_address(PUBLIC2), 443), (ip_address(PUBLIC), 443)]
    assert resolver.calls == [RATES]


def test_the_system_dialer_connects_to_exactly_the_address_given(server: TLSServer) -> None:
    sock = SystemDialer().dial(ip_address("127.0.0.1"), server.port, 5.0)
    with sock:
        assert sock.getpeername() == ("127.0.0.1", server.port)


# --- what is refused ------------------------------------------------------------------------


@pytest.mark.parametrize(("address", "why"), [r for r in REFUSED if "%" not in r[0]])
def test_a_host_resolving_to_a_refused_address_is_never_connected(
    server: TLSServer, ca: trustme.CA, tmp_path: Path, address: str, why: str
) -> None:
    # The dialer would carry this very address to the server: only the policy stops it.
    dialer = LoopbackDialer({address: server.port, PUBLIC: server.port})
    server.routes["/x"] = body(b"secret")
    d = downloader(server, ca, resolver=resolver_for(rates_example_org=[address]), dialer=dialer)
    error = refused(d, tmp_path, Source("rates", f"https://{RATES}/x"))
    assert error.reason.startswith(f"could not download rates: {RATES} resolves to ")
    assert why in error.reason
    assert dialer.dialed == []
    assert server.requests == []


@pytest.mark.parametrize(
    "answer", [[PUBLIC, "10.0.0.5"], ["192.168.0.9", PUBLIC], [PUBLIC6, "::1"]]
)
def test_one_refused_address_among_public_ones_refuses_the_host(
    server: TLSServer, ca: trustme.CA, tmp_path: Path, answer: list[str]
) -> None:
    dialer = LoopbackDialer({PUBLIC: server.port, PUBLIC6: server.port})
    d = downloader(server, ca, resolver=resolver_for(rates_example_org=answer), dialer=dialer)
    error = refused(d, tmp_path, Source("rates", f"https://{RATES}/x"))
    assert "a refused address" in error.reason
    assert dialer.dialed == []


def test_dns_rebinding_cannot_move_a_connection(
    server: TLSServer, ca: trustme.CA, tmp_path: Path
) -> None:
    # Public at the first answer, loopback at every later one.
    resolver = resolver_for(rates_example_org=[[PUBLIC], ["127.0.0.1"]])
    dialer = LoopbackDialer({PUBLIC: server.port, "127.0.0.1": server.port})
    server.routes["/a"] = redirect("/b")
    server.routes["/b"] = body(b"b")
    d = downloader(server, ca, resolver=resolver, dialer=dialer)

    got = run(d, tmp_path, Source("rates", f"https://{RATES}/a"))
    assert got.sources[0].bytes == 1
    # One resolution for the connection, which carried the redirect too, to the checked address.
    assert resolver.calls == [RATES]
    assert dialer.dialed == [(ip_address(PUBLIC), 443)]

    # A new connection resolves anew, and the rebound answer is refused before any connection.
    later = tmp_path / "later"
    later.mkdir()
    error = refused(d, later, Source("rates", f"https://{RATES}/a"))
    assert "resolves to 127.0.0.1" in error.reason
    assert resolver.calls == [RATES, RATES]
    assert dialer.dialed == [(ip_address(PUBLIC), 443)]


@pytest.mark.parametrize(
    ("url", "why"),
    [
        (f"http://{RATES}/x", "only https addresses are downloaded"),
        (f"ftp://{RATES}/x", "only https addresses are downloaded"),
        (f"https://user:hunter2@{RATES}/x", "carries a user name or password"),
        (f"https://user@{RATES}/x", "carries a user name or password"),
        ("https://93.184.216.34/x", "IP-address hosts are refused"),
        ("https://[2606:2800:220:1:248:1893:25c8:1946]/x", "IP-address hosts are refused"),
    ],
)
def test_addresses_that_are_not_plain_https_to_a_named_host_are_refused(
    server: TLSServer, ca: trustme.CA, tmp_path: Path, url: str, why: str
) -> None:
    resolver = resolver_for()
    error = refused(downloader(server, ca, resolver=resolver), tmp_path, Source("rates", url))
    assert why in error.reason
    assert "hunter2" not in error.reason
    assert resolver.calls == []
    assert server.requests == []


def test_six_redirects_are_refused(server: TLSServer, ca: trustme.CA, tmp_path: Path) -> None:
    for n in range(1, 7):
        server.routes[f"/c{n}"] = redirect(f"/c{n - 1}" if n > 1 else "/end")
    server.routes["/end"] = body(b"end")
    error = refused(downloader(server, ca), tmp_path, Source("chain", f"https://{RATES}/c6"))
    assert error.reason == "could not download chain: more than 5 redirects"
    assert len(server.requests) == 6


def test_a_redirect_to_a_host_no_source_names_is_refused(
    server: TLSServer, ca: trustme.CA, tmp_path: Path
) -> None:
    server.routes["/go"] = redirect(f"https://{OTHER}/x")
    server.routes["/x"] = body(b"x")
    resolver = resolver_for()
    error = refused(
        downloader(server, ca, resolver=resolver), tmp_path, Source("rates", f"https://{RATES}/go")
    )
    assert error.reason == (
        f"could not download rates: redirect refused: {OTHER} is not a host any source names"
    )
    assert [r.path for r in server.requests] == ["/go"]
    assert OTHER not in resolver.calls


def test_a_redirect_to_http_is_refused(server: TLSServer, ca: trustme.CA, tmp_path: Path) -> None:
    server.routes["/go"] = redirect(f"http://{RATES}/x", status=301)
    error = refused(downloader(server, ca), tmp_path, Source("rates", f"https://{RATES}/go"))
    assert "redirect refused: only https addresses are downloaded" in error.reason


def test_a_redirect_to_a_named_host_that_resolves_privately_is_refused(
    server: TLSServer, ca: trustme.CA, tmp_path: Path
) -> None:
    server.routes["/go"] = redirect(f"https://{FILES}/x", status=307)
    dialer = LoopbackDialer({PUBLIC: server.port, "10.1.2.3": server.port})
    d = downloader(server, ca, resolver=resolver_for(files_example_net=["10.1.2.3"]), dialer=dialer)
    error = refused(
        d,
        tmp_path,
        Source("rates", f"https://{RATES}/go"),
        Source("files", f"https://{FILES}/y"),
    )
    assert error.reason.startswith("could not download rates: files.example.net resolves to 10.")
    assert [str(a) for a, _ in dialer.dialed] == [PUBLIC]


def test_a_redirect_with_credentials_or_without_a_location_is_refused(
    server: TLSServer, ca: trustme.CA, tmp_path: Path
) -> None:
    server.routes["/creds"] = redirect(f"https://user:hunter2@{RATES}/x")
    server.routes["/nowhere"] = lambda handler: handler.reply(302, b"")
    d = downloader(server, ca)
    error = refused(d, tmp_path, Source("rates", f"https://{RATES}/creds"))
    assert error.reason == (
        "could not download rates: redirect refused: the address carries a user name or password"
    )
    error = refused(d, tmp_path, Source("rates", f"https://{RATES}/nowhere"))
    assert error.reason == "could not download rates: HTTP 302 redirect without a Location"


@pytest.mark.parametrize("name", ["../escape", "Rates", "", "a/b", "x" * 49])
def test_a_source_name_that_is_not_a_key_is_refused(
    server: TLSServer, ca: trustme.CA, tmp_path: Path, name: str
) -> None:
    server.routes["/x"] = body(b"x")
    error = refused(downloader(server, ca), tmp_path, Source(name, f"https://{RATES}/x"))
    assert error.reason.endswith(": not a valid source name")
    assert server.requests == []


@pytest.mark.parametrize("code", [404, 500, 204, 304])
def test_only_status_200_is_kept(
    server: TLSServer, ca: trustme.CA, tmp_path: Path, code: int
) -> None:
    server.routes["/x"] = status(code)
    error = refused(downloader(server, ca), tmp_path, Source("rates", f"https://{RATES}/x"))
    assert error.reason == f"could not download rates: the server answered HTTP {code}, not 200"


def test_one_byte_over_max_bytes_is_refused_before_reading_a_declared_body(
    server: TLSServer, ca: trustme.CA, tmp_path: Path
) -> None:
    server.routes["/x"] = body(b"y" * 1001)
    error = refused(
        downloader(server, ca), tmp_path, Source("rates", f"https://{RATES}/x", max_bytes=1000)
    )
    assert "larger than maxBytes (1000)" in error.reason


def test_an_undeclared_body_over_max_bytes_stops_reading_at_once(
    server: TLSServer, ca: trustme.CA, tmp_path: Path
) -> None:
    offered = 256 * 1024 * 1024
    server.routes["/x"] = close_delimited(offered)
    dialer = LoopbackDialer({PUBLIC: server.port}, receive_buffer=16 * 1024)
    error = refused(
        downloader(server, ca, dialer=dialer),
        tmp_path,
        Source("rates", f"https://{RATES}/x", max_bytes=1000),
    )
    assert error.reason == "could not download rates: the body is larger than maxBytes (1000 bytes)"
    deadline = time.monotonic() + 10
    while "sent" not in server.state and time.monotonic() < deadline:
        time.sleep(0.02)
    # The client hung up after one read past the limit: the server pushed only what that read
    # and the two small socket buffers hold, not the 256 MB it offered.
    assert int(server.state["sent"]) < 256 * 1024  # type: ignore[call-overload]


def test_max_bytes_is_never_above_20_mb(server: TLSServer, ca: trustme.CA, tmp_path: Path) -> None:
    server.routes["/x"] = close_delimited(MAX_BYTES + 1)
    error = refused(
        downloader(server, ca),
        tmp_path,
        Source("rates", f"https://{RATES}/x", max_bytes=MAX_BYTES * 4),
    )
    assert f"larger than maxBytes ({MAX_BYTES} bytes)" in error.reason


def test_a_slow_body_fails_at_the_deadline(
    server: TLSServer, ca: trustme.CA, tmp_path: Path
) -> None:
    def trickle(handler: Handler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Length", "100")
        handler.end_headers()
        try:
            for _ in range(100):
                handler.wfile.write(b"z")
                handler.wfile.flush()
                time.sleep(0.1)
        except OSError:
            pass

    server.routes["/x"] = trickle
    started = time.monotonic()
    error = refused(
        downloader(server, ca, deadline=1.0), tmp_path, Source("rates", f"https://{RATES}/x")
    )
    elapsed = time.monotonic() - started
    assert error.reason == "could not download rates: did not finish within 1 seconds"
    assert elapsed < 5  # bound of the deadline itself, not a speed goal


def test_a_silent_server_fails_at_the_deadline(
    server: TLSServer, ca: trustme.CA, tmp_path: Path
) -> None:
    server.routes["/x"] = lambda handler: time.sleep(4)
    started = time.monotonic()
    error = refused(
        downloader(server, ca, deadline=1.0), tmp_path, Source("rates", f"https://{RATES}/x")
    )
    assert error.reason == "could not download rates: did not finish within 1 seconds"
    assert time.monotonic() - started < 3.5


def test_the_deadline_covers_every_hop_together(
    server: TLSServer, ca: trustme.CA, tmp_path: Path
) -> None:
    def slow_redirect(handler: Handler) -> None:
        time.sleep(1.5)
        handler.reply(302, b"", {"Location": "/silent"})

    server.routes["/x"] = slow_redirect
    server.routes["/silent"] = lambda handler: time.sleep(6)
    started = time.monotonic()
    error = refused(
        downloader(server, ca, deadline=2.0), tmp_path, Source("rates", f"https://{RATES}/x")
    )
    assert error.reason == "could not download rates: did not finish within 2 seconds"
    # The second hop may use only what the first left: about 0.5 s, not a fresh 2 s.
    assert time.monotonic() - started < 3.0
    assert [r.path for r in server.requests] == ["/x", "/silent"]


def test_a_body_cut_short_is_not_kept(server: TLSServer, ca: trustme.CA, tmp_path: Path) -> None:
    def cut(handler: Handler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Length", "100")
        handler.end_headers()
        handler.wfile.write(b"z" * 50)
        handler.close_connection = True

    server.routes["/x"] = cut
    error = refused(downloader(server, ca), tmp_path, Source("rates", f"https://{RATES}/x"))
    assert "broke off" in error.reason


def test_a_failure_removes_every_earlier_download(
    server: TLSServer, ca: trustme.CA, tmp_path: Path
) -> None:
    server.routes["/good"] = body(b"good")
    server.routes["/bad"] = status(500)
    error = refused(
        downloader(server, ca),
        tmp_path,
        Source("good", f"https://{RATES}/good"),
        Source("bad", f"https://{RATES}/bad"),
        Source("never", f"https://{RATES}/good"),
    )
    assert error.source == "bad"
    assert [r.path for r in server.requests] == ["/good", "/bad"]


def test_tls_is_verified_for_the_host_name(
    server: TLSServer, ca: trustme.CA, tmp_path: Path
) -> None:
    server.routes["/x"] = body(b"x")
    error = refused(downloader(server, ca), tmp_path, Source("wrong", f"https://{WRONG}/x"))
    assert error.reason.startswith("could not download wrong: could not connect: ")
    assert "CERTIFICATE_VERIFY_FAILED" in error.reason
    assert server.sni == [WRONG]
    assert server.requests == []


def test_an_unknown_ca_is_not_trusted(server: TLSServer, ca: trustme.CA, tmp_path: Path) -> None:
    server.routes["/x"] = body(b"x")
    d = SourceDownloader(
        base_url=BASE_URL,
        clock=lambda: NOW,
        resolver=resolver_for(),
        dialer=LoopbackDialer({PUBLIC: server.port}),
        ssl_context=client_context(trustme.CA()),
    )
    error = refused(d, tmp_path, Source("rates", f"https://{RATES}/x"))
    assert "CERTIFICATE_VERIFY_FAILED" in error.reason


def test_each_failure_says_whether_anything_on_the_network_answered(
    server: TLSServer, ca: trustme.CA, tmp_path: Path
) -> None:
    # The upload checks tell the service's own network from a publisher's URL by this
    # (almanac.platform.publishing.uploads.network); the namespace test adds no name server and
    # no route.
    server.routes["/missing"] = status(404)
    server.routes["/x"] = body(b"x")
    server.routes["/silent"] = lambda handler: time.sleep(3)
    d = downloader(
        server,
        ca,
        resolver=resolver_for(private_example_org=["10.0.0.1"], down_example_org=[PUBLIC2]),
        dialer=LoopbackDialer({PUBLIC: server.port}),
        deadline=1.0,
    )
    cases = {
        f"https://{RATES}/missing": HostFailure.ANSWERED,  # an HTTP status
        f"https://{WRONG}/x": HostFailure.ANSWERED,  # a TLS handshake, refused
        f"https://{RATES}/silent": HostFailure.ANSWERED,  # connected, then too slow
        "https://private.example.org/x": HostFailure.ANSWERED,  # the address rule refused it
        "http://plain.example.org/x": HostFailure.ANSWERED,  # the https rule
        "https://nowhere.example.org/x": HostFailure.NO_SUCH_HOST,  # the table's NXDOMAIN
        "https://down.example.org/x": HostFailure.REFUSED,  # nothing listens for it
    }
    for url, failure in cases.items():
        error = refused(d, tmp_path, Source("s", url))
        assert error.failure is failure, (url, error.reason)


def test_verification_and_the_60_second_ceiling_cannot_be_turned_off() -> None:
    unverified = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    unverified.check_hostname = False
    unverified.verify_mode = ssl.CERT_NONE
    with pytest.raises(ValueError, match="verification"):
        SourceDownloader(base_url=BASE_URL, ssl_context=unverified)
    with pytest.raises(ValueError, match="deadline_seconds"):
        SourceDownloader(base_url=BASE_URL, deadline_seconds=61)


def test_the_production_configuration_refuses_loopback(tmp_path: Path) -> None:
    # System resolver, real dialer, certifi CA: localhost resolves to loopback and is refused
    # before any connection is attempted.
    error = refused(
        SourceDownloader(base_url=BASE_URL), tmp_path, Source("l", "https://localhost/x")
    )
    assert error.reason.startswith("could not download l: localhost resolves to ")
    assert "loopback" in error.reason


def test_the_system_resolver_answers_addresses() -> None:
    answer = SystemResolver().resolve("localhost", 443, 5.0)
    assert answer and all(a.is_loopback for a in answer)
    assert ip_address("127.0.0.1") in answer or ip_address("::1") in answer


def test_a_reason_never_exceeds_300_characters() -> None:
    reason = download_reason("rates", "x" * 500)
    assert len(reason) == REASON_LIMIT
    assert reason.startswith("could not download rates: xxx") and reason.endswith("...")
    assert download_reason("rates", "short") == "could not download rates: short"


# --- content encodings ----------------------------------------------------------------------

PLAIN = b"".join(
    b"2026-%02d-%02d,%d.%04d\n" % (1 + n % 12, 1 + n % 28, n, n * 7) for n in range(9000)
)


def _gzip(data: bytes) -> bytes:
    squeeze = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    return squeeze.compress(data) + squeeze.flush()


def _raw_deflate(data: bytes) -> bytes:
    squeeze = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    return squeeze.compress(data) + squeeze.flush()


ENCODED = {
    "gzip": ("gzip", _gzip(PLAIN)),
    "x-gzip": ("x-gzip", _gzip(PLAIN)),
    "gzip in two members": ("gzip", _gzip(PLAIN[:70000]) + _gzip(PLAIN[70000:])),
    "deflate (zlib)": ("deflate", zlib.compress(PLAIN)),
    "deflate (raw)": ("deflate", _raw_deflate(PLAIN)),
    "identity, then gzip": ("identity, GZIP", _gzip(PLAIN)),
    "gzip, then deflate": ("gzip, deflate", zlib.compress(_gzip(PLAIN))),
    "three layers": ("deflate, gzip, gzip", _gzip(_gzip(_raw_deflate(PLAIN)))),
}


def trickled(payload: bytes, headers: dict[str, str]):
    """The body written a few bytes at a time (1 to 7), each piece sent at once."""

    def route(handler: Handler) -> None:
        handler.send_response(200)
        for name, value in headers.items():
            handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(payload)))
        handler.end_headers()
        at, size = 0, 1
        while at < len(payload):
            handler.wfile.write(payload[at : at + size])
            handler.wfile.flush()
            at, size = at + size, size % 7 + 1

    return route


@pytest.mark.parametrize("case", sorted(ENCODED))
def test_a_body_encoded_although_identity_was_asked_is_kept_decoded_the_same_every_time(
    server: TLSServer, ca: trustme.CA, tmp_path: Path, case: str
) -> None:
    encoding, payload = ENCODED[case]
    assert len(payload) < len(PLAIN) < 400_000
    server.routes["/x"] = body(payload, {"Content-Encoding": encoding})
    server.routes["/slow"] = trickled(payload, {"Content-Encoding": encoding})
    d = downloader(server, ca)
    source = Source("rates", f"https://{RATES}/x", max_bytes=len(PLAIN))
    # The same body arriving a few bytes at a time decodes to the same bytes.
    slow = Source("rates", f"https://{RATES}/slow", max_bytes=len(PLAIN))
    kept = [run(d, tmp_path, source).sources[0] for _ in range(3)]
    kept.append(run(d, tmp_path, slow).sources[0])
    for got in kept:
        assert got.path.read_bytes() == PLAIN
        assert (got.bytes, got.sha256) == (len(PLAIN), hashlib.sha256(PLAIN).hexdigest())
    assert [r.path for r in server.requests] == ["/x", "/x", "/x", "/slow"]
    assert all(r.headers["accept-encoding"] == "identity" for r in server.requests)


@pytest.fixture
def empty_work(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    return work


def test_max_bytes_counts_the_decoded_bytes_kept(
    server: TLSServer, ca: trustme.CA, tmp_path: Path, empty_work: Path
) -> None:
    server.routes["/fits"] = body(_gzip(b"y" * 1000), {"Content-Encoding": "gzip"})
    server.routes["/over"] = body(_gzip(b"y" * 1001), {"Content-Encoding": "gzip"})
    server.routes["/stacked"] = body(_gzip(_gzip(b"y" * 1001)), {"Content-Encoding": "gzip, gzip"})
    d = downloader(server, ca)
    got = run(d, tmp_path, Source("fits", f"https://{RATES}/fits", max_bytes=1000))
    assert got.sources[0].bytes == 1000
    assert got.sources[0].path.read_bytes() == b"y" * 1000
    for route in ("/over", "/stacked"):
        error = refused(d, empty_work, Source("rates", f"https://{RATES}{route}", max_bytes=1000))
        assert error.reason == (
            "could not download rates: the gzip body decodes to more than maxBytes (1000 bytes)"
        )


@pytest.mark.parametrize(
    ("encoding", "payload", "why"),
    [
        ("gzip", _gzip(PLAIN)[:-4], "the gzip body is cut short"),
        ("gzip", _gzip(PLAIN)[:1], "the gzip body is cut short"),
        ("deflate", zlib.compress(PLAIN)[:-1], "the deflate body is cut short"),
        ("gzip, gzip", _gzip(_gzip(PLAIN)[:-8]), "the gzip body is cut short"),
        ("deflate", zlib.compress(PLAIN) + b"more", "the deflate body goes on after its end"),
        ("deflate", _raw_deflate(PLAIN) + b"\x00", "the deflate body goes on after its end"),
        ("gzip", _gzip(PLAIN) + b"more", "the gzip body does not decode"),
        ("gzip", zlib.compress(PLAIN), "the gzip body does not decode"),
        ("gzip", b"\x1f\x8b" + bytes(40), "the gzip body does not decode"),
    ],
)
def test_an_encoded_body_is_kept_only_when_every_layer_ends_exactly(
    server: TLSServer, ca: trustme.CA, empty_work: Path, encoding: str, payload: bytes, why: str
) -> None:
    server.routes["/x"] = body(payload, {"Content-Encoding": encoding})
    error = refused(downloader(server, ca), empty_work, Source("rates", f"https://{RATES}/x"))
    assert error.reason.startswith(f"could not download rates: {why}")


@pytest.mark.parametrize(
    ("encoding", "shown"),
    [
        ("br", "br"),
        ("zstd", "zstd"),
        ("compress", "compress"),
        ("gzip, br", "br"),
        ("x-\u00e9" + "z" * 60, "x-?" + "z" * 37 + "..."),
    ],
)
def test_an_encoding_that_is_not_decoded_is_refused_with_its_name(
    server: TLSServer, ca: trustme.CA, tmp_path: Path, encoding: str, shown: str
) -> None:
    def route(handler: Handler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Encoding", encoding)
        handler.send_header("Content-Length", str(len(PLAIN)))
        handler.end_headers()
        handler.wfile.write(PLAIN)

    server.routes["/x"] = route
    error = refused(downloader(server, ca), tmp_path, Source("rates", f"https://{RATES}/x"))
    assert error.reason == (
        f"could not download rates: the server sent a {shown} body, which was not asked for"
    )


def test_more_than_three_stacked_encodings_are_refused(
    server: TLSServer, ca: trustme.CA, tmp_path: Path
) -> None:
    payload = _gzip(_gzip(_gzip(_gzip(b"four"))))
    server.routes["/x"] = body(payload, {"Content-Encoding": "gzip, gzip, identity, gzip, gzip"})
    error = refused(downloader(server, ca), tmp_path, Source("rates", f"https://{RATES}/x"))
    assert error.reason == (
        "could not download rates: the server sent a body in 4 stacked content encodings; "
        "at most 3 are decoded"
    )


def test_the_bytes_on_the_wire_are_held_to_max_bytes_too(
    server: TLSServer, ca: trustme.CA, tmp_path: Path
) -> None:
    # Empty stored deflate blocks decode to nothing: only the count on the wire ends them.
    empty_block = b"\x00\x00\x00\xff\xff"

    def endless(handler: Handler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Encoding", "deflate")
        handler.send_header("Connection", "close")
        handler.end_headers()
        handler.close_connection = True
        with contextlib.suppress(OSError):
            for _ in range(1_000_000):
                handler.wfile.write(empty_block * 800)

    server.routes["/declared"] = body(empty_block * 1000, {"Content-Encoding": "deflate"})
    server.routes["/endless"] = endless
    d = downloader(server, ca)
    error = refused(d, tmp_path, Source("rates", f"https://{RATES}/declared", max_bytes=1000))
    assert error.reason == (
        "could not download rates: the body of 5000 bytes is larger than maxBytes (1000)"
    )
    error = refused(d, tmp_path, Source("rates", f"https://{RATES}/endless", max_bytes=1000))
    assert error.reason == "could not download rates: the body is larger than maxBytes (1000 bytes)"

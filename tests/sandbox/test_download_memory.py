"""The downloader's memory stays bounded whatever a hostile source host sends: small bodies that
decode to 1 GiB of zeros through one or stacked content encodings, or an encoding that was not
asked for. Each download runs in a child process (this module, run with `python -m`) whose
peak resident memory is measured before and after; the server is a real TLS server on loopback
in that child.
"""

from __future__ import annotations

import json
import struct
import sys
import tempfile
import zlib
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
import trustme

from almanac.sandbox.download import MAX_BYTES, DownloadError, Source, SourceDownloader
from tests.sandbox.peak_memory import MIB, peak_growth, print_child_answer, run_child
from tests.sandbox.tls_server import (
    Handler,
    LoopbackDialer,
    TableResolver,
    TLSServer,
    client_context,
)

HOST = "rates.example.org"
PUBLIC = "93.184.216.34"
GIB = 1 << 30
GROWTH_LIMIT = 64 * MIB
"""The most one download may raise the peak: a small constant, whatever the body decodes to."""

TOO_LARGE = f"decodes to more than maxBytes ({MAX_BYTES} bytes)"


def _zeros_deflated(total: int) -> tuple[bytes, int, int]:
    """Raw deflate of `total` zero bytes, with their CRC-32 and Adler-32, made 1 MiB at a time."""
    squeeze = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    block = bytes(MIB)
    parts, crc, adler = [], 0, 1
    for _ in range(total // MIB):
        parts.append(squeeze.compress(block))
        crc = zlib.crc32(block, crc)
        adler = zlib.adler32(block, adler)
    parts.append(squeeze.flush())
    return b"".join(parts), crc, adler


def _gzip(data: bytes) -> bytes:
    squeeze = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    return squeeze.compress(data) + squeeze.flush()


def _zlib(data: bytes) -> bytes:
    return zlib.compress(data, 9)


@pytest.fixture(scope="module")
def bodies(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each case's body as a file: 1 GiB of zeros deflated once, framed as gzip and zlib."""
    raw, crc, adler = _zeros_deflated(GIB)
    gzipped = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff" + raw + struct.pack("<II", crc, GIB)
    zlibbed = b"\x78\xda" + raw + struct.pack(">I", adler)
    made = {
        "gzip": gzipped,
        "deflate": zlibbed,
        "raw-deflate": raw,
        "gzip-gzip": _gzip(gzipped),
        "gzip-deflate-gzip": _gzip(_zlib(gzipped)),
        # No brotli encoder here: the gzip bomb sent under a name the downloader does not decode.
        "br": gzipped,
    }
    folder = tmp_path_factory.mktemp("bombs")
    for name, payload in made.items():
        (folder / name).write_bytes(payload)
    return {name: folder / name for name in made}


# (case, Content-Encoding sent, the reason the download is refused with)
CASES = [
    ("gzip", "gzip", f"the gzip body {TOO_LARGE}"),
    ("deflate", "deflate", f"the deflate body {TOO_LARGE}"),
    ("raw-deflate", "deflate", f"the deflate body {TOO_LARGE}"),
    ("gzip-gzip", "gzip, gzip", f"the gzip body {TOO_LARGE}"),
    ("gzip-deflate-gzip", "gzip, deflate, gzip", f"the gzip body {TOO_LARGE}"),
    ("br", "br", "the server sent a br body, which was not asked for"),
]


@pytest.mark.parametrize(("case", "encoding", "why"), CASES, ids=[c[0] for c in CASES])
def test_a_small_body_that_decodes_to_1_gib_raises_the_peak_by_at_most_64_mib(
    bodies: dict[str, Path], tmp_path: Path, case: str, encoding: str, why: str
) -> None:
    body = bodies[case]
    answer = run_child(
        "tests.sandbox.test_download_memory",
        {"body": str(body), "encoding": encoding, "work": str(tmp_path)},
    )
    grew = answer["grew"]
    print(f"\n{case} ({body.stat().st_size} bytes, {encoding}): peak grew {grew / MIB:.1f} MiB")
    assert grew <= GROWTH_LIMIT, f"the peak grew by {grew / MIB:.1f} MiB"
    assert "kept" not in answer or answer["kept"] <= MAX_BYTES
    assert answer.get("refused") == f"could not download src: {why}"
    assert list(tmp_path.iterdir()) == [], "a refused download leaves nothing behind"


def main() -> None:
    case = json.loads(sys.argv[1])
    payload = Path(case["body"]).read_bytes()
    headers = {"Content-Encoding": case["encoding"]}

    def bomb(handler: Handler) -> None:
        handler.reply(200, payload, headers)

    with TLSServer(trustme.CA(), (HOST,)) as server:
        server.routes["/warm"] = lambda handler: handler.reply(200, b"warm")
        server.routes["/bomb"] = bomb
        downloader = SourceDownloader(
            base_url="https://almanac.test",
            clock=lambda: datetime(2026, 3, 7, tzinfo=UTC),
            resolver=TableResolver({HOST: [PUBLIC]}),
            dialer=LoopbackDialer({PUBLIC: server.port}),
            ssl_context=client_context(server.ca),
            deadline_seconds=60,
        )
        today = date(2026, 3, 7)
        # One small download first, so that what is measured is the body, not first imports.
        with tempfile.TemporaryDirectory() as warm:
            warm_source = [Source("warm", f"https://{HOST}/warm")]
            downloader.download(warm_source, today=today, work_dir=Path(warm))

        def attempt() -> dict[str, object]:
            try:
                sources = [Source("src", f"https://{HOST}/bomb")]
                got = downloader.download(sources, today=today, work_dir=Path(case["work"]))
            except DownloadError as error:
                return {"refused": error.reason}
            return {"kept": got.sources[0].bytes}

        outcome, grew = peak_growth(attempt)
    print_child_answer({**outcome, "grew": grew})


if __name__ == "__main__":
    main()

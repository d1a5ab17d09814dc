"""Benchmark: the time from an upload to all its checks final, for each example plug-in, beside
the same plug-in's `check` with the tool, measured in the same run.

The upload is the portal's (`uploads.upload`: the static checks, in the request); its room
checks run as a Dagster run of the checks job on a real instance (the publishing tick harness),
each in the real locked room, on PostgreSQL (`ALMANAC_TEST_DATABASE_URL`), with the real sources
and listing links served by a local HTTPS server with a test CA. `check` is
`node tool/almanac-plugin.mjs check <folder>` (it runs the fixtures twice and each run case;
it downloads nothing and follows no link).

    ALMANAC_TEST_DATABASE_URL=postgresql+psycopg://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python tests/benchmarks/bench_upload_checks.py
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tempfile
import time
import zipfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

import dagster as dg  # noqa: E402
from sqlalchemy.orm import Session  # noqa: E402

from almanac.definitions import build_definitions  # noqa: E402
from almanac.platform.accounts import Argon2Parameters, Passwords  # noqa: E402
from almanac.platform.mail import OutboxMailer  # noqa: E402
from almanac.platform.publishing.models import UploadState  # noqa: E402
from almanac.platform.publishing.uploads import uploads  # noqa: E402
from almanac.platform.publishing.uploads.room_checks import listing_links  # noqa: E402
from almanac.sandbox.tool_imports import import_problems  # noqa: E402
from almanac.sensors.upload_checks import DownloaderSources  # noqa: E402
from almanac.settings import Settings  # noqa: E402
from tests.orchestration.conftest import fresh_postgres_engine  # noqa: E402
from tests.orchestration.harness import FrozenClock, SourceServer  # noqa: E402
from tests.publishing.dagster_ticks import Ticker  # noqa: E402
from tests.publishing.helpers import organization  # noqa: E402

EXAMPLES = REPO / "examples"
NODE = REPO / ".venv" / "bin" / "node"
TOOL = REPO / "tool" / "almanac-plugin.mjs"
T0 = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)


def files_of(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def zipped(folder: Path) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, content in files_of(folder).items():
            archive.writestr(
                zipfile.ZipInfo(f"{folder.name}/{path}", (1980, 1, 1, 0, 0, 0)), content
            )
    return buffer.getvalue()


def links_of(folder: Path) -> list[str]:
    listing = folder / "listing.json"
    doc = json.loads(listing.read_text(encoding="utf-8")) if listing.is_file() else None
    return [url for _, url in listing_links(doc)]


def main() -> None:
    folders = sorted(p for p in EXAMPLES.iterdir() if (p / "plugin.json").is_file())
    hosts: set[str] = set()
    for folder in folders:
        manifest = json.loads((folder / "plugin.json").read_text(encoding="utf-8"))
        hosts.update(urlsplit(s["url"]).hostname or "" for s in manifest["sources"])
        hosts.update(urlsplit(url).hostname or "" for url in links_of(folder))
    clock = FrozenClock(T0)
    rows = []
    with (
        fresh_postgres_engine("benchchecks") as engine,
        SourceServer(sorted(hosts)) as server,
        tempfile.TemporaryDirectory() as tmp,
    ):
        for folder in folders:
            server.serve_example(folder)
            for url in links_of(folder):
                path = urlsplit(url).path
                if path not in server._server.routes:
                    server.serve(path, b"<html>a page</html>")
        with Session(engine, expire_on_commit=False) as db:
            org = organization(db, Passwords(Argon2Parameters.fast()), T0, "bench")

        def build() -> dg.Definitions:
            return build_definitions(
                settings=Settings(Path(tmp), 0, 0, str(engine.url), "https://almanac.test"),
                engine=engine,
                catalog=[],
                clock=clock,
                check_sources=lambda: DownloaderSources(
                    server.downloader(clock), server.downloader(clock)
                ),
                mailer=lambda: OutboxMailer(engine, console=io.StringIO()),
            )

        with Ticker.open(Path(tmp), clock, build) as dagster:
            dagster.step(T0)  # the workspace loaded once, as a running service has it
            for step, folder in enumerate(folders, start=1):
                archive = zipped(folder)
                started = time.perf_counter()
                with Session(engine, expire_on_commit=False) as db:
                    answer = uploads.upload(
                        db, org.id, org.owner, uploads.examine(archive, import_problems), clock()
                    )
                    db.commit()
                static = time.perf_counter() - started
                dagster.step(T0 + timedelta(minutes=step))
                with Session(engine) as db:
                    found = uploads.show_upload(db, org.id, org.owner, answer.upload.id)
                total = time.perf_counter() - started
                assert found.state is UploadState.CHECKED, found.state
                failed = [c.name for c in found.checks if c.status.value == "failed"]
                started = time.perf_counter()
                done = subprocess.run(
                    [str(NODE), str(TOOL), "check", str(folder)],
                    capture_output=True,
                    check=False,
                )
                check = time.perf_counter() - started
                rows.append((folder.name, static, total, check, done.returncode, failed))
    print(f"{'plug-in':24} {'static':>8} {'all final':>10} {'tool check':>11} {'ratio':>6}")
    for name, static, total, check, code, failed in rows:
        print(
            f"{name:24} {static:7.2f}s {total:9.2f}s {check:10.2f}s {total / check:5.1f}x"
            f"  (check exit {code}; checks failed: {', '.join(failed) or 'none'})"
        )


if __name__ == "__main__":
    main()

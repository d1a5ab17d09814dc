"""Inside a network namespace of its own (run by `test_network_down.py`): the upload checks of
a real Dagster instance, with the service's own downloader and resolver (no test dialer or
resolver: `default_sources`), on a PostgreSQL store reached through a Unix socket relay.

The namespace starts with its loopback device alone: no route out, no name server, which is
the service without a network. Later the stand-in comes up (`enter_public_stand_in`: a public
stand-in address on loopback, the example's hosts and the probe's host resolving to it in a
private /etc/hosts, the test CA trusted), which is the network back; taking the address off
again is a machine with no route. Every run goes through the real locked room."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import dagster as dg
import httpx
import pytest
import trustme
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from almanac.api.deps import SESSION_COOKIE
from almanac.definitions import build_definitions
from almanac.platform import accounts
from almanac.platform.accounts import Account
from almanac.platform.alerts.models import SentAlert
from almanac.platform.mail import OutboxMailer
from almanac.platform.mail.models import OutboxMessage
from almanac.platform.publishing.models import CheckStatus, UploadState
from almanac.platform.publishing.uploads import uploads
from almanac.platform.publishing.uploads.room_checks import listing_links
from almanac.platform.store.engine import make_engine
from almanac.sandbox.tool_imports import import_problems
from almanac.settings import Settings
from tests.accounts.helpers import person
from tests.api.conftest import live_api
from tests.api.test_host import UK, folder_files, zip_of
from tests.orchestration.harness import FrozenClock, example_routes
from tests.publishing.dagster_ticks import Ticker
from tests.publishing.helpers import Org, organization
from tests.sandbox.tls_server import TLSServer
from tests.service.namespace import PUBLIC, enter_public_stand_in, loopback_up

T0 = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)
BASE_URL = "https://almanac.test"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / UK
LISTING = json.loads((EXAMPLE / "listing.json").read_text(encoding="utf-8"))
LINKS = [url for _, url in listing_links(LISTING)]
PROBE_HOST = "probe.example.net"
PROBE = f"https://{PROBE_HOST}/"
HOSTS = sorted({"www.gov.uk", PROBE_HOST, *(url.split("/")[2] for url in LINKS)})
OPERATOR = "operator@example.org"
NETWORK_DOWN = "CHECK-NETWORK-UNAVAILABLE"


@pytest.fixture(scope="module")
def engine() -> Iterator[Engine]:
    made = make_engine(os.environ["NETDOWN_DATABASE_URL"])
    yield made
    made.dispose()


class StandIn:
    """The stand-in network: `up()` puts the public address on loopback and serves the
    example's source, a page for each listing link and the probe over TLS from it; `down()`
    takes the address away again (no route to it)."""

    def __init__(self, work: Path) -> None:
        self.ca = trustme.CA()
        self.work = work
        self.entered = False
        self.server: TLSServer | None = None

    def up(self) -> None:
        if not self.entered:
            self.work.mkdir(parents=True, exist_ok=True)
            enter_public_stand_in(HOSTS, self.ca.cert_pem.bytes(), self.work)
            self.entered = True
        else:
            subprocess.run(["ip", "addr", "add", f"{PUBLIC}/32", "dev", "lo"], check=True)
        server = TLSServer(self.ca, tuple(HOSTS), bind=(PUBLIC, 443))
        for path, body in example_routes(EXAMPLE).items():
            server.routes[path] = lambda h, b=body: h.reply(200, b)
        for url in LINKS:
            path = "/" + url.split("/", 3)[3]
            server.routes.setdefault(path, lambda h: h.reply(200, b"<html>a page</html>"))
        server.routes["/"] = lambda h: h.reply(200, b"ok")
        self.server = server.__enter__()

    def down(self) -> None:
        assert self.server is not None
        self.server.__exit__(None, None, None)
        self.server = None
        subprocess.run(["ip", "addr", "del", f"{PUBLIC}/32", "dev", "lo"], check=True)


def _definitions(tmp: Path, engine: Engine, clock: FrozenClock, probe: str | None):
    settings = Settings(tmp, 0, 0, str(engine.url), BASE_URL, network_probe=probe)

    def build() -> dg.Definitions:
        # No check_sources: the service's own downloader, resolver and probe from settings.
        return build_definitions(
            settings=settings,
            engine=engine,
            catalog=[],
            clock=clock,
            mailer=lambda: OutboxMailer(engine, console=io.StringIO()),
            plugin_checks=False,
        )

    return build


def _upload(engine: Engine, org: Org, files: dict[str, bytes], at: datetime) -> int:
    with Session(engine, expire_on_commit=False) as db:
        answer = uploads.upload(
            db, org.id, org.owner, uploads.examine(zip_of(files), import_problems), at
        )
        db.commit()
    assert answer.upload.state is UploadState.CHECKING
    return answer.upload.id


def _shown(engine: Engine, org: Org, upload_id: int) -> uploads.UploadView:
    with Session(engine) as db:
        return uploads.show_upload(db, org.id, org.owner, upload_id)


def _checks(engine: Engine, org: Org, upload_id: int) -> dict[str, uploads.CheckView]:
    return {c.name: c for c in _shown(engine, org, upload_id).checks}


def _could_not_run(engine: Engine, org: Org, upload_id: int) -> dict[str, uploads.CheckView]:
    checks = _checks(engine, org, upload_id)
    for name in ("fixtures", "cases", "examples"):
        assert checks[name].status is CheckStatus.PASSED, (name, checks[name].findings)
    for name in ("sources", "links"):
        check = checks[name]
        assert check.status is CheckStatus.COULD_NOT_RUN, (name, check.findings)
        # One finding, the service's network: no fix telling the publisher to repair a URL.
        assert [p.code for p in check.findings] == [NETWORK_DOWN], check.findings
        assert check.findings[0].severity == "warning"
        assert "runs again by itself" in check.findings[0].message
    assert _shown(engine, org, upload_id).state is UploadState.CHECKING
    return checks


def _passed(engine: Engine, org: Org, upload_id: int) -> None:
    checks = _checks(engine, org, upload_id)
    for name, check in checks.items():
        assert check.status is CheckStatus.PASSED, (name, check.findings)
    assert _shown(engine, org, upload_id).state is UploadState.CHECKED


def _mail(engine: Engine) -> list[tuple[str, str, str]]:
    with Session(engine) as db:
        rows = db.scalars(select(OutboxMessage).order_by(OutboxMessage.id)).all()
        return [(r.to_address, r.subject, r.body) for r in rows]


def _network_alerts(engine: Engine) -> list[SentAlert]:
    with Session(engine) as db:
        return list(db.scalars(select(SentAlert).where(SentAlert.cause == "network")))


@contextmanager
def _pages(
    live_server, engine: Engine, passwords, *people: Account
) -> Iterator[list[httpx.Client]]:
    """The real app over HTTP with the probe set, and a signed-in client for each person."""
    with live_api(live_server, engine, passwords, settings={"network_probe": PROBE}) as api:
        clients = []
        for account in people:
            with Session(engine) as db:
                cookie = accounts.start_session(db, account, api.clock())
                db.commit()
            client = api.client()
            client.cookies.set(SESSION_COOKIE, cookie)
            clients.append(client)
        yield clients


def test_checks_without_a_network_could_not_run_and_run_again_when_it_is_back(
    engine: Engine, passwords, live_server, tmp_path: Path
) -> None:
    loopback_up()  # the app's own address; still no route out and no name server
    network = StandIn(tmp_path / "ns")
    clock = FrozenClock(T0)
    with Session(engine, expire_on_commit=False) as db:
        org = organization(db, passwords, T0, "netdown")
        operator = person(db, passwords, OPERATOR, T0)
        accounts.grant_staff_role(db, OPERATOR, "operator", T0)
        db.commit()

    # 1. No probe set, no network: the failures alone say the machine is cut off (no name
    # server answered), so sources and links could not run; nothing blames the publisher.
    first = _upload(engine, org, folder_files(UK), T0)
    no_probe = _definitions(tmp_path / "a", engine, clock, None)
    with Ticker.open(tmp_path / "a", clock, no_probe) as dagster:
        [run] = dagster.step(T0 + timedelta(minutes=1))
        assert run.status == dg.DagsterRunStatus.SUCCESS
        checks = _could_not_run(engine, org, first)
        said = checks["sources"].findings[0].message
        assert "could not resolve www.gov.uk" in said and "service could not reach" in said
        assert _mail(engine) == [], "no 'Checks failed' mail to the publisher"

        # The next tick tells the operators, once a day, and runs nothing yet.
        assert dagster.step(T0 + timedelta(minutes=2)) == []
        [alert] = _network_alerts(engine)
        assert alert.plugin_id is None and alert.recipients == [OPERATOR]
        assert "every 10 minutes" in alert.detail
        [(to, subject, body)] = _mail(engine)
        assert to == OPERATOR and subject == "Almanac: the service could not reach the network"
        assert "2 upload checks could not run since 2026-11-02 12:01 UTC" in body
        assert f"{BASE_URL}/host" in body

        # The network is back; without a probe the checks wait their 10 minutes.
        network.up()
        assert dagster.step(T0 + timedelta(minutes=5)) == []
        [run] = dagster.step(T0 + timedelta(minutes=11))
        assert run.status == dg.DagsterRunStatus.SUCCESS
        _passed(engine, org, first)
    assert len(_mail(engine)) == 1

    # 2. The probe set, and the machine with no route (the stand-in's address taken away):
    # the probe fails too, so the checks could not run, and they wait for the probe alone.
    network.down()
    second_files = folder_files(UK)
    second_files["README.md"] = b"# a listing-only change\n"
    second = _upload(engine, org, second_files, T0 + timedelta(minutes=20))
    with Ticker.open(
        tmp_path / "b", clock, _definitions(tmp_path / "b", engine, clock, PROBE)
    ) as dagster:
        [run] = dagster.step(T0 + timedelta(minutes=21))
        assert run.status == dg.DagsterRunStatus.SUCCESS
        checks = _could_not_run(engine, org, second)
        said = checks["sources"].findings[0].message
        assert "could not connect" in said and f"the probe {PROBE} did not answer" in said
        assert dagster.step(T0 + timedelta(minutes=35)) == [], "the probe decides, not time"
        assert len(_network_alerts(engine)) == 1, "one alert a day"

        # What operators and publishers see meanwhile, through the real app.
        with _pages(live_server, engine, passwords, operator, org.owner) as clients:
            host, owner = clients
            page = host.get("/host")
            assert page.status_code == 200
            assert "The service could not reach the network: 2 upload checks" in page.text
            assert f"as soon as the probe <code>{PROBE}</code>" in page.text
            portal = owner.get(f"/portal/{org.id}/uploads/{second}")
            assert portal.status_code == 200
            text = re.sub(r"\s+", " ", portal.text)
            assert "The service could not reach the network, so sources and links" in text
            assert "could not run" in text and NETWORK_DOWN in text
            assert "Nothing to do: the service runs the check again by itself" in text
            for blame in ("PLG-SOURCE-DOWNLOAD", "PLG-LISTING-LINK-DEAD", "Make sure each"):
                assert blame not in text
            answer = owner.get(f"/api/v1/portal/organizations/{org.id}/uploads/{second}")
            statuses = {c["name"]: c["status"] for c in answer.json()["checks"]}
            assert statuses["sources"] == statuses["links"] == "could_not_run"
            assert answer.json()["checks_final"] is False

        # The network is back: the probe answers at the next tick and the checks run again.
        network.up()
        [run] = dagster.step(T0 + timedelta(minutes=36))
        assert run.status == dg.DagsterRunStatus.SUCCESS
        _passed(engine, org, second)
        with _pages(live_server, engine, passwords, operator) as [host]:
            # The notice is gone; the alert sent stays in the list below.
            assert "The service could not reach the network:" not in host.get("/host").text

        # 3. The network works, and the publisher's URLs are to blame: one listing link whose
        # host does not resolve while the others answer; a source whose host does not resolve
        # while the probe answers.
        dead_files = folder_files(UK)
        listing = json.loads(dead_files["listing.json"])
        listing["links"]["privacy"] = "https://gone.example.net/privacy"
        dead_files["listing.json"] = json.dumps(listing).encode()
        dead = _upload(engine, org, dead_files, T0 + timedelta(minutes=40))
        moved_files = folder_files(UK)
        manifest = json.loads(moved_files["plugin.json"])
        manifest["version"] = "1.0.1"
        manifest["sources"][0]["url"] = "https://www.gone.example.net/bank-holidays.json"
        moved_files["plugin.json"] = json.dumps(manifest).encode()
        moved = _upload(engine, org, moved_files, T0 + timedelta(minutes=40))
        runs = dagster.step(T0 + timedelta(minutes=41))
        assert len(runs) == 2 and all(r.status == dg.DagsterRunStatus.SUCCESS for r in runs)
    links = _checks(engine, org, dead)["links"]
    assert links.status is CheckStatus.FAILED
    assert [p.code for p in links.findings] == ["PLG-LISTING-LINK-DEAD"]
    assert "could not resolve gone.example.net" in links.findings[0].message
    assert _checks(engine, org, dead)["sources"].status is CheckStatus.PASSED
    real = _checks(engine, org, moved)["sources"]
    assert real.status is CheckStatus.FAILED
    assert [p.code for p in real.findings] == ["PLG-SOURCE-DOWNLOAD"]
    assert "could not resolve www.gone.example.net" in real.findings[0].message
    # The publisher hears of those failures as before; the operators heard once.
    failed_mail = [s for _, s, _ in _mail(engine) if s.startswith("Checks failed")]
    assert sorted(failed_mail) == sorted(
        f"Checks failed: {UK} {v}" for v in ("1.0.0", "1.0.1") for _ in range(2)
    )
    assert len(_network_alerts(engine)) == 1

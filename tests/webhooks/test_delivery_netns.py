"""Webhook deliveries end to end in a network namespace of our own (as
tests/sandbox/test_download_netns.py): the stand-in public address on the namespace's
loopback device, a real TLS receiver there that verifies every signature with the
`standardwebhooks` library, the production dialer, a table resolver (which also plays the DNS
rebinding between registration and delivery), the real SQLite store and a real SMTP server
(aiosmtpd) on loopback. The test runs this module as a child in the namespace; the child
prints what it saw as JSON."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import trustme
from aiosmtpd.controller import Controller
from sqlalchemy import make_url, select
from sqlalchemy.orm import Session
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from almanac.platform import accounts, audience
from almanac.platform.accounts import Passwords
from almanac.platform.accounts.passwords import Argon2Parameters
from almanac.platform.errors import Invalid
from almanac.platform.store.engine import make_engine, upgrade_database
from almanac.platform.webhooks import deliveries, endpoints
from almanac.platform.webhooks.tables import deliveries as delivery_rows
from almanac.sandbox.smtp import MailSettings, SmtpMailer
from almanac.sandbox.webhooks import TEST_EVENT, EndpointAddressCheck, WebhookSender
from almanac.sensors.webhooks import deliver_due
from tests.accounts.conftest import empty_account_tables, migrated_postgres_url  # noqa: F401
from tests.api.test_mail import Inbox, free_port
from tests.api.test_reader import MANIFEST
from tests.audience.helpers import StoredPlugin, empty_audience_tables, fresh_id
from tests.conftest import REPO
from tests.sandbox.tls_server import Handler, TableResolver, TLSServer, client_context
from tests.webhooks.conftest import empty_webhook_tables

PUBLIC = "93.184.216.34"
HOST = "hooks.example.org"
REBOUND = "rebind.example.org"
TIMEOUT = 1.5
DAY = date(2026, 11, 2)
DATABASE = "ALMANAC_WEBHOOKS_NETNS_DATABASE"
SOCKETS = "/var/run/postgresql"


class Receiver:
    """Routes of the TLS receiver: each verifies the message with the endpoint's secrets
    (`standardwebhooks`) and keeps what came, then answers as the route says."""

    def __init__(self, server: TLSServer) -> None:
        self.server = server
        self.secrets: dict[str, list[str]] = {}
        self.seen: dict[str, list[dict[str, Any]]] = {}
        self.probes: dict[str, list[dict[str, Any]]] = {}

    def route(self, path: str, answer: Callable[[Handler, int], None]) -> str:
        self.seen[path] = []
        self.probes[path] = []

        def handle(handler: Handler) -> None:
            verified = {}
            for secret in self.secrets.get(path, []):
                try:
                    Webhook(secret).verify(handler.body, dict(handler.headers.items()))
                    verified[secret[-6:]] = True
                except WebhookVerificationError:
                    verified[secret[-6:]] = False
            body = json.loads(handler.body)
            kept = self.probes if body["type"] == TEST_EVENT else self.seen
            kept[path].append(
                {
                    "message": [handler.body.decode(), dict(handler.headers.items())],
                    "id": handler.headers["webhook-id"],
                    "verified": verified,
                    "signatures": len(handler.headers["webhook-signature"].split(" ")),
                    # The library verifies against the real clock; the test's clock runs
                    # ahead in places, and a message dated over 5 minutes ahead is too new.
                    "skew": int(handler.headers["webhook-timestamp"]) - time.time(),
                    "body": body,
                }
            )
            answer(handler, [m["id"] for m in kept[path]].count(handler.headers["webhook-id"]))

        self.server.routes[path] = handle
        return f"https://{HOST}{path}"


def _ok(handler: Handler, _n: int) -> None:
    handler.reply(200, b"thanks" * 20000)  # longer than the 64 KiB read: read in part


def _fail_once(handler: Handler, n: int) -> None:
    """500 the first time a message comes, 200 the next."""
    handler.reply(500 if n == 1 else 200, b"later")


def _hang(handler: Handler, _n: int) -> None:
    time.sleep(TIMEOUT * 3)
    handler.reply(200)


def _redirect(handler: Handler, _n: int) -> None:
    handler.reply(302, b"", {"Location": f"https://{HOST}/ok"})


def _redirect_later(handler: Handler, n: int) -> None:
    """A receiver that began redirecting after it was registered: 200 to the test message."""
    if json.loads(handler.body)["type"] == TEST_EVENT:
        handler.reply(200)
    else:
        _redirect(handler, n)


def _always_500(handler: Handler, _n: int) -> None:
    handler.reply(500, b"broken")


class World:
    def __init__(self, work: Path, receiver: Receiver, smtp_port: int) -> None:
        url = os.environ.get(DATABASE) or f"sqlite:///{work / 'almanac.db'}"
        if url.startswith("sqlite"):
            upgrade_database(url)
        self.engine = make_engine(url)
        self.receiver = receiver
        # Registration resolves twice (the check, the test message), then the delivery.
        self.resolver = TableResolver(
            {HOST: [PUBLIC], REBOUND: [[PUBLIC], [PUBLIC], ["127.0.0.1"]]}
        )
        self.sender = WebhookSender(
            base_url="https://almanac.test",
            resolver=self.resolver,
            ssl_context=client_context(receiver.server.ca),
            timeout_seconds=TIMEOUT,
        )
        self.addresses = EndpointAddressCheck(self.resolver, sender=self.sender)
        self.mailer = SmtpMailer(MailSettings(smtp_host="127.0.0.1", smtp_port=smtp_port))
        self.offset = timedelta(0)
        self.passwords = Passwords(Argon2Parameters.fast())

    def now(self) -> datetime:
        return datetime.now(UTC) + self.offset

    def reader(self, email: str) -> Any:
        with Session(self.engine, expire_on_commit=False) as db:
            made = accounts.sign_up(
                db, email, "a long pass phrase here", self.passwords, self.now()
            )
            accounts.verify_email(db, made.verification_token, self.now())
            db.commit()
            return made.account

    def plugin(self, audience_: str = "public") -> StoredPlugin:
        manifest = {**MANIFEST, "id": fresh_id("n"), "audience": audience_}
        # The plug-in's moves and runs an hour back: its events are due at once, and within
        # their 24 hours.
        start = self.now() - timedelta(hours=1)
        return StoredPlugin(self.engine, manifest, start).register().approve()

    def endpoint(self, account: Any, plugin: StoredPlugin, url: str, now: datetime | None = None):
        with Session(self.engine) as db:
            made = endpoints.register(
                db,
                account,
                url=url,
                plugin_ids=[plugin.id],
                description="",
                addresses=self.addresses,
                now=now or self.now(),
            )
            db.commit()
        path = url.removeprefix(f"https://{HOST}")
        self.receiver.secrets[path] = [made.secret]
        # The test message came before the secret was known here: verified now.
        for probe in self.receiver.probes.get(path, []):
            body, headers = probe["message"]
            try:
                Webhook(made.secret).verify(body, headers)
                probe["verified"] = {made.secret[-6:]: True}
            except WebhookVerificationError:
                probe["verified"] = {made.secret[-6:]: False}
        return made

    def deliver(self) -> dict[str, Any]:
        started = time.monotonic()
        done = deliver_due(
            self.engine, self.sender, self.mailer, clock=self.now, base_url="https://almanac.test"
        )
        return {"attempted": done.attempted, "ok": done.ok, "skipped": done.skipped,
                "seconds": time.monotonic() - started}  # fmt: skip

    def log(self, account: Any, endpoint_id: int) -> list[dict[str, Any]]:
        with Session(self.engine) as db:
            return [
                {"state": d.state, "attempts": [[a.status, a.error] for a in d.attempts]}
                for d in deliveries.delivery_log(db, account, endpoint_id)
            ]


def usd(day: str, buy: float) -> dict[str, Any]:
    return {"kind": "value", "series": "usd", "date": day, "fields": {"buy": buy}}


def main() -> None:
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    subprocess.run(["ip", "addr", "add", f"{PUBLIC}/32", "dev", "lo"], check=True)
    ca = trustme.CA()
    inbox = Inbox()
    smtp_port = free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=smtp_port)
    controller.start()
    with (
        TLSServer(ca, (HOST, REBOUND), bind=(PUBLIC, 443)) as server,
        TLSServer(ca, (REBOUND,), bind=("127.0.0.1", 443)) as loopback,
        tempfile.TemporaryDirectory() as work,
    ):
        receiver = Receiver(server)
        world = World(Path(work), receiver, smtp_port)
        result = run_cases(world, receiver, loopback, inbox)
    controller.stop()
    json.dump(result, sys.stdout)
    print()


def run_cases(world: World, receiver: Receiver, loopback: TLSServer, inbox: Inbox) -> dict:
    result: dict[str, Any] = {}
    reader = world.reader("reader@example.org")
    plugin = world.plugin()
    ok = world.endpoint(reader, plugin, receiver.route("/ok", _ok))
    flaky = world.endpoint(reader, plugin, receiver.route("/flaky", _fail_once))
    hang = world.endpoint(reader, plugin, receiver.route("/hang", _hang))
    moved = world.endpoint(reader, plugin, receiver.route("/redirect", _redirect_later))
    try:
        world.endpoint(reader, plugin, receiver.route("/moved", _redirect))
        result["registered_redirecting"] = "registered"
    except Invalid as refused:
        result["registered_redirecting"] = str(refused)
    receiver.route("/ok-target", _ok)
    rebound = world.endpoint(reader, plugin, f"https://{REBOUND}/rebound")
    plugin.write([usd("2026-11-01", 58.1)], DAY)
    plugin.write([usd("2026-11-01", 58.4), usd("2026-11-02", 58.2)], DAY)
    result["first"] = world.deliver()
    world.offset = timedelta(seconds=6)
    result["second"] = world.deliver()
    world.offset = timedelta(hours=2)
    result["later"] = world.deliver()
    result["seen"] = {path: seen for path, seen in receiver.seen.items()}
    result["probes"] = {path: seen for path, seen in receiver.probes.items()}
    result["loopback"] = [r.path for r in loopback.requests]
    result["logs"] = {
        name: world.log(reader, made.endpoint.id)
        for name, made in (("hang", hang), ("redirect", moved), ("rebound", rebound), ("ok", ok))
    }
    result["flaky_log"] = world.log(reader, flaky.endpoint.id)
    with world.engine.connect() as conn:
        result["ids"] = [f"msg_{i}" for i in conn.execute(select(delivery_rows.c.id)).scalars()]
    world.offset = timedelta(0)
    result["private"] = private_case(world, receiver)
    result["rotation"] = rotation_case(world, receiver)
    result["disabled"] = disabled_case(world, receiver, inbox)
    return result


def private_case(world: World, receiver: Receiver) -> dict[str, Any]:
    """A reader taken off a private plug-in's list receives none of its events after."""
    reader = world.reader("listed@example.org")
    plugin = world.plugin("private")
    with Session(world.engine) as db:
        audience.set_reader_list(db, plugin.id, [reader.email], [], by="host", now=world.now())
        db.commit()
    made = world.endpoint(reader, plugin, receiver.route("/private", _ok))
    plugin.write([usd("2026-11-01", 1.0)], DAY)
    world.deliver()
    with Session(world.engine) as db:
        audience.set_reader_list(db, plugin.id, [], [], by="host", now=world.now())
        db.commit()
    plugin.write([usd("2026-11-01", 2.0)], DAY)
    skipped = world.deliver()
    return {
        "received": [m["body"]["data"]["run"] for m in receiver.seen["/private"]],
        "skipped": skipped["skipped"],
        "log": world.log(reader, made.endpoint.id),
    }


def rotation_case(world: World, receiver: Receiver) -> dict[str, Any]:
    """After a rotation both secrets sign for 24 hours; a rotation older than that, the new
    one alone."""
    reader = world.reader("rotating@example.org")
    plugin = world.plugin()
    made = world.endpoint(reader, plugin, receiver.route("/rotated", _ok))
    with Session(world.engine) as db:
        fresh = endpoints.rotate_secret(db, reader, made.endpoint.id, world.now())
        db.commit()
    receiver.secrets["/rotated"] = [made.secret, fresh.secret]
    plugin.write([usd("2026-11-01", 1.0)], DAY)
    world.deliver()
    with Session(world.engine) as db:
        old = endpoints.rotate_secret(
            db, reader, made.endpoint.id, world.now() - timedelta(hours=25)
        )
        db.commit()
    receiver.secrets["/rotated"] = [fresh.secret, old.secret]
    plugin.write([usd("2026-11-01", 2.0)], DAY)
    world.deliver()
    return {"seen": receiver.seen["/rotated"]}


def disabled_case(world: World, receiver: Receiver, inbox: Inbox) -> dict[str, Any]:
    """An endpoint failing for 5 days is disabled and its owner mailed."""
    reader = world.reader("failing@example.org")
    plugin = world.plugin()
    made = world.endpoint(reader, plugin, receiver.route("/broken", _always_500))
    plugin.write([usd("2026-11-01", 1.0)], DAY)
    world.deliver()
    world.offset = timedelta(days=5, minutes=1)
    plugin.write([usd("2026-11-01", 2.0)], DAY)
    world.deliver()
    plugin.write([usd("2026-11-01", 3.0)], DAY)
    after = world.deliver()
    with Session(world.engine) as db:
        view = endpoints.endpoint(db, reader, made.endpoint.id)
    mails = [(to, str(m["Subject"]), m.get_payload()) for to, m in inbox.messages]
    return {
        "disabled": view.disabled_at is not None,
        "attempts_after": after["attempted"],
        "mails": mails,
        "received": len(receiver.seen["/broken"]),
    }


def _in_namespace(url: str) -> str:
    """The PostgreSQL URL reached from inside the namespace, whose loopback is its own: the
    server's Unix socket."""
    made = make_url(url)
    return made.set(host="", query={"host": SOCKETS}).render_as_string(hide_password=False)


@pytest.mark.parametrize("store", ["sqlite", "postgresql"])
def test_deliveries_reach_a_real_receiver_by_the_rules(
    store: str, request: pytest.FixtureRequest
) -> None:
    unshare = shutil.which("unshare")
    assert unshare, "util-linux unshare is needed"
    env = dict(os.environ)
    if store == "postgresql":
        url = request.getfixturevalue("migrated_postgres_url")
        engine = make_engine(url)
        for empty in (empty_webhook_tables, empty_audience_tables, empty_account_tables):
            empty(engine)
        engine.dispose()
        env[DATABASE] = _in_namespace(url)
    done = subprocess.run(
        [unshare, "--user", "--map-root-user", "--net", sys.executable, "-m",
         "tests.webhooks.test_delivery_netns"],
        cwd=REPO, capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    result = json.loads(done.stdout.splitlines()[-1])
    seen = result["seen"]
    # Every message that arrived is verified by the library with the endpoint's secret.
    every = [m for path in seen for m in seen[path] if abs(m["skew"]) < 290]
    assert len(every) >= 12 and all(any(m["verified"].values()) for m in every), every
    assert all(all(m["verified"].values()) for m in seen["/ok"] + seen["/flaky"])
    # Two runs changed something: two events for each endpoint.
    assert len(seen["/ok"]) == 2
    first, second = sorted((m["body"] for m in seen["/ok"]), key=lambda b: b["data"]["run"])
    assert first["type"] == "records.changed"
    assert second["data"]["counts"]["revised"] == 1 and second["data"]["counts"]["new"] == 1
    assert second["data"]["changes"]["revised"][0]["old"]["record"]["fields"] == {"buy": 58.1}
    # 500 then 200: the same ids twice, no more, in that order.
    flaky = [m["id"] for m in seen["/flaky"]]
    assert len(set(flaky)) == 2 and all(flaky.count(i) == 2 for i in flaky), flaky
    assert [d["state"] for d in result["flaky_log"]] == ["delivered", "delivered"]
    assert [a[0] for a in result["flaky_log"][0]["attempts"]] == [500, 200]
    # The hanging receiver is cut at the time-out and retried later.
    hang = result["logs"]["hang"][0]["attempts"][0]
    assert hang[0] is None and f"did not finish within {TIMEOUT:g} seconds" in hang[1]
    assert result["first"]["seconds"] < TIMEOUT * 2 + 3, result["first"]
    # A redirect is not followed; the DNS answer that turned to loopback is refused.
    # Registration: a signed test message, verified by the receiver; a redirect refused.
    (probe,) = result["probes"]["/ok"]
    assert probe["body"]["type"] == "webhook.test" and list(probe["verified"].values()) == [True]
    assert "HTTP 302, a redirect" in result["registered_redirecting"]
    assert "give the address it redirects to" in result["registered_redirecting"]
    assert seen["/moved"] == []
    assert result["logs"]["redirect"][0]["attempts"][0][0] == 302
    assert "redirects are not followed" in result["logs"]["redirect"][0]["attempts"][0][1]
    assert seen["/ok-target"] == []
    rebound = result["logs"]["rebound"][0]["attempts"][0]
    assert rebound[0] is None and "127.0.0.1, a refused address: loopback" in rebound[1]
    assert result["loopback"] == []
    assert result["later"]["ok"] == 0, "nothing more once delivered; the failing wait"
    # Private: the reader taken off the list gets the first run's event only.
    private = result["private"]
    assert len(private["received"]) == 1 and private["skipped"] == 1
    assert private["log"][0]["state"] == "skipped"
    # Rotation: both secrets sign for 24 hours, then the new alone.
    rotated = result["rotation"]["seen"]
    assert [m["signatures"] for m in rotated] == [2, 1]
    assert all(rotated[0]["verified"].values())
    assert list(rotated[1]["verified"].values()) == [False, True]
    # Failing for 5 days: disabled, mailed, no more attempts.
    disabled = result["disabled"]
    assert disabled["disabled"] and disabled["attempts_after"] == 0
    # The first event, its retry (due before the 5 days passed) and the second event.
    assert disabled["received"] == 3
    # (The first endpoints that never answered 2xx were failing for the 5 days too.)
    mine = [m for m in disabled["mails"] if m[0] == ["failing@example.org"]]
    assert len(mine) == 1 and "disabled" in mine[0][1] and "/broken" in mine[0][2], mine


if __name__ == "__main__":
    main()

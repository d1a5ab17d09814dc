"""Benchmark: 1,000 webhook endpoints on one plug-in (issue 38). Prints the deliveries per
second to a real TLS receiver on the stand-in public address (a network namespace of its own,
the production dialer, SQLite store; one sensor tick's budget, fan-out included), and the
write of a run with 1,000 subscribers (only the outbox's events: the delivery sensor fans them
out) and during the deliveries beside the same write with none (baseline, same run):
subscribers and deliveries never delay a run.

Run: .venv/bin/python tests/benchmarks/bench_webhooks.py [--endpoints 1000]
(it enters its own user and network namespace). The last line is one JSON object of the
figures.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

INSIDE = "ALMANAC_BENCH_WEBHOOKS_INSIDE"
PUBLIC = "93.184.216.34"
HOST = "hooks.example.org"
RECORDS = 500
DAY = date(2026, 11, 2)


def _batch(plugin_day: int, price: float) -> list[dict[str, Any]]:
    return [
        {"kind": "value", "series": "usd", "date": (DAY - timedelta(days=i)).isoformat(),
         "fields": {"buy": price + i}}
        for i in range(RECORDS)
    ]  # fmt: skip


def inside(endpoint_count: int) -> dict[str, Any]:
    import trustme
    from sqlalchemy.orm import Session

    from almanac.platform import accounts
    from almanac.platform.accounts import Passwords
    from almanac.platform.accounts.passwords import Argon2Parameters
    from almanac.platform.mail import OutboxMailer
    from almanac.platform.store.engine import make_engine, upgrade_database
    from almanac.platform.webhooks import endpoints
    from almanac.sandbox.webhooks import EndpointAddressCheck, WebhookSender
    from almanac.sensors.webhooks import deliver_due
    from tests.api.test_reader import MANIFEST
    from tests.audience.helpers import StoredPlugin, fresh_id
    from tests.sandbox.tls_server import TableResolver, TLSServer, client_context

    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    subprocess.run(["ip", "addr", "add", f"{PUBLIC}/32", "dev", "lo"], check=True)
    ca = trustme.CA()
    work = Path(tempfile.mkdtemp(prefix="bench-webhooks-"))
    url = f"sqlite:///{work / 'almanac.db'}"
    upgrade_database(url)
    engine = make_engine(url)
    now = datetime.now(UTC)
    resolver = TableResolver({HOST: [PUBLIC]})
    start = now - timedelta(hours=1)
    plugins = {
        name: StoredPlugin(engine, {**MANIFEST, "id": fresh_id(name)}, start).register().approve()
        for name in ("watched", "quiet")
    }
    passwords = Passwords(Argon2Parameters.fast())
    with Session(engine, expire_on_commit=False) as db:
        for n in range(endpoint_count // endpoints.MAX_ENDPOINTS):
            made = accounts.sign_up(db, f"r{n}@example.org", "a long pass phrase", passwords, now)
            accounts.verify_email(db, made.verification_token, now)
            for k in range(endpoints.MAX_ENDPOINTS):
                endpoints.register(
                    db, made.account, url=f"https://{HOST}/e{n}-{k}",
                    plugin_ids=[plugins["watched"].id], description="",
                    addresses=EndpointAddressCheck(resolver), now=now,
                )  # fmt: skip
        db.commit()

    def timed_write(plugin: StoredPlugin, price: float) -> float:
        started = time.perf_counter()
        plugin.write(_batch(0, price), DAY)
        return time.perf_counter() - started

    figures: dict[str, Any] = {"endpoints": endpoint_count, "records": RECORDS}
    timed_write(plugins["quiet"], 1.0)
    timed_write(plugins["watched"], 1.0)  # first runs: nothing to compare yet
    # Alternating, the median of 3 each: the machine is shared, single writes are noisy.
    quiet, watched = [], []
    for price in (2.0, 3.0, 4.0):
        quiet.append(timed_write(plugins["quiet"], price))
        watched.append(timed_write(plugins["watched"], price))
    figures["write_no_subscribers_s"] = statistics.median(quiet)
    figures["write_1000_subscribers_s"] = statistics.median(watched)
    with TLSServer(ca, (HOST,), bind=(PUBLIC, 443)) as server:
        server.routes.update({f"/e{n}-{k}": (lambda h: h.reply(204))
                              for n in range(endpoint_count // 20) for k in range(20)})  # fmt: skip
        sender = WebhookSender(
            base_url="https://almanac.test", resolver=resolver, ssl_context=client_context(ca)
        )
        result: dict[str, Any] = {}

        def deliver() -> None:
            started = time.perf_counter()
            # The watched plug-in's runs left their events (500 changes: 5 parts each); the
            # sensor fans them out and sends for one tick's budget.
            done = deliver_due(
                engine, sender, OutboxMailer(engine), clock=lambda: datetime.now(UTC),
                base_url="https://almanac.test",
            )  # fmt: skip
            result.update(seconds=time.perf_counter() - started, done=done)

        worker = threading.Thread(target=deliver)
        worker.start()
        time.sleep(0.2)
        figures["write_during_deliveries_s"] = timed_write(plugins["quiet"], 5.0)
        worker.join()
    done = result["done"]
    figures["delivered"] = done.ok
    figures["delivery_seconds"] = round(result["seconds"], 3)
    figures["deliveries_per_second"] = round(done.ok / result["seconds"], 1)
    figures["received"] = len(server.requests)
    base = figures["write_no_subscribers_s"]
    figures["ratio_write_1000_subscribers"] = round(figures["write_1000_subscribers_s"] / base, 2)
    figures["ratio_write_during_deliveries"] = round(figures["write_during_deliveries_s"] / base, 2)
    shutil.rmtree(work, ignore_errors=True)
    return figures


def main() -> None:
    count = int(sys.argv[sys.argv.index("--endpoints") + 1]) if "--endpoints" in sys.argv else 1000
    if os.environ.get(INSIDE):
        print(json.dumps(inside(count)))
        return
    unshare = shutil.which("unshare")
    assert unshare, "util-linux unshare is needed"
    done = subprocess.run(
        [unshare, "--user", "--map-root-user", "--net", sys.executable, __file__, *sys.argv[1:]],
        env={**os.environ, INSIDE: "1"}, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    if done.returncode != 0:
        sys.exit(done.stderr[-4000:])
    figures = json.loads(done.stdout.splitlines()[-1])
    print(
        f"{figures['delivered']} deliveries to {figures['endpoints']} endpoints in "
        f"{figures['delivery_seconds']} s: {figures['deliveries_per_second']} deliveries/s"
    )
    print(f"write of a run ({RECORDS} records revised): no subscribers "
          f"{figures['write_no_subscribers_s']:.3f} s; 1,000 subscribers "
          f"{figures['write_1000_subscribers_s']:.3f} s "
          f"(x{figures['ratio_write_1000_subscribers']}); during the deliveries "
          f"{figures['write_during_deliveries_s']:.3f} s "
          f"(x{figures['ratio_write_during_deliveries']})")  # fmt: skip
    print(json.dumps(figures))


if __name__ == "__main__":
    main()

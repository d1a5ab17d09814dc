"""Benchmark of the store's write on PostgreSQL: 250,000 records, first run, unchanged rerun,
1% revised, each beside a plain COPY of the same rows into an unindexed table (same run).

Run: ALMANAC_TEST_DATABASE_URL=postgresql+psycopg://postgres@127.0.0.1:5432/postgres \
     .venv/bin/python tests/benchmarks/bench_store_write.py
Goal (issue 19): a first run at most 2x the COPY, an unchanged rerun at most 1.3x.
BENCH_ROUNDS sets the rounds (3); the best of each case counts. The last line is one JSON object
of the figures.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from datetime import UTC, date, datetime, timedelta
from types import SimpleNamespace

import psycopg

from almanac.platform.contract.manifest import Series
from almanac.platform.lifecycle import RunTrigger
from almanac.platform.store import moves
from almanac.platform.store.engine import make_engine, upgrade_database, write_transaction
from almanac.platform.store.types import canonical_content
from almanac.platform.store.versions import register_version
from almanac.platform.store.write import RunFacts, write_run

RECORDS = 250_000
SERIES = 50
TODAY = date(2026, 11, 2)
NOW = datetime(2026, 11, 2, 12, tzinfo=UTC)
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))


def batch(revise_every: int | None = None) -> list[dict]:
    days = RECORDS // SERIES
    out = []
    for s in range(SERIES):
        for d in range(days):
            n = s * days + d
            rate = round(1 + n / 1000, 4)
            if revise_every and n % revise_every == 0:
                rate += 0.5
            out.append(
                {
                    "kind": "value",
                    "series": f"s{s}",
                    "date": (TODAY - timedelta(days=d)).isoformat(),
                    "fields": {"rate": rate, "high": rate + 0.1},
                }
            )
    return out


def copy_baseline(plain_url: str, rows: list[dict], version_id: int) -> float:
    """Seconds for a plain COPY of the same rows into an unindexed table, committed."""
    tuples = [
        (
            "bench",
            r["series"],
            date.fromisoformat(r["date"]),
            "",
            "value",
            canonical_content({"fields": r["fields"], "revises": None}),
            1,
            version_id,
            "digest",
            NOW,
            0,
            False,
            None,
        )
        for r in rows
    ]
    with psycopg.connect(plain_url) as conn:
        conn.execute("DROP TABLE IF EXISTS copy_baseline")
        conn.execute(
            "CREATE TABLE copy_baseline (plugin_id varchar(48), series varchar(48), date date,"
            " discriminator varchar(64), kind varchar(8), content text, run_id bigint,"
            " version_id bigint, digest varchar(128), since timestamptz, misses integer,"
            " withdrawn boolean, moved_to date)"
        )
        conn.commit()
        start = time.perf_counter()
        with conn.cursor() as cursor, cursor.copy("COPY copy_baseline FROM STDIN") as copy:
            for row in tuples:
                copy.write_row(row)
        conn.commit()
        return time.perf_counter() - start


def _approved_plugin(engine, plugin_id: str) -> int:  # type: ignore[no-untyped-def]
    with write_transaction(engine) as conn:
        version_id = register_version(
            conn,
            manifest={"id": plugin_id, "version": "1.0.0", "licence": {"retain": "yes"}},
            digest="digest",
            files={"fetch.mjs": b"x"},
            origin="folder",
            by="bench",
            now=NOW,
        )
        moves.approve(conn, plugin_id, digest_shown="digest", by="bench", now=NOW)
    return version_id


def main() -> None:
    server = os.environ["ALMANAC_TEST_DATABASE_URL"]
    base, _, _ = server.rpartition("/")
    name = f"almanac_bench_{secrets.token_hex(3)}"
    admin = server.replace("+psycopg", "")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = f"{base}/{name}"
    try:
        upgrade_database(url)
        engine = make_engine(url)
        manifest = SimpleNamespace(
            series=tuple(
                Series(
                    key=f"s{s}",
                    kind="value",
                    cadence="daily",
                    dates="observation",
                    name={"en": "s"},
                    fields=("rate", "high"),
                )
                for s in range(SERIES)
            )
        )
        plain = batch()
        revised = batch(revise_every=100)
        cases = (
            ("first", "first run, 250,000 new", plain, 2.0),
            ("unchanged", "same batch again, all unchanged", plain, 1.3),
            ("revised", "same batch, 1% revised", revised, None),
        )
        copy_url = admin.rpartition("/")[0] + f"/{name}"
        best: dict[str, tuple[float, float, object]] = {}
        # The machine is shared: each case runs ROUNDS times (a fresh plug-in per round) and
        # the fastest write is set beside the fastest COPY of the same round.
        for round_no in range(ROUNDS):
            plugin_id = f"bench-{round_no}"
            version_id = _approved_plugin(engine, plugin_id)
            for _key, label, rows, _goal in cases:
                facts = RunFacts(today=TODAY, trigger=RunTrigger.SCHEDULE, started_at=NOW, now=NOW)
                start = time.perf_counter()
                result = write_run(
                    engine,
                    plugin_id=plugin_id,
                    version_id=version_id,
                    digest="digest",
                    manifest=manifest,  # type: ignore[arg-type]
                    run=facts,
                    batch=rows,
                )
                took = time.perf_counter() - start
                baseline = copy_baseline(copy_url, rows, version_id)
                print(f"  round {round_no + 1} {label}: write {took:.2f} s, COPY {baseline:.2f} s")
                took_best, base_best, _ = best.get(label, (float("inf"), float("inf"), None))
                best[label] = (min(took, took_best), min(baseline, base_best), result.counts)
        engine.dispose()
        print(
            f"{'case (best of ' + str(ROUNDS) + ')':34} {'write s':>8} {'COPY s':>8} {'ratio':>6}"
        )
        figures: dict[str, object] = {"records": RECORDS, "rounds": ROUNDS}
        for key, label, _rows, goal in cases:
            took, baseline, counts = best[label]
            ratio = took / baseline
            verdict = f"goal <= {goal:g}x {'met' if ratio <= goal else 'MISSED'}" if goal else ""
            print(f"{label:34} {took:8.2f} {baseline:8.2f} {ratio:6.2f}  {verdict}  {counts}")
            figures[f"{key}_write_s"] = round(took, 3)
            figures[f"{key}_copy_s"] = round(baseline, 3)
            figures[f"{key}_ratio"] = round(ratio, 3)
            if goal:
                figures[f"{key}_goal_ratio"] = goal
        print(json.dumps(figures))
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


if __name__ == "__main__":
    main()

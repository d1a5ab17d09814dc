"""A run keeps its sources (name, final URL, bytes, SHA-256, time) and the Node version (issue 5,
"Runs"), read back by `last_runs` and kept in the tables, on a success and on a failure; a write
that fails leaves none of its sources behind."""

from __future__ import annotations

import hashlib
from dataclasses import asdict, replace
from datetime import UTC, datetime, timedelta, timezone

import pytest
from sqlalchemy import select

from almanac.platform.store.reading import StoredRun, last_runs, run_sources, runs
from almanac.platform.store.write import SourceFacts, record_failed_run, write_run

from .conftest import Plug, value

FETCHED = datetime(2026, 11, 2, 11, 58, 7, 123456, tzinfo=UTC)
RATES = SourceFacts(
    name="rates",
    final_url="https://cdn.example.org/2026/11/rates.csv?sig=abc",  # after a redirect
    bytes=20 * 1024 * 1024,
    sha256=hashlib.sha256(b"rates").hexdigest(),
    fetched_at=FETCHED,
)
CALENDAR = SourceFacts(
    name="calendar",
    final_url="https://example.org/calendar.ics",
    bytes=0,
    sha256=hashlib.sha256(b"").hexdigest(),
    # given in another zone: kept as the same moment, read back in UTC
    fetched_at=(FETCHED + timedelta(seconds=2)).astimezone(timezone(timedelta(hours=-4))),
)


def _as_read(run_id: int, position: int, source: SourceFacts) -> dict[str, object]:
    return {
        "run_id": run_id,
        "position": position,
        "name": source.name,
        "final_url": source.final_url,
        "bytes": source.bytes,
        "sha256": source.sha256,
        "fetched_at": source.fetched_at.astimezone(UTC),
    }


def _sources(run: StoredRun) -> list[dict[str, object]]:
    """The run's sources as the table's rows read them."""
    return [asdict(source) for source in run.sources]


def _write(plug: Plug, facts, batch=()) -> int:  # type: ignore[no-untyped-def]
    return write_run(
        plug.engine,
        plugin_id=plug.id,
        version_id=plug.version_id,
        digest=plug.digest,
        manifest=plug.manifest,  # type: ignore[arg-type]
        run=facts,
        batch=list(batch),
    ).run_id


def _fail(plug: Plug, facts, reason: str) -> int:  # type: ignore[no-untyped-def]
    return record_failed_run(
        plug.engine,
        plugin_id=plug.id,
        version_id=plug.version_id,
        digest=plug.digest,
        run=facts,
        reason=reason,
    )


def test_a_successful_run_keeps_its_sources_in_order_and_its_node_version(plug: Plug) -> None:
    facts = replace(plug.facts(), node_version="v24.19.0", sources=(RATES, CALENDAR))
    run_id = _write(plug, facts, [value("2026-11-01", 1.5)])
    with plug.engine.connect() as conn:
        (run,) = last_runs(conn, plug.id)
        table = [
            dict(r)
            for r in conn.execute(
                select(run_sources)
                .where(run_sources.c.run_id == run_id)
                .order_by(run_sources.c.position)
            ).mappings()
        ]
        node = conn.execute(select(runs.c.node_version).where(runs.c.id == run_id)).scalar_one()
    assert run.id == run_id and run.outcome == "success" and run.new == 1
    assert run.node_version == "v24.19.0" and node == "v24.19.0"
    expected = [_as_read(run_id, 0, RATES), _as_read(run_id, 1, CALENDAR)]
    assert _sources(run) == expected
    assert table == expected
    assert all(s.fetched_at.tzinfo is not None for s in run.sources)
    assert run.sources[1].fetched_at == FETCHED + timedelta(seconds=2)


def test_a_failed_run_keeps_its_sources_too(plug: Plug) -> None:
    """The downloads succeeded and the fetcher failed: the run row keeps what it was given."""
    facts = replace(plug.facts(), node_version="v24.19.0", sources=(RATES,))
    run_id = _fail(plug, facts, "unexpected header in rates: fecha,tasa")
    with plug.engine.connect() as conn:
        (run,) = last_runs(conn, plug.id)
    assert (run.id, run.outcome) == (run_id, "failure")
    assert run.reason == "unexpected header in rates: fecha,tasa"
    assert run.node_version == "v24.19.0"
    assert _sources(run) == [_as_read(run_id, 0, RATES)]


def test_each_run_reads_back_its_own_sources(plug: Plug) -> None:
    first = _write(plug, replace(plug.facts(), node_version="v24.19.0", sources=(RATES,)))
    failed = _fail(plug, plug.facts(), "could not download rates: 404")  # before the room
    later = replace(RATES, sha256=hashlib.sha256(b"rates, later").hexdigest(), bytes=7)
    third = _write(plug, replace(plug.facts(), node_version="v24.20.0", sources=(later, CALENDAR)))
    with plug.engine.connect() as conn:
        newest, middle, oldest = last_runs(conn, plug.id)
    assert [r.id for r in (newest, middle, oldest)] == [third, failed, first]
    assert _sources(newest) == [_as_read(third, 0, later), _as_read(third, 1, CALENDAR)]
    assert newest.node_version == "v24.20.0"
    assert middle.sources == [] and middle.node_version is None
    assert _sources(oldest) == [_as_read(first, 0, RATES)]
    assert oldest.node_version == "v24.19.0"


@pytest.mark.parametrize("step", ["run", "updated", "state"])
def test_a_write_that_fails_leaves_none_of_its_sources(plug: Plug, step: str) -> None:
    def crash(at: str) -> None:
        if at == step:
            raise RuntimeError(f"crash after {at}")

    facts = replace(plug.facts(), node_version="v24.19.0", sources=(RATES, CALENDAR))
    with pytest.raises(RuntimeError, match="crash"):
        write_run(
            plug.engine,
            plugin_id=plug.id,
            version_id=plug.version_id,
            digest=plug.digest,
            manifest=plug.manifest,  # type: ignore[arg-type]
            run=facts,
            batch=[value("2026-11-01", 1.5)],
            fault=crash,
        )
    with plug.engine.connect() as conn:
        assert last_runs(conn, plug.id) == []
        mine = select(runs.c.id).where(runs.c.plugin_id == plug.id)
        left = conn.execute(select(run_sources).where(run_sources.c.run_id.in_(mine))).all()
    assert left == []

"""The publishers' and operators' figures count what the store holds, on PostgreSQL and
SQLite: runs per day and hour by outcome, records written and revised per run, durations."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from sqlalchemy import Engine, func, select

from almanac.platform.errors import Invalid
from almanac.platform.figures import operator_figures, publisher_figures
from almanac.platform.store.tables import runs
from tests.api.test_reader import MANIFEST, value
from tests.audience.helpers import T0, StoredPlugin, fresh_id


def test_figures_count_the_runs_and_records_stored(engine: Engine) -> None:
    plugin = StoredPlugin(engine, {**MANIFEST, "id": fresh_id()}, T0).register().approve()
    plugin.write([value("2026-05-30", 58.0), value("2026-05-31", 58.1)], date(2026, 6, 1))
    plugin.fail(date(2026, 6, 1))
    plugin.moment += timedelta(days=1)
    plugin.write([value("2026-05-31", 58.2), value("2026-06-02", 58.3)], date(2026, 6, 2))
    now = plugin.moment + timedelta(minutes=5)
    with engine.connect() as conn:
        drawn = publisher_figures(conn, plugin.id, 30, now)
        stored = conn.execute(
            select(func.count()).where(runs.c.plugin_id == plugin.id)
        ).scalar_one()
        host = operator_figures(conn, 7, now)
        spans = conn.execute(
            select(runs.c.started_at, runs.c.ended_at).where(runs.c.started_at >= host.since)
        ).all()
        with pytest.raises(Invalid, match=r"^days:"):
            publisher_figures(conn, plugin.id, 7, now)
    assert drawn.runs == stored == 3
    by_key = {f.key: f for f in drawn.figures}
    per_day = {line.label: line.values for line in by_key["runs"].lines}
    assert set(per_day) == {"failure", "success"}
    assert per_day["failure"][-2:] == [1.0, 0.0]
    assert by_key["runs"].x[-2:] == ["2026-06-01", "2026-06-02"]
    assert per_day["success"][-2:] == [1.0, 1.0]
    assert sum(v or 0 for v in per_day["success"]) == 2
    records = {line.label: line.values for line in by_key["records"].lines}
    # Failed runs write nothing: they count 0 written, 0 revised.
    assert records["written"] == [2.0, 0.0, 1.0] and records["revised"] == [0.0, 0.0, 1.0]
    assert drawn.readers_now == 0 and by_key["installs"].lines[0].values == [0.0] * 30
    hourly = {line.label: line.values for line in host.figures[0].lines}
    assert sum(v or 0 for values in hourly.values() for v in values) == len(spans) >= 3
    assert len(host.figures[0].x) == 7 * 24
    durations = sorted((end - start).total_seconds() for start, end in spans)
    assert host.duration_p50 == durations[(len(durations) + 1) // 2 - 1]
    assert host.duration_p99 == durations[-(-99 * len(durations) // 100) - 1]

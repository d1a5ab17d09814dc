"""The publishers' and operators' figures count what the store holds, on PostgreSQL and
SQLite: runs per day and hour by outcome, records written and revised per run, durations."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
from alembic import command
from sqlalchemy import Engine, func, select, text
from sqlalchemy.orm import Session

from almanac.platform import accounts
from almanac.platform.accounts import Argon2Parameters, Passwords
from almanac.platform.accounts.models import Account
from almanac.platform.audience import set_shown
from almanac.platform.audience.tables import shown_changes
from almanac.platform.errors import Invalid
from almanac.platform.figures import operator_figures, publisher_figures
from almanac.platform.store.engine import alembic_config, make_engine, upgrade_database
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
            select(runs.c.started_at, runs.c.ended_at).where(
                runs.c.started_at >= host.since, runs.c.started_at < host.until
            )
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
    assert drawn.readers_now == 0 and by_key["readers"].lines[0].values == [0.0] * 30
    hourly = {line.label: line.values for line in host.figures[0].lines}
    assert sum(v or 0 for values in hourly.values() for v in values) == len(spans) >= 3
    assert len(host.figures[0].x) == 7 * 24
    durations = sorted((end - start).total_seconds() for start, end in spans)
    assert host.duration_p50 == durations[(len(durations) + 1) // 2 - 1]
    assert host.duration_p99 == durations[-(-99 * len(durations) // 100) - 1]


def test_a_figure_with_nothing_to_draw_says_so_in_words(engine: Engine) -> None:
    with engine.connect() as conn:
        quiet = operator_figures(conn, 1, datetime(2031, 1, 1, tzinfo=UTC))
    waits = {f.key: f for f in quiet.figures}["waits"]
    assert not waits.drawn and quiet.longest_wait_seconds is None
    assert waits.empty == "No run was taken from the queue in these hours: no wait to draw."


def _reader(engine: Engine) -> Account:
    with Session(engine, expire_on_commit=False) as db:
        made = accounts.sign_up(
            db, f"{fresh_id('reader')}@example.org", "correct horse battery",
            Passwords(Argon2Parameters.fast()), T0,
        )  # fmt: skip
        db.commit()
        return made.account


def _choose(engine: Engine, who: Account, plugin_id: str, shown: bool | None, at: str) -> None:
    with Session(engine) as db:
        set_shown(db, who, {f"plugins.{plugin_id}.shown": shown}, datetime.fromisoformat(at))
        db.commit()


def test_readers_installs_and_uninstalls_per_day_count_the_history_of_shown_choices(
    engine: Engine,
) -> None:
    """Hand-counted: D shows it long before the span; in it A and B turn it on on 3 June (B
    twice: one change), B off on 5 June, C chooses off (no reader either side), A clears and
    C turns it on on 7 June, B clears an off choice on 8 June."""
    plugin = StoredPlugin(engine, {**MANIFEST, "id": fresh_id()}, T0).register().approve()
    a, b, c, d = (_reader(engine) for _ in range(4))
    for who, shown, at in [
        (d, True, "2026-05-01T08:00:00+00:00"),
        (a, True, "2026-06-03T10:00:00+00:00"),
        (b, True, "2026-06-03T11:00:00+00:00"),
        (b, True, "2026-06-03T12:00:00+00:00"),
        (b, False, "2026-06-05T09:00:00+00:00"),
        (c, False, "2026-06-05T10:00:00+00:00"),
        (a, None, "2026-06-07T09:00:00+00:00"),
        (c, True, "2026-06-07T23:59:00+00:00"),
        (b, None, "2026-06-08T09:00:00+00:00"),
    ]:
        _choose(engine, who, plugin.id, shown, at)
    with engine.connect() as conn:
        drawn = publisher_figures(conn, plugin.id, 30, datetime(2026, 6, 10, 12, tzinfo=UTC))
        written = conn.execute(
            select(func.count()).where(shown_changes.c.plugin_id == plugin.id)
        ).scalar_one()
    assert written == 8  # B's second `true` changed nothing and wrote nothing
    by_key = {f.key: f for f in drawn.figures}
    assert by_key["readers"].x[-10:][0] == "2026-06-01"
    readers = by_key["readers"].lines[0].values
    assert readers[:22] == [1.0] * 22  # 12 May to 2 June: D alone
    assert readers[-8:] == [3.0, 3.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0]
    lines = {line.label: line.values for line in by_key["installs"].lines}
    assert lines["installs"][-8:] == [1.0 * n for n in (2, 0, 0, 0, 1, 0, 0, 0)]
    assert lines["uninstalls"][-8:] == [1.0 * n for n in (0, 0, 1, 0, 1, 0, 0, 0)]
    assert (drawn.readers_now, drawn.installs, drawn.uninstalls) == (2, 3, 2)
    assert drawn.history_since is None  # registered after the history began: every day known


def test_days_before_the_history_of_shown_choices_are_not_known(empty_url: str) -> None:
    """Migration 0019 on a store whose reader already shows a plug-in: the history begins
    with that choice, the days before it are null (never invented), readers from then on."""
    config = alembic_config(empty_url)
    engine = make_engine(empty_url)
    try:
        with engine.begin() as conn:
            config.attributes["connection"] = conn
            command.upgrade(config, "0017_version_audience")
        with engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO plugins (id, state, ever_approved, retain_registered, retain,"
                    " held, taken_down, shelved, retired, registered_at) VALUES ('old-rates',"
                    " 'approved', true, 'keep', 'keep', false, false, false, false, :at)"
                ),
                {"at": T0},
            )
            conn.execute(
                text(
                    "INSERT INTO accounts (id, email, email_key, password_hash, created_at)"
                    " VALUES (1, 'a@example.org', 'a@example.org', 'x', :at)"
                ),
                {"at": T0},
            )
            conn.execute(
                text(
                    "INSERT INTO reader_shown_preferences (account_id, plugin_id, shown, set_at)"
                    " VALUES (1, 'old-rates', true, :at)"
                ),
                {"at": T0},
            )
        upgrade_database(empty_url)
        began = datetime.now(UTC).date()
        with engine.connect() as conn:
            now = datetime.combine(began + timedelta(days=2), datetime.min.time(), tzinfo=UTC)
            drawn = publisher_figures(conn, "old-rates", 30, now)
    finally:
        engine.dispose()
    assert drawn.history_since == began + timedelta(days=1)
    by_key = {f.key: f for f in drawn.figures}
    assert by_key["readers"].lines[0].values[-3:] == [None, 1.0, 1.0]
    assert by_key["installs"].lines[0].values[-3:] == [None, 0.0, 0.0]
    assert (drawn.readers_now, drawn.installs) == (1, 0)

"""The alerts' migration builds their tables from empty on both databases, matching the
models (the store's own test checks every part's tables together)."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect, text
from sqlalchemy.exc import IntegrityError

import almanac.platform.alerts.models  # noqa: F401  (declares the alerts' tables)
from almanac.platform.store.base import Base
from almanac.platform.store.engine import alembic_config, make_engine, upgrade_database
from tests.publishing.test_migrations import _names

ALERT_TABLES = {"alerts_sent", "alert_recipients"}
T0 = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)


def test_alert_tables_from_empty_match_the_models(empty_url: str) -> None:
    upgrade_database(empty_url)
    engine = make_engine(empty_url)
    try:
        assert set(inspect(engine).get_table_names()) >= ALERT_TABLES
        uniques = inspect(engine).get_unique_constraints("alerts_sent")
        assert [u["column_names"] for u in uniques] == [["plugin_id", "cause", "day"]]
        with engine.connect() as conn:
            context = MigrationContext.configure(conn, opts={"compare_type": True})
            diff = compare_metadata(context, Base.metadata)
    finally:
        engine.dispose()
    assert [d for d in diff if _names(d) & ALERT_TABLES] == []
    upgrade_database(empty_url)  # running again changes nothing


def _upgrade(url: str, target: str) -> None:
    engine = make_engine(url)
    try:
        with engine.begin() as connection:
            config = alembic_config(url)
            config.attributes["connection"] = connection
            command.upgrade(config, target)
    finally:
        engine.dispose()


def test_the_service_network_alert_is_kept_once_a_day_beside_older_alerts(empty_url: str) -> None:
    # A store of the previous schema with an alert of a plug-in in it, then 0014: the alert
    # stays, the service's own alert (no plug-in) may be kept once a day and cause, and an
    # upload check may be could_not_run.
    _upgrade(empty_url, "0013_agents")
    engine = make_engine(empty_url)
    insert = text(
        "INSERT INTO alerts_sent (plugin_id, cause, day, subject, detail, recipients, "
        "undelivered, sent_at) VALUES (:plugin, :cause, :day, 's', 'd', '[]', '[]', :at)"
    )
    try:
        with engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO plugins (id, state, ever_approved, retain_registered, retain, "
                    "held, taken_down, shelved, registered_at) "
                    "VALUES ('p', 'pending', :no, 'yes', 'yes', :no, :no, :no, :at)"
                ),
                {"at": T0, "no": False},
            )
            conn.execute(insert, {"plugin": "p", "cause": "failing", "day": T0.date(), "at": T0})
        upgrade_database(empty_url)
        with engine.begin() as conn:
            assert conn.execute(text("SELECT plugin_id, cause FROM alerts_sent")).all() == [
                ("p", "failing")
            ]
            conn.execute(insert, {"plugin": None, "cause": "network", "day": T0.date(), "at": T0})
            conn.execute(
                insert, {"plugin": None, "cause": "network", "day": date(2026, 11, 3), "at": T0}
            )
        with pytest.raises(IntegrityError), engine.begin() as conn:
            conn.execute(insert, {"plugin": None, "cause": "network", "day": T0.date(), "at": T0})
        with pytest.raises(IntegrityError), engine.begin() as conn:
            conn.execute(insert, {"plugin": None, "cause": "other", "day": T0.date(), "at": T0})
        [status] = [
            c
            for c in inspect(engine).get_check_constraints("portal_upload_checks")
            if c["name"] == "ck_portal_upload_checks_status"
        ]
        assert "could_not_run" in status["sqltext"]
    finally:
        engine.dispose()

"""The alerts' migration builds their tables from empty on both databases, matching the
models (the store's own test checks every part's tables together)."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect

import almanac.platform.alerts.models  # noqa: F401  (declares the alerts' tables)
from almanac.platform.store.base import Base
from almanac.platform.store.engine import make_engine, upgrade_database
from tests.publishing.test_migrations import _names

ALERT_TABLES = {"alerts_sent", "alert_recipients"}


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

"""The migrations make the feed addresses' table from empty on both databases, exactly as the
model declares it (the whole schema is compared in tests/store/test_migrations.py)."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect

import almanac.platform.feeds.models  # noqa: F401  (declares reader_feeds)
from almanac.platform.store.base import Base
from almanac.platform.store.engine import make_engine, upgrade_database
from tests.publishing.test_migrations import _names


def test_the_feed_table_from_empty_matches_the_model(empty_url: str) -> None:
    upgrade_database(empty_url)
    engine = make_engine(empty_url)
    try:
        found = inspect(engine)
        assert "reader_feeds" in found.get_table_names()
        assert {c["name"] for c in found.get_columns("reader_feeds")} == {
            "id",
            "account_id",
            "secret_hash",
            "created_at",
            "revoked_at",
        }
        with engine.connect() as conn:
            context = MigrationContext.configure(conn, opts={"compare_type": True})
            diff = compare_metadata(context, Base.metadata)
    finally:
        engine.dispose()
    assert [d for d in diff if "reader_feeds" in _names(d)] == []

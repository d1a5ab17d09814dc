"""The migrations build the schema from empty on both databases, and match the models."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Table, inspect

import almanac.platform.store.models  # noqa: F401  (declares the store's tables)
from almanac.platform.store.base import Base
from almanac.platform.store.engine import alembic_config, make_engine, upgrade_database

STORE_TABLES = {
    "plugins",
    "plugin_versions",
    "code_blobs",
    "version_files",
    "plugin_moves",
    "run_requests",
    "runs",
    "run_sources",
    "records",
    "revisions",
    "held_series",
}


def _store_diff(url: str) -> list:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            context = MigrationContext.configure(conn, opts={"compare_type": True})
            diff = compare_metadata(context, Base.metadata)
    finally:
        engine.dispose()

    def table_of(entry) -> str:
        entry = entry[0] if isinstance(entry, list) else entry
        for part in entry[1:]:
            if isinstance(part, Table):
                return part.name
            if isinstance(part, str):
                return part
            table = getattr(part, "table", None)
            if table is not None:
                return table.name
        return "?"

    # Tables of other parts (accounts, ...) are checked by their own tests.
    return [d for d in diff if table_of(d) in STORE_TABLES | {"?"}]


def test_migrations_from_empty_match_the_models(empty_url: str) -> None:
    upgrade_database(empty_url)
    engine = make_engine(empty_url)
    try:
        tables = set(inspect(engine).get_table_names())
    finally:
        engine.dispose()
    assert tables >= STORE_TABLES | {"alembic_version"}
    assert _store_diff(empty_url) == []
    upgrade_database(empty_url)  # running again changes nothing


def test_first_revision_id_is_fixed() -> None:
    script = ScriptDirectory.from_config(alembic_config("sqlite://"))
    assert script.get_revision("0001_store").down_revision is None
    assert [r.revision for r in script.walk_revisions()][-1] == "0001_store"


def test_no_table_of_any_part_drifts_from_the_migrations(empty_url: str) -> None:
    """Every model the service imports (store, accounts, audience, mail, publishing) against
    the database the migrations make: no table, column, type or index differs."""
    import almanac.api.app  # noqa: F401  (imports every part's models)

    upgrade_database(empty_url)
    engine = make_engine(empty_url)
    try:
        with engine.connect() as conn:
            context = MigrationContext.configure(conn, opts={"compare_type": True})
            diff = compare_metadata(context, Base.metadata)
    finally:
        engine.dispose()
    assert diff == []

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


def test_versions_stored_before_the_audience_column_get_their_manifests_audience(
    empty_url: str,
) -> None:
    """0017: the audience every visibility statement reads is taken from each stored manifest."""
    from alembic import command
    from sqlalchemy import text

    command.upgrade(alembic_config(empty_url), "0016_attempt_limits")
    engine = make_engine(empty_url)
    try:
        with engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO plugins (id, state, ever_approved, retain_registered, retain,"
                    " held, taken_down, shelved, registered_at) VALUES ('p', 'approved', true,"
                    " 'yes', 'yes', false, false, false, '2026-12-01 00:00:00+00')"
                )
            )
            for n, audience in enumerate(("public", "private")):
                manifest = f'{{"id": "p", "name": {{"en": "P"}}, "audience": "{audience}"}}'
                conn.execute(
                    text(
                        "INSERT INTO plugin_versions (plugin_id, version, digest, manifest,"
                        " origin, origin_by, arrived_at) VALUES ('p', :v, :d, :m, 'folder',"
                        " 'host', '2026-12-01 00:00:00+00')"
                    ),
                    {"v": f"1.0.{n}", "d": f"d{n}", "m": manifest},
                )
        upgrade_database(empty_url)
        with engine.connect() as conn:
            found = conn.execute(
                text("SELECT version, audience FROM plugin_versions ORDER BY version")
            ).all()
    finally:
        engine.dispose()
    assert [tuple(r) for r in found] == [("1.0.0", "public"), ("1.0.1", "private")]

"""The migrations build the publishing tables from empty on both databases, matching the
models (the store's own test checks the store's tables)."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect

import almanac.platform.accounts.models
import almanac.platform.agents.models
import almanac.platform.mail.models
import almanac.platform.publishing.models  # noqa: F401
from almanac.platform.store.base import Base
from almanac.platform.store.engine import make_engine, upgrade_database

PUBLISHING_TABLES = {
    "domain_claims",
    "domain_checks",
    "invitation_decisions",
    "agreement_versions",
    "agreement_acceptances",
    "plugin_id_bindings",
    "portal_uploads",
    "portal_upload_checks",
    "version_check_inputs",
    "portal_review_information",
    "portal_attestations",
    # Agent access (platform/agents/models.py, migration 0010_agents).
    "agent_device_codes",
    "agent_tokens",
    # Rollouts of updates with a shadow period (migration 0018_rollouts).
    "plugin_rollouts",
    "plugin_shadow_runs",
}


def _names(entry: object) -> set[str]:
    """Every table name an autogenerate difference mentions."""
    found: set[str] = set()
    parts = entry if isinstance(entry, (list, tuple)) else [entry]
    for part in parts:
        if isinstance(part, (list, tuple)):
            found |= _names(part)
        name = getattr(part, "name", None)
        table = getattr(part, "table", None)
        if isinstance(name, str):
            found.add(name)
        if table is not None and isinstance(getattr(table, "name", None), str):
            found.add(table.name)
        if isinstance(part, str):
            found.add(part)
    return found


def test_publishing_tables_from_empty_match_the_models(empty_url: str) -> None:
    upgrade_database(empty_url)
    engine = make_engine(empty_url)
    try:
        assert set(inspect(engine).get_table_names()) >= PUBLISHING_TABLES
        with engine.connect() as conn:
            context = MigrationContext.configure(conn, opts={"compare_type": True})
            diff = compare_metadata(context, Base.metadata)
    finally:
        engine.dispose()
    assert [d for d in diff if _names(d) & PUBLISHING_TABLES] == []
    upgrade_database(empty_url)  # running again changes nothing

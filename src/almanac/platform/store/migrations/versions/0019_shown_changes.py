"""The history of readers' shown choices (issue 37): each change of a `plugins.<id>.shown`
choice, never whose, so that readers who show a plug-in can be counted per day

The history begins now: a baseline row marks the moment for each plug-in registered, and one
row per choice then standing says what stood, so that the counts from here on start right.

Revision ID: 0019_shown_changes
Revises: 0018_rollouts
Create Date: 2026-12-12 08:00:00.000000
"""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision = "0019_shown_changes"
down_revision = "0018_rollouts"
branch_labels = None
depends_on = None

BIG_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    changes = op.create_table(
        "reader_shown_changes",
        sa.Column("id", BIG_ID, autoincrement=True, nullable=False),
        sa.Column("plugin_id", sa.String(length=48), nullable=False),
        sa.Column("changed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("shown_before", sa.Boolean(), nullable=True),
        sa.Column("shown_after", sa.Boolean(), nullable=True),
        sa.Column("baseline", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(
            ["plugin_id"], ["plugins.id"], name=op.f("fk_reader_shown_changes_plugin_id_plugins")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_reader_shown_changes")),
    )
    op.create_index(
        "ix_reader_shown_changes_plugin",
        "reader_shown_changes",
        ["plugin_id", "changed_at"],
        unique=False,
    )
    conn = op.get_bind()
    began = datetime.now(UTC)
    if conn.dialect.name == "sqlite":  # SQLite keeps no zone: moments are stored as UTC
        began = began.replace(tzinfo=None)
    plugins = sa.table("plugins", sa.column("id", sa.String()))
    choices = sa.table(
        "reader_shown_preferences",
        sa.column("plugin_id", sa.String()),
        sa.column("shown", sa.Boolean()),
    )
    rows = [
        {"plugin_id": plugin_id, "changed_at": began, "shown_before": None, "shown_after": None,
         "baseline": True}
        for (plugin_id,) in conn.execute(sa.select(plugins.c.id))
    ] + [
        {"plugin_id": plugin_id, "changed_at": began, "shown_before": None, "shown_after": shown,
         "baseline": True}
        for plugin_id, shown in conn.execute(sa.select(choices.c.plugin_id, choices.c.shown))
    ]  # fmt: skip
    if rows:
        conn.execute(sa.insert(changes), rows)


def downgrade() -> None:
    op.drop_index("ix_reader_shown_changes_plugin", table_name="reader_shown_changes")
    op.drop_table("reader_shown_changes")

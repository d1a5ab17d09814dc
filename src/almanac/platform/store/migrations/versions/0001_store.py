"""The store: plug-ins, versions and code, state moves, run requests, runs, records, revisions

Revision ID: 0001_store
Revises:
Create Date: 2026-11-21 14:46:26.129738
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001_store"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "code_blobs",
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("content", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("sha256", name=op.f("pk_code_blobs")),
    )
    op.create_table(
        "plugins",
        sa.Column("id", sa.String(length=48), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column(
            "current_version_id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            nullable=True,
        ),
        sa.Column(
            "approved_version_id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            nullable=True,
        ),
        sa.Column("ever_approved", sa.Boolean(), nullable=False),
        sa.Column("retain_registered", sa.String(length=8), nullable=False),
        sa.Column("retain", sa.String(length=8), nullable=False),
        sa.Column("retain_recorded_by", sa.String(length=320), nullable=True),
        sa.Column("retain_recorded_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("held", sa.Boolean(), nullable=False),
        sa.Column("taken_down", sa.Boolean(), nullable=False),
        sa.Column("shelved", sa.Boolean(), nullable=False),
        sa.Column("registered_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_plugins")),
    )
    op.create_table(
        "plugin_versions",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("plugin_id", sa.String(length=48), nullable=False),
        sa.Column("version", sa.String(length=64), nullable=False),
        sa.Column("digest", sa.String(length=128), nullable=False),
        sa.Column("manifest", sa.JSON(), nullable=False),
        sa.Column("origin", sa.String(length=16), nullable=False),
        sa.Column("origin_by", sa.String(length=320), nullable=False),
        sa.Column("arrived_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["plugin_id"], ["plugins.id"], name=op.f("fk_plugin_versions_plugin_id_plugins")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_plugin_versions")),
        sa.UniqueConstraint("plugin_id", "digest", name=op.f("uq_plugin_versions_plugin_id")),
    )
    # plugins and plugin_versions refer to each other: the plug-in's two version links come last.
    with op.batch_alter_table("plugins", schema=None) as batch_op:
        batch_op.create_foreign_key(
            op.f("fk_plugins_current_version_id_plugin_versions"),
            "plugin_versions",
            ["current_version_id"],
            ["id"],
        )
        batch_op.create_foreign_key(
            op.f("fk_plugins_approved_version_id_plugin_versions"),
            "plugin_versions",
            ["approved_version_id"],
            ["id"],
        )
    op.create_table(
        "plugin_moves",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("plugin_id", sa.String(length=48), nullable=False),
        sa.Column("action", sa.String(length=32), nullable=False),
        sa.Column("from_state", sa.String(length=16), nullable=True),
        sa.Column("to_state", sa.String(length=16), nullable=True),
        sa.Column(
            "version_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True
        ),
        sa.Column("by", sa.String(length=320), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("detail", sa.JSON(), nullable=True),
        sa.ForeignKeyConstraint(
            ["plugin_id"], ["plugins.id"], name=op.f("fk_plugin_moves_plugin_id_plugins")
        ),
        sa.ForeignKeyConstraint(
            ["version_id"],
            ["plugin_versions.id"],
            name=op.f("fk_plugin_moves_version_id_plugin_versions"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_plugin_moves")),
    )
    with op.batch_alter_table("plugin_moves", schema=None) as batch_op:
        batch_op.create_index("ix_plugin_moves_plugin_id_at", ["plugin_id", "at"], unique=False)

    op.create_table(
        "run_requests",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("plugin_id", sa.String(length=48), nullable=False),
        sa.Column(
            "version_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("trigger", sa.String(length=16), nullable=False),
        sa.Column("requested_by", sa.String(length=320), nullable=False),
        sa.Column("requested_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("not_before", sa.DateTime(timezone=True), nullable=False),
        sa.Column("taken_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["plugin_id"], ["plugins.id"], name=op.f("fk_run_requests_plugin_id_plugins")
        ),
        sa.ForeignKeyConstraint(
            ["version_id"],
            ["plugin_versions.id"],
            name=op.f("fk_run_requests_version_id_plugin_versions"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_run_requests")),
    )
    with op.batch_alter_table("run_requests", schema=None) as batch_op:
        batch_op.create_index("ix_run_requests_open", ["taken_at", "id"], unique=False)

    op.create_table(
        "version_files",
        sa.Column(
            "version_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("path", sa.String(length=1024), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.ForeignKeyConstraint(
            ["sha256"], ["code_blobs.sha256"], name=op.f("fk_version_files_sha256_code_blobs")
        ),
        sa.ForeignKeyConstraint(
            ["version_id"],
            ["plugin_versions.id"],
            name=op.f("fk_version_files_version_id_plugin_versions"),
        ),
        sa.PrimaryKeyConstraint("version_id", "path", name=op.f("pk_version_files")),
    )
    op.create_table(
        "runs",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("plugin_id", sa.String(length=48), nullable=False),
        sa.Column(
            "version_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("digest", sa.String(length=128), nullable=False),
        sa.Column("node_version", sa.String(length=32), nullable=True),
        sa.Column("trigger", sa.String(length=16), nullable=False),
        sa.Column(
            "request_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True
        ),
        sa.Column("today", sa.Date(), nullable=False),
        sa.Column("backfill", sa.Boolean(), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("outcome", sa.String(length=8), nullable=False),
        sa.Column("reason", sa.String(length=300), nullable=True),
        sa.Column("new", sa.Integer(), nullable=False),
        sa.Column("revised", sa.Integer(), nullable=False),
        sa.Column("unchanged", sa.Integer(), nullable=False),
        sa.Column("moved", sa.Integer(), nullable=False),
        sa.Column("missed", sa.Integer(), nullable=False),
        sa.Column("withdrawn", sa.Integer(), nullable=False),
        sa.Column("returned", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["plugin_id"], ["plugins.id"], name=op.f("fk_runs_plugin_id_plugins")
        ),
        sa.ForeignKeyConstraint(
            ["request_id"], ["run_requests.id"], name=op.f("fk_runs_request_id_run_requests")
        ),
        sa.ForeignKeyConstraint(
            ["version_id"], ["plugin_versions.id"], name=op.f("fk_runs_version_id_plugin_versions")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_runs")),
    )
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.create_index("ix_runs_plugin_id_id", ["plugin_id", "id"], unique=False)

    op.create_table(
        "held_series",
        sa.Column("plugin_id", sa.String(length=48), nullable=False),
        sa.Column("series", sa.String(length=48), nullable=False),
        sa.Column("run_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("record_ids", sa.JSON(), nullable=False),
        sa.Column("first_dates", sa.JSON(), nullable=False),
        sa.Column("window_count", sa.Integer(), nullable=False),
        sa.Column("held_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["plugin_id"], ["plugins.id"], name=op.f("fk_held_series_plugin_id_plugins")
        ),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name=op.f("fk_held_series_run_id_runs")),
        sa.PrimaryKeyConstraint("plugin_id", "series", name=op.f("pk_held_series")),
    )
    op.create_table(
        "records",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("plugin_id", sa.String(length=48), nullable=False),
        sa.Column("series", sa.String(length=48), nullable=False),
        sa.Column("date", sa.Date(), nullable=False),
        sa.Column("discriminator", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=8), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("run_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column(
            "version_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("digest", sa.String(length=128), nullable=False),
        sa.Column("since", sa.DateTime(timezone=True), nullable=False),
        sa.Column("misses", sa.Integer(), nullable=False),
        sa.Column("withdrawn", sa.Boolean(), nullable=False),
        sa.Column("moved_to", sa.Date(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_records")),
        sa.UniqueConstraint(
            "plugin_id", "date", "series", "discriminator", name=op.f("uq_records_plugin_id")
        ),
    )
    op.create_table(
        "run_sources",
        sa.Column("run_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=48), nullable=False),
        sa.Column("final_url", sa.Text(), nullable=False),
        sa.Column("bytes", sa.BigInteger(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("fetched_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name=op.f("fk_run_sources_run_id_runs")),
        sa.PrimaryKeyConstraint("run_id", "position", name=op.f("pk_run_sources")),
    )
    op.create_table(
        "revisions",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column(
            "record_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("run_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column(
            "version_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("digest", sa.String(length=128), nullable=False),
        sa.Column("withdrawn", sa.Boolean(), nullable=False),
        sa.Column("moved_to", sa.Date(), nullable=True),
        sa.Column("valid_from", sa.DateTime(timezone=True), nullable=False),
        sa.Column("valid_to", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["record_id"],
            ["records.id"],
            name=op.f("fk_revisions_record_id_records"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name=op.f("fk_revisions_run_id_runs")),
        sa.ForeignKeyConstraint(
            ["version_id"],
            ["plugin_versions.id"],
            name=op.f("fk_revisions_version_id_plugin_versions"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_revisions")),
    )
    with op.batch_alter_table("revisions", schema=None) as batch_op:
        batch_op.create_index(
            "ix_revisions_record_id_valid_from", ["record_id", "valid_from"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("revisions", schema=None) as batch_op:
        batch_op.drop_index("ix_revisions_record_id_valid_from")

    op.drop_table("revisions")
    op.drop_table("run_sources")
    op.drop_table("records")
    op.drop_table("held_series")
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_index("ix_runs_plugin_id_id")

    op.drop_table("runs")
    op.drop_table("version_files")
    with op.batch_alter_table("run_requests", schema=None) as batch_op:
        batch_op.drop_index("ix_run_requests_open")

    op.drop_table("run_requests")
    with op.batch_alter_table("plugin_moves", schema=None) as batch_op:
        batch_op.drop_index("ix_plugin_moves_plugin_id_at")

    op.drop_table("plugin_moves")
    with op.batch_alter_table("plugins", schema=None) as batch_op:
        batch_op.drop_constraint(
            op.f("fk_plugins_current_version_id_plugin_versions"), type_="foreignkey"
        )
        batch_op.drop_constraint(
            op.f("fk_plugins_approved_version_id_plugin_versions"), type_="foreignkey"
        )
    op.drop_table("plugin_versions")
    op.drop_table("plugins")
    op.drop_table("code_blobs")

"""Rollouts of published updates with a shadow period, and their shadow runs

Revision ID: 0018_rollouts
Revises: 0017_version_audience
Create Date: 2026-12-11 08:00:00.000000
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0018_rollouts"
down_revision = "0017_version_audience"
branch_labels = None
depends_on = None

STATES = ("shadowing", "promoted", "held", "stopped", "rolled_back")
_BIG = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _moment(name: str, nullable: bool = False) -> sa.Column[Any]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "plugin_rollouts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("organization_id", sa.Integer(), nullable=False),
        sa.Column("plugin_id", sa.String(length=48), nullable=False),
        sa.Column("upload_id", sa.Integer(), nullable=False),
        sa.Column("version", sa.String(length=32), nullable=False),
        sa.Column("digest", sa.String(length=80), nullable=False),
        sa.Column("from_version_id", _BIG, nullable=False),
        sa.Column("superseded_upload_id", sa.Integer(), nullable=True),
        sa.Column("shadow_runs", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("started_by", sa.String(length=320), nullable=False),
        _moment("started_at"),
        sa.Column("ended_by", sa.String(length=320), nullable=True),
        _moment("ended_at", True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.CheckConstraint(
            f"state IN ({', '.join(repr(s) for s in STATES)})",
            name=op.f("ck_plugin_rollouts_state"),
        ),
        sa.CheckConstraint(
            "shadow_runs BETWEEN 1 AND 5", name=op.f("ck_plugin_rollouts_shadow_runs")
        ),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_plugin_rollouts_organization_id_organizations"),
        ),
        sa.ForeignKeyConstraint(
            ["upload_id"],
            ["portal_uploads.id"],
            name=op.f("fk_plugin_rollouts_upload_id_portal_uploads"),
        ),
        sa.ForeignKeyConstraint(
            ["superseded_upload_id"],
            ["portal_uploads.id"],
            name=op.f("fk_plugin_rollouts_superseded_upload_id_portal_uploads"),
        ),
        sa.ForeignKeyConstraint(
            ["from_version_id"],
            ["plugin_versions.id"],
            name=op.f("fk_plugin_rollouts_from_version_id_plugin_versions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_plugin_rollouts")),
    )
    op.create_index("ix_plugin_rollouts_plugin_id", "plugin_rollouts", ["plugin_id"])
    op.create_table(
        "plugin_shadow_runs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("rollout_id", sa.Integer(), nullable=False),
        sa.Column("run_id", _BIG, nullable=False),
        sa.Column("today", sa.Date(), nullable=False),
        sa.Column("passed", sa.Boolean(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("diff", sa.JSON(), nullable=True),
        sa.Column("seconds", sa.Float(), nullable=False),
        _moment("at"),
        sa.ForeignKeyConstraint(
            ["rollout_id"],
            ["plugin_rollouts.id"],
            name=op.f("fk_plugin_shadow_runs_rollout_id_plugin_rollouts"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["runs.id"],
            name=op.f("fk_plugin_shadow_runs_run_id_runs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_plugin_shadow_runs")),
    )
    op.create_index("ix_plugin_shadow_runs_rollout_id", "plugin_shadow_runs", ["rollout_id"])


def downgrade() -> None:
    op.drop_index("ix_plugin_shadow_runs_rollout_id", table_name="plugin_shadow_runs")
    op.drop_table("plugin_shadow_runs")
    op.drop_index("ix_plugin_rollouts_plugin_id", table_name="plugin_rollouts")
    op.drop_table("plugin_rollouts")

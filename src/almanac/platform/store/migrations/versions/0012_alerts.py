"""Alerts: every alert sent (plug-in, cause, day, recipients) and the operators' chosen
recipients (issue 20)

Revision ID: 0012_alerts
Revises: 0011_feeds
Create Date: 2026-12-01 08:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012_alerts"
down_revision = "0011_feeds"
branch_labels = None
depends_on = None

CAUSES = ("failing", "still-failing", "held")


def upgrade() -> None:
    op.create_table(
        "alerts_sent",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("plugin_id", sa.String(length=48), nullable=False),
        sa.Column("cause", sa.String(length=16), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("subject", sa.String(length=300), nullable=False),
        sa.Column("detail", sa.Text(), nullable=False),
        sa.Column("recipients", sa.JSON(), nullable=False),
        sa.Column("undelivered", sa.JSON(), nullable=False),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            f"cause IN ({', '.join(repr(c) for c in CAUSES)})",
            name=op.f("ck_alerts_sent_cause"),
        ),
        sa.ForeignKeyConstraint(
            ["plugin_id"], ["plugins.id"], name=op.f("fk_alerts_sent_plugin_id_plugins")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_alerts_sent")),
        sa.UniqueConstraint("plugin_id", "cause", "day", name=op.f("uq_alerts_sent_plugin_id")),
    )
    op.create_table(
        "alert_recipients",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("addresses", sa.JSON(), nullable=False),
        sa.Column("chosen_by", sa.String(length=320), nullable=False),
        sa.Column("chosen_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_alert_recipients")),
    )


def downgrade() -> None:
    op.drop_table("alert_recipients")
    op.drop_table("alerts_sent")

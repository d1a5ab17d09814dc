"""Webhooks: endpoints and their plug-ins, the events outbox, deliveries and their attempts

Revision ID: 0020_webhooks
Revises: 0019_shown_changes
Create Date: 2026-11-27 12:02:46.765798
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from almanac.platform.store.types import UTCDateTime

BIG_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


revision = "0020_webhooks"
down_revision = "0019_shown_changes"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "webhook_endpoints",
        sa.Column("id", BIG_ID, autoincrement=True, nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("organization_id", sa.Integer(), nullable=True),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("description", sa.String(length=200), nullable=False),
        sa.Column("secret", sa.String(length=80), nullable=False),
        sa.Column("previous_secret", sa.String(length=80), nullable=True),
        sa.Column("previous_until", UTCDateTime(), nullable=True),
        sa.Column("paused", sa.Boolean(), nullable=False),
        sa.Column("disabled_at", UTCDateTime(), nullable=True),
        sa.Column("failing_since", UTCDateTime(), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name=op.f("fk_webhook_endpoints_account_id_accounts"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_webhook_endpoints_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_endpoints")),
    )
    with op.batch_alter_table("webhook_endpoints", schema=None) as batch_op:
        batch_op.create_index("ix_webhook_endpoints_account_id", ["account_id"], unique=False)
        batch_op.create_index(
            "ix_webhook_endpoints_organization_id", ["organization_id"], unique=False
        )

    op.create_table(
        "webhook_events",
        sa.Column("id", BIG_ID, autoincrement=True, nullable=False),
        sa.Column("plugin_id", sa.String(length=48), nullable=False),
        sa.Column("type", sa.String(length=32), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("fanned_out_at", UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["plugin_id"], ["plugins.id"], name=op.f("fk_webhook_events_plugin_id_plugins")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_events")),
    )
    with op.batch_alter_table("webhook_events", schema=None) as batch_op:
        batch_op.create_index(
            "ix_webhook_events_fanned_out_at", ["fanned_out_at", "id"], unique=False
        )
    op.create_table(
        "webhook_deliveries",
        sa.Column("id", BIG_ID, autoincrement=True, nullable=False),
        sa.Column("event_id", BIG_ID, nullable=False),
        sa.Column("endpoint_id", BIG_ID, nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_at", UTCDateTime(), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["endpoint_id"],
            ["webhook_endpoints.id"],
            name=op.f("fk_webhook_deliveries_endpoint_id_webhook_endpoints"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["event_id"],
            ["webhook_events.id"],
            name=op.f("fk_webhook_deliveries_event_id_webhook_events"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_deliveries")),
    )
    with op.batch_alter_table("webhook_deliveries", schema=None) as batch_op:
        batch_op.create_index("ix_webhook_deliveries_due", ["state", "next_at"], unique=False)
        batch_op.create_index(
            "ix_webhook_deliveries_endpoint_id_id", ["endpoint_id", "id"], unique=False
        )

    op.create_table(
        "webhook_subscriptions",
        sa.Column("endpoint_id", BIG_ID, nullable=False),
        sa.Column("plugin_id", sa.String(length=48), nullable=False),
        sa.ForeignKeyConstraint(
            ["endpoint_id"],
            ["webhook_endpoints.id"],
            name=op.f("fk_webhook_subscriptions_endpoint_id_webhook_endpoints"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["plugin_id"], ["plugins.id"], name=op.f("fk_webhook_subscriptions_plugin_id_plugins")
        ),
        sa.PrimaryKeyConstraint("endpoint_id", "plugin_id", name=op.f("pk_webhook_subscriptions")),
    )
    with op.batch_alter_table("webhook_subscriptions", schema=None) as batch_op:
        batch_op.create_index("ix_webhook_subscriptions_plugin_id", ["plugin_id"], unique=False)

    op.create_table(
        "webhook_attempts",
        sa.Column("id", BIG_ID, autoincrement=True, nullable=False),
        sa.Column("delivery_id", BIG_ID, nullable=False),
        sa.Column("at", UTCDateTime(), nullable=False),
        sa.Column("status", sa.Integer(), nullable=True),
        sa.Column("error", sa.String(length=300), nullable=True),
        sa.ForeignKeyConstraint(
            ["delivery_id"],
            ["webhook_deliveries.id"],
            name=op.f("fk_webhook_attempts_delivery_id_webhook_deliveries"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_attempts")),
    )
    with op.batch_alter_table("webhook_attempts", schema=None) as batch_op:
        batch_op.create_index("ix_webhook_attempts_delivery_id", ["delivery_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("webhook_attempts", schema=None) as batch_op:
        batch_op.drop_index("ix_webhook_attempts_delivery_id")

    op.drop_table("webhook_attempts")
    with op.batch_alter_table("webhook_subscriptions", schema=None) as batch_op:
        batch_op.drop_index("ix_webhook_subscriptions_plugin_id")

    op.drop_table("webhook_subscriptions")
    with op.batch_alter_table("webhook_deliveries", schema=None) as batch_op:
        batch_op.drop_index("ix_webhook_deliveries_endpoint_id_id")
        batch_op.drop_index("ix_webhook_deliveries_due")

    op.drop_table("webhook_deliveries")
    with op.batch_alter_table("webhook_events", schema=None) as batch_op:
        batch_op.drop_index("ix_webhook_events_fanned_out_at")

    op.drop_table("webhook_events")
    with op.batch_alter_table("webhook_endpoints", schema=None) as batch_op:
        batch_op.drop_index("ix_webhook_endpoints_organization_id")
        batch_op.drop_index("ix_webhook_endpoints_account_id")

    op.drop_table("webhook_endpoints")

"""Readers and takedown: reader lists of private plug-ins, shown preferences and organization
defaults, reports, takedown details

Revision ID: 0003_readers
Revises: 0002_accounts
Create Date: 2026-11-23 12:12:40.268290
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003_readers"
down_revision = "0002_accounts"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "plugin_reader_people",
        sa.Column("plugin_id", sa.String(length=48), nullable=False),
        sa.Column("email_key", sa.String(length=320), nullable=False),
        sa.Column("email", sa.String(length=320), nullable=False),
        sa.ForeignKeyConstraint(
            ["plugin_id"], ["plugins.id"], name=op.f("fk_plugin_reader_people_plugin_id_plugins")
        ),
        sa.PrimaryKeyConstraint("plugin_id", "email_key", name=op.f("pk_plugin_reader_people")),
    )
    op.create_table(
        "reader_shown_preferences",
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("plugin_id", sa.String(length=48), nullable=False),
        sa.Column("shown", sa.Boolean(), nullable=False),
        sa.Column("set_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name=op.f("fk_reader_shown_preferences_account_id_accounts"),
        ),
        sa.ForeignKeyConstraint(
            ["plugin_id"],
            ["plugins.id"],
            name=op.f("fk_reader_shown_preferences_plugin_id_plugins"),
        ),
        sa.PrimaryKeyConstraint(
            "account_id", "plugin_id", name=op.f("pk_reader_shown_preferences")
        ),
    )
    op.create_table(
        "reports",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("plugin_id", sa.String(length=48), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("category", sa.String(length=32), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("day", sa.Date(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "category IN ('wrong-data', 'offensive', 'impersonating', 'data-it-may-not-use', "
            "'stopped-working', 'other')",
            name=op.f("ck_reports_category"),
        ),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_reports_account_id_accounts")
        ),
        sa.ForeignKeyConstraint(
            ["plugin_id"], ["plugins.id"], name=op.f("fk_reports_plugin_id_plugins")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_reports")),
    )
    op.create_index(
        "ix_reports_plugin_id_created_at", "reports", ["plugin_id", "created_at"], unique=False
    )
    op.create_table(
        "organization_shown_defaults",
        sa.Column("organization_id", sa.Integer(), nullable=False),
        sa.Column("plugin_id", sa.String(length=48), nullable=False),
        sa.Column("shown", sa.Boolean(), nullable=False),
        sa.Column("set_by", sa.Integer(), nullable=False),
        sa.Column("set_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_organization_shown_defaults_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["plugin_id"],
            ["plugins.id"],
            name=op.f("fk_organization_shown_defaults_plugin_id_plugins"),
        ),
        sa.ForeignKeyConstraint(
            ["set_by"], ["accounts.id"], name=op.f("fk_organization_shown_defaults_set_by_accounts")
        ),
        sa.PrimaryKeyConstraint(
            "organization_id", "plugin_id", name=op.f("pk_organization_shown_defaults")
        ),
    )
    op.create_table(
        "plugin_reader_organizations",
        sa.Column("plugin_id", sa.String(length=48), nullable=False),
        sa.Column("organization_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_plugin_reader_organizations_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["plugin_id"],
            ["plugins.id"],
            name=op.f("fk_plugin_reader_organizations_plugin_id_plugins"),
        ),
        sa.PrimaryKeyConstraint(
            "plugin_id", "organization_id", name=op.f("pk_plugin_reader_organizations")
        ),
    )
    with op.batch_alter_table("plugins") as batch:
        batch.add_column(sa.Column("publisher_organization_id", sa.Integer(), nullable=True))
        batch.create_foreign_key(
            op.f("fk_plugins_publisher_organization_id_organizations"),
            "organizations",
            ["publisher_organization_id"],
            ["id"],
        )
    op.add_column("plugins", sa.Column("takedown_reason", sa.Text(), nullable=True))
    op.add_column("plugins", sa.Column("takedown_note", sa.Text(), nullable=True))
    op.add_column("plugins", sa.Column("takedown_message", sa.String(length=280), nullable=True))
    op.add_column("plugins", sa.Column("takedown_digest", sa.String(length=128), nullable=True))


def downgrade() -> None:
    op.drop_column("plugins", "takedown_digest")
    op.drop_column("plugins", "takedown_message")
    op.drop_column("plugins", "takedown_note")
    op.drop_column("plugins", "takedown_reason")
    with op.batch_alter_table("plugins") as batch:
        batch.drop_constraint(
            op.f("fk_plugins_publisher_organization_id_organizations"), type_="foreignkey"
        )
        batch.drop_column("publisher_organization_id")
    op.drop_table("plugin_reader_organizations")
    op.drop_table("organization_shown_defaults")
    op.drop_index("ix_reports_plugin_id_created_at", table_name="reports")
    op.drop_table("reports")
    op.drop_table("reader_shown_preferences")
    op.drop_table("plugin_reader_people")

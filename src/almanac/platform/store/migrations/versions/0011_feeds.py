"""Readers' calendar feed addresses (issue 20): the secret kept only as its hash

Revision ID: 0011_feeds
Revises: 0009_review_store
Create Date: 2026-11-27 09:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011_feeds"
down_revision = "0009_review_store"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "reader_feeds",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("secret_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name=op.f("fk_reader_feeds_account_id_accounts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_reader_feeds")),
        sa.UniqueConstraint("secret_hash", name=op.f("uq_reader_feeds_secret_hash")),
    )
    op.create_index(
        op.f("ix_reader_feeds_account_id"), "reader_feeds", ["account_id"], unique=False
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_reader_feeds_account_id"), table_name="reader_feeds")
    op.drop_table("reader_feeds")

"""Limits on repeated attempts: the attempts each limit counts

Revision ID: 0016_attempt_limits
Revises: 0015_run_orchestrator
Create Date: 2026-12-09 08:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016_attempt_limits"
down_revision = "0015_run_orchestrator"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "limit_attempts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("limit_name", sa.String(length=40), nullable=False),
        sa.Column("subject", sa.String(length=64), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_limit_attempts")),
    )
    op.create_index(
        "ix_limit_attempts_subject",
        "limit_attempts",
        ["limit_name", "subject", "at"],
        unique=False,
    )
    op.create_index("ix_limit_attempts_at", "limit_attempts", ["limit_name", "at"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_limit_attempts_at", table_name="limit_attempts")
    op.drop_index("ix_limit_attempts_subject", table_name="limit_attempts")
    op.drop_table("limit_attempts")

"""Agent access: the device codes of agent login and the agent tokens

Revision ID: 0013_agents
Revises: 0012_alerts
Create Date: 2026-12-02 08:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013_agents"
down_revision = "0012_alerts"
branch_labels = None
depends_on = None

CODE_STATES = ("pending", "approved", "denied", "issued")
REVOKE_REASONS = ("logout", "portal", "new-login", "approver-left")


def _in(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


def upgrade() -> None:
    op.create_table(
        "agent_device_codes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("device_code_hash", sa.String(length=64), nullable=False),
        sa.Column("user_code", sa.String(length=8), nullable=False),
        sa.Column("agent_name", sa.String(length=200), nullable=False),
        sa.Column("machine_id", sa.String(length=64), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("interval", sa.Integer(), nullable=False),
        sa.Column("last_polled_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("organization_id", sa.Integer(), nullable=True),
        sa.Column("decided_by", sa.Integer(), nullable=True),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("may_publish", sa.Boolean(), nullable=False),
        sa.CheckConstraint(_in("state", CODE_STATES), name=op.f("ck_agent_device_codes_state")),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_agent_device_codes_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["decided_by"],
            ["accounts.id"],
            name=op.f("fk_agent_device_codes_decided_by_accounts"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_agent_device_codes")),
        sa.UniqueConstraint(
            "device_code_hash", name=op.f("uq_agent_device_codes_device_code_hash")
        ),
        sa.UniqueConstraint("user_code", name=op.f("uq_agent_device_codes_user_code")),
    )
    op.create_index(
        "ix_agent_device_codes_expires_at", "agent_device_codes", ["expires_at"], unique=False
    )
    op.create_table(
        "agent_tokens",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("organization_id", sa.Integer(), nullable=False),
        sa.Column("approved_by", sa.Integer(), nullable=False),
        sa.Column("may_publish", sa.Boolean(), nullable=False),
        sa.Column("agent_name", sa.String(length=200), nullable=False),
        sa.Column("machine_id", sa.String(length=64), nullable=False),
        sa.Column("device_code_id", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("revoked_reason", sa.String(length=16), nullable=True),
        sa.Column("revoked_by", sa.String(length=320), nullable=True),
        sa.CheckConstraint(
            f"revoked_reason IS NULL OR {_in('revoked_reason', REVOKE_REASONS)}",
            name=op.f("ck_agent_tokens_revoked_reason"),
        ),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_agent_tokens_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["approved_by"], ["accounts.id"], name=op.f("fk_agent_tokens_approved_by_accounts")
        ),
        sa.ForeignKeyConstraint(
            ["device_code_id"],
            ["agent_device_codes.id"],
            name=op.f("fk_agent_tokens_device_code_id_agent_device_codes"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_agent_tokens")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_agent_tokens_token_hash")),
    )
    op.create_index(
        "ix_agent_tokens_organization_id", "agent_tokens", ["organization_id"], unique=False
    )
    op.create_index("ix_agent_tokens_machine_id", "agent_tokens", ["machine_id"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_agent_tokens_machine_id", table_name="agent_tokens")
    op.drop_index("ix_agent_tokens_organization_id", table_name="agent_tokens")
    op.drop_table("agent_tokens")
    op.drop_index("ix_agent_device_codes_expires_at", table_name="agent_device_codes")
    op.drop_table("agent_device_codes")

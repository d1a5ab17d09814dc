"""Publishing: domain claims and their checks, invitation decisions, Developer Agreement
versions and acceptances, plug-in id bindings

Revision ID: 0005_publishing
Revises: 0004_run_layers
Create Date: 2026-11-24 10:12:31.204115
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005_publishing"
down_revision = "0004_run_layers"
branch_labels = None
depends_on = None


def _moment(name: str, nullable: bool = False) -> sa.Column:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "domain_claims",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("organization_id", sa.Integer(), nullable=False),
        sa.Column("domain", sa.String(length=253), nullable=False),
        sa.Column("token", sa.String(length=64), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("named_by", sa.Integer(), nullable=False),
        _moment("named_at"),
        sa.Column("proved_by", sa.String(length=8), nullable=True),
        _moment("verified_at", True),
        _moment("last_proved_at", True),
        _moment("next_check_at", True),
        _moment("grace_started_at", True),
        _moment("grace_ends_at", True),
        _moment("lapsed_at", True),
        _moment("ended_at", True),
        sa.CheckConstraint(
            "proved_by IS NULL OR proved_by IN ('dns', 'file')",
            name=op.f("ck_domain_claims_proved_by"),
        ),
        sa.CheckConstraint(
            "state IN ('unverified', 'verified', 'grace', 'lapsed')",
            name=op.f("ck_domain_claims_state"),
        ),
        sa.ForeignKeyConstraint(
            ["named_by"], ["accounts.id"], name=op.f("fk_domain_claims_named_by_accounts")
        ),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_domain_claims_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_domain_claims")),
    )
    op.create_index("ix_domain_claims_due", "domain_claims", ["next_check_at"], unique=False)
    op.create_index(
        "uq_domain_claims_current",
        "domain_claims",
        ["organization_id"],
        unique=True,
        postgresql_where=sa.text("ended_at IS NULL"),
        sqlite_where=sa.text("ended_at IS NULL"),
    )
    op.create_index(
        "uq_domain_claims_verified_domain",
        "domain_claims",
        ["domain"],
        unique=True,
        postgresql_where=sa.text("ended_at IS NULL AND state IN ('verified', 'grace')"),
        sqlite_where=sa.text("ended_at IS NULL AND state IN ('verified', 'grace')"),
    )
    op.create_table(
        "domain_checks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("claim_id", sa.Integer(), nullable=False),
        _moment("at"),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("by_account_id", sa.Integer(), nullable=True),
        sa.Column("dns_proved", sa.Boolean(), nullable=False),
        sa.Column("dns_detail", sa.Text(), nullable=False),
        sa.Column("file_proved", sa.Boolean(), nullable=False),
        sa.Column("file_detail", sa.Text(), nullable=False),
        sa.Column("state_after", sa.String(length=16), nullable=False),
        sa.CheckConstraint("kind IN ('manual', 'periodic')", name=op.f("ck_domain_checks_kind")),
        sa.ForeignKeyConstraint(
            ["by_account_id"],
            ["accounts.id"],
            name=op.f("fk_domain_checks_by_account_id_accounts"),
        ),
        sa.ForeignKeyConstraint(
            ["claim_id"],
            ["domain_claims.id"],
            name=op.f("fk_domain_checks_claim_id_domain_claims"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_domain_checks")),
    )
    op.create_index(
        "ix_domain_checks_claim_id_at", "domain_checks", ["claim_id", "at"], unique=False
    )
    op.create_table(
        "invitation_decisions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("request_id", sa.Integer(), nullable=False),
        sa.Column("domain", sa.String(length=253), nullable=False),
        sa.Column("decision", sa.String(length=16), nullable=False),
        sa.Column("decided_by", sa.Integer(), nullable=False),
        _moment("decided_at"),
        sa.CheckConstraint(
            "decision IN ('invited', 'declined')", name=op.f("ck_invitation_decisions_decision")
        ),
        sa.ForeignKeyConstraint(
            ["decided_by"],
            ["accounts.id"],
            name=op.f("fk_invitation_decisions_decided_by_accounts"),
        ),
        sa.ForeignKeyConstraint(
            ["request_id"],
            ["invitation_requests.id"],
            name=op.f("fk_invitation_decisions_request_id_invitation_requests"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_invitation_decisions")),
        sa.UniqueConstraint("request_id", name=op.f("uq_invitation_decisions_request_id")),
    )
    op.create_index(
        "ix_invitation_decisions_domain", "invitation_decisions", ["domain"], unique=False
    )
    op.create_table(
        "agreement_versions",
        sa.Column("version", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("effective_on", sa.Date(), nullable=False),
        sa.Column("changes", sa.Text(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("posted_by", sa.Integer(), nullable=False),
        _moment("posted_at"),
        sa.ForeignKeyConstraint(
            ["posted_by"], ["accounts.id"], name=op.f("fk_agreement_versions_posted_by_accounts")
        ),
        sa.PrimaryKeyConstraint("version", name=op.f("pk_agreement_versions")),
    )
    op.create_table(
        "agreement_acceptances",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("organization_id", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("accepted_by", sa.Integer(), nullable=False),
        _moment("accepted_at"),
        sa.ForeignKeyConstraint(
            ["accepted_by"],
            ["accounts.id"],
            name=op.f("fk_agreement_acceptances_accepted_by_accounts"),
        ),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_agreement_acceptances_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_agreement_acceptances")),
        sa.UniqueConstraint(
            "organization_id", "version", name=op.f("uq_agreement_acceptances_organization_id")
        ),
    )
    op.create_table(
        "plugin_id_bindings",
        sa.Column("plugin_id", sa.String(length=48), nullable=False),
        sa.Column("organization_id", sa.Integer(), nullable=True),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("bound_by", sa.String(length=320), nullable=False),
        _moment("bound_at"),
        _moment("retired_at", True),
        sa.CheckConstraint(
            "kind IN ('upload', 'reservation', 'host')", name=op.f("ck_plugin_id_bindings_kind")
        ),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_plugin_id_bindings_organization_id_organizations"),
        ),
        sa.PrimaryKeyConstraint("plugin_id", name=op.f("pk_plugin_id_bindings")),
    )
    op.create_index(
        op.f("ix_plugin_id_bindings_organization_id"),
        "plugin_id_bindings",
        ["organization_id"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_plugin_id_bindings_organization_id"), table_name="plugin_id_bindings")
    op.drop_table("plugin_id_bindings")
    op.drop_table("agreement_acceptances")
    op.drop_table("agreement_versions")
    op.drop_index("ix_invitation_decisions_domain", table_name="invitation_decisions")
    op.drop_table("invitation_decisions")
    op.drop_index("ix_domain_checks_claim_id_at", table_name="domain_checks")
    op.drop_table("domain_checks")
    op.drop_index("uq_domain_claims_verified_domain", table_name="domain_claims")
    op.drop_index("uq_domain_claims_current", table_name="domain_claims")
    op.drop_index("ix_domain_claims_due", table_name="domain_claims")
    op.drop_table("domain_claims")

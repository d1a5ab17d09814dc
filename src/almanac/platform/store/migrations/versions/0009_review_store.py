"""Review decisions, publishing, store listings, portal notices and retired plug-ins

Revision ID: 0009_review_store
Revises: 0008_submission
Create Date: 2026-11-25 09:00:00.000000
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0009_review_store"
down_revision = "0008_submission"
branch_labels = None
depends_on = None

OLD_STATES = ("checking", "checked", "in_review", "withdrawn")
STATES = (
    "checking",
    "checked",
    "in_review",
    "approved",
    "changes_requested",
    "rejected",
    "published",
    "superseded",
    "withdrawn",
)
VERDICTS = ("approve", "request-changes", "reject")


def _in(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


def _moment(name: str, nullable: bool = False) -> sa.Column[Any]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    with op.batch_alter_table("portal_uploads") as batch:
        batch.drop_constraint(op.f("ck_portal_uploads_state"), type_="check")
        batch.alter_column(
            "state", existing_type=sa.String(16), type_=sa.String(24), existing_nullable=False
        )
        batch.create_check_constraint(op.f("ck_portal_uploads_state"), _in("state", STATES))
        batch.add_column(
            sa.Column(
                "publish_on_approval", sa.Boolean(), nullable=False, server_default=sa.false()
            )
        )
        batch.add_column(sa.Column("published_by", sa.String(320), nullable=True))
        batch.add_column(_moment("published_at", True))
    with op.batch_alter_table("plugins") as batch:
        batch.add_column(
            sa.Column("retired", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    op.create_table(
        "portal_review_decisions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("upload_id", sa.Integer(), nullable=False),
        sa.Column("decision", sa.String(length=16), nullable=False),
        sa.Column("reason", sa.String(length=200), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("reviewer_id", sa.Integer(), nullable=False),
        sa.Column("reviewer", sa.String(length=320), nullable=False),
        sa.Column("reviewed", sa.String(length=80), nullable=False),
        _moment("decided_at"),
        sa.CheckConstraint(
            _in("decision", VERDICTS), name=op.f("ck_portal_review_decisions_decision")
        ),
        sa.ForeignKeyConstraint(
            ["upload_id"],
            ["portal_uploads.id"],
            name=op.f("fk_portal_review_decisions_upload_id_portal_uploads"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["reviewer_id"],
            ["accounts.id"],
            name=op.f("fk_portal_review_decisions_reviewer_id_accounts"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_portal_review_decisions")),
    )
    op.create_index(
        "ix_portal_review_decisions_upload_id", "portal_review_decisions", ["upload_id"]
    )
    op.create_table(
        "store_listings",
        sa.Column("plugin_id", sa.String(length=48), nullable=False),
        sa.Column("organization_id", sa.Integer(), nullable=False),
        sa.Column("upload_id", sa.Integer(), nullable=False),
        sa.Column("listing", sa.JSON(), nullable=True),
        sa.Column("icon", sa.LargeBinary(), nullable=True),
        sa.Column("category", sa.String(length=32), nullable=True),
        sa.Column("listed", sa.Boolean(), nullable=False),
        _moment("published_at"),
        _moment("retired_at", True),
        sa.Column("retired_by", sa.String(length=320), nullable=True),
        sa.ForeignKeyConstraint(
            ["plugin_id"], ["plugins.id"], name=op.f("fk_store_listings_plugin_id_plugins")
        ),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_store_listings_organization_id_organizations"),
        ),
        sa.ForeignKeyConstraint(
            ["upload_id"],
            ["portal_uploads.id"],
            name=op.f("fk_store_listings_upload_id_portal_uploads"),
        ),
        sa.PrimaryKeyConstraint("plugin_id", name=op.f("pk_store_listings")),
    )
    op.create_index("ix_store_listings_organization_id", "store_listings", ["organization_id"])
    op.create_table(
        "portal_notices",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("organization_id", sa.Integer(), nullable=False),
        sa.Column("plugin_id", sa.String(length=48), nullable=False),
        sa.Column("upload_id", sa.Integer(), nullable=True),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("subject", sa.String(length=200), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        _moment("at"),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_portal_notices_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["upload_id"],
            ["portal_uploads.id"],
            name=op.f("fk_portal_notices_upload_id_portal_uploads"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_portal_notices")),
    )
    op.create_index(
        "ix_portal_notices_organization_id_at", "portal_notices", ["organization_id", "at"]
    )


def downgrade() -> None:
    op.drop_index("ix_portal_notices_organization_id_at", table_name="portal_notices")
    op.drop_table("portal_notices")
    op.drop_index("ix_store_listings_organization_id", table_name="store_listings")
    op.drop_table("store_listings")
    op.drop_index("ix_portal_review_decisions_upload_id", table_name="portal_review_decisions")
    op.drop_table("portal_review_decisions")
    with op.batch_alter_table("plugins") as batch:
        batch.drop_column("retired")
    with op.batch_alter_table("portal_uploads") as batch:
        batch.drop_column("published_at")
        batch.drop_column("published_by")
        batch.drop_column("publish_on_approval")
        batch.drop_constraint(op.f("ck_portal_uploads_state"), type_="check")
        batch.alter_column(
            "state", existing_type=sa.String(24), type_=sa.String(16), existing_nullable=False
        )
        batch.create_check_constraint(op.f("ck_portal_uploads_state"), _in("state", OLD_STATES))

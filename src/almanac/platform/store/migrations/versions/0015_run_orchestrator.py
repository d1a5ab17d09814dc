"""The orchestrator's run id kept with each run: one run row a Dagster run (issue 31)

Revision ID: 0015_run_orchestrator
Revises: 0014_could_not_run
Create Date: 2026-11-27 05:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015_run_orchestrator"
down_revision = "0014_could_not_run"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A unique index rather than a constraint: SQLite adds neither to a table in place, and
    # rebuilding `runs` would copy every run for one column (NULLs never clash in either).
    op.add_column("runs", sa.Column("orchestrator_run", sa.String(length=64), nullable=True))
    op.create_index("uq_runs_orchestrator_run", "runs", ["orchestrator_run"], unique=True)


def downgrade() -> None:
    op.drop_index("uq_runs_orchestrator_run", table_name="runs")
    op.drop_column("runs", "orchestrator_run")

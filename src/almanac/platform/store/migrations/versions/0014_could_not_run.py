"""Upload checks that could not run (the service's own network was down), and the service's
own alerts (no plug-in: the network alert to operators, one a day)

Revision ID: 0014_could_not_run
Revises: 0013_agents
Create Date: 2026-12-10 08:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014_could_not_run"
down_revision = "0013_agents"
branch_labels = None
depends_on = None

OLD_STATUSES = ("queued", "running", "passed", "failed")
STATUSES = (*OLD_STATUSES, "could_not_run")
OLD_CAUSES = ("failing", "still-failing", "held")
CAUSES = (*OLD_CAUSES, "network")
SERVICE_INDEX = "uq_alerts_sent_service_cause_day"


def _in(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


def upgrade() -> None:
    with op.batch_alter_table("portal_upload_checks") as batch:
        batch.drop_constraint(op.f("ck_portal_upload_checks_status"), type_="check")
        batch.create_check_constraint(
            op.f("ck_portal_upload_checks_status"), _in("status", STATUSES)
        )
    with op.batch_alter_table("alerts_sent") as batch:
        batch.drop_constraint(op.f("ck_alerts_sent_cause"), type_="check")
        batch.create_check_constraint(op.f("ck_alerts_sent_cause"), _in("cause", CAUSES))
        batch.alter_column("plugin_id", existing_type=sa.String(length=48), nullable=True)
    op.create_index(
        SERVICE_INDEX,
        "alerts_sent",
        ["cause", "day"],
        unique=True,
        postgresql_where=sa.text("plugin_id IS NULL"),
        sqlite_where=sa.text("plugin_id IS NULL"),
    )


def downgrade() -> None:
    op.drop_index(SERVICE_INDEX, table_name="alerts_sent")
    op.execute("DELETE FROM alerts_sent WHERE plugin_id IS NULL")
    op.execute("UPDATE portal_upload_checks SET status = 'failed' WHERE status = 'could_not_run'")
    with op.batch_alter_table("alerts_sent") as batch:
        batch.alter_column("plugin_id", existing_type=sa.String(length=48), nullable=False)
        batch.drop_constraint(op.f("ck_alerts_sent_cause"), type_="check")
        batch.create_check_constraint(op.f("ck_alerts_sent_cause"), _in("cause", OLD_CAUSES))
    with op.batch_alter_table("portal_upload_checks") as batch:
        batch.drop_constraint(op.f("ck_portal_upload_checks_status"), type_="check")
        batch.create_check_constraint(
            op.f("ck_portal_upload_checks_status"), _in("status", OLD_STATUSES)
        )

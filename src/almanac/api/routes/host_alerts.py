"""The host's alerts (issue 20), for service operators: every alert sent, and the recipients
of the operators' alerts, which an operator chooses."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from almanac.api.deps import Db, Now, Operator
from almanac.api.schemas.alerts import AlertOut, AlertRecipientsIn, AlertRecipientsOut
from almanac.platform.alerts import send as alerts

router = APIRouter(prefix="/host/alerts", tags=["host"])


@router.get("", response_model=list[AlertOut])
def list_alerts(
    operator: Operator,
    db: Db,
    plugin_id: Annotated[str | None, Query(max_length=48)] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> list[AlertOut]:
    """The alerts sent, newest first (of one plug-in with `plugin_id`): plug-in, cause, day,
    subject, text and recipients."""
    return [
        AlertOut.model_validate(row)
        for row in alerts.sent_alerts(db, plugin_id=plugin_id, limit=limit)
    ]


@router.get("/recipients", response_model=AlertRecipientsOut)
def show_recipients(operator: Operator, db: Db) -> AlertRecipientsOut:
    """Who receives the operators' alerts: the chosen addresses, or every operator."""
    return AlertRecipientsOut.of(alerts.recipients(db))


@router.put("/recipients", response_model=AlertRecipientsOut)
def choose_recipients(
    body: AlertRecipientsIn, operator: Operator, db: Db, now: Now
) -> AlertRecipientsOut:
    """Choose the recipients of the operators' alerts (replacing the list whole); null gives
    them to every operator again. The publishing organizations' owners and admins still hear
    about their own plug-ins."""
    found = alerts.choose_recipients(db, body.recipients, by=operator.email, now=now)
    db.commit()
    return AlertRecipientsOut.of(found)

"""Service staff: operators grant and revoke the operator and reviewer roles, read the mail
outbox and the open invitation requests."""

from __future__ import annotations

from fastapi import APIRouter, Query, Response, status

from almanac.api.deps import Db, Now, Operator
from almanac.api.schemas import (
    InvitationRequestOut,
    OutboxMessageOut,
    RowIdPath,
    StaffGrantIn,
    StaffGrantOut,
)
from almanac.platform import accounts
from almanac.platform.accounts import StaffGrant
from almanac.platform.mail import outbox

router = APIRouter(prefix="/staff", tags=["staff"])


def _grant(row: StaffGrant) -> StaffGrantOut:
    return StaffGrantOut(
        account_id=row.account_id, email=row.account.email, role=row.role, granted_at=row.granted_at
    )


@router.get("/roles", response_model=list[StaffGrantOut])
def roles(operator: Operator, db: Db) -> list[StaffGrantOut]:
    """Every staff role held now."""
    return [_grant(g) for g in accounts.staff_grants(db)]


@router.post("/roles", status_code=status.HTTP_201_CREATED, response_model=StaffGrantOut)
def grant(body: StaffGrantIn, operator: Operator, db: Db, now: Now) -> StaffGrantOut:
    """Give an account the operator or reviewer role (granting a held role changes nothing)."""
    row = accounts.grant_staff_role(db, body.email, body.role, now, granted_by=operator)
    db.commit()
    return _grant(row)


@router.delete("/roles/{account_id}/{role}", status_code=status.HTTP_204_NO_CONTENT)
def revoke(account_id: RowIdPath, role: str, operator: Operator, db: Db, now: Now) -> Response:
    """End a staff role."""
    accounts.revoke_staff_role(db, account_id, role, now)
    db.commit()
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get("/outbox", response_model=list[OutboxMessageOut])
def mail_outbox(
    operator: Operator, db: Db, limit: int = Query(100, ge=1, le=1000)
) -> list[OutboxMessageOut]:
    """Mail kept because no SMTP server is configured, newest first."""
    return [OutboxMessageOut.model_validate(m) for m in outbox(db, limit)]


@router.get("/invitations", response_model=list[InvitationRequestOut])
def invitation_requests(operator: Operator, db: Db) -> list[InvitationRequestOut]:
    """The open invitation requests, oldest first."""
    return [InvitationRequestOut.model_validate(r) for r in accounts.open_requests(db)]

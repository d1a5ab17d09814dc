"""Service staff: operators grant and revoke the operator and reviewer roles, read the mail
outbox and the open invitation requests, invite or decline them, and post Developer Agreement
versions."""

from __future__ import annotations

from datetime import datetime

from fastapi import APIRouter, Query, Response, status

from almanac.api.context import ApiContext
from almanac.api.deps import Context, Db, Now, Operator
from almanac.api.schemas import RowIdPath
from almanac.api.schemas.portal import (
    AgreementVersionIn,
    AgreementVersionOut,
    InvitationDecisionOut,
)
from almanac.api.schemas.staff import (
    InvitationRequestOut,
    OutboxMessageOut,
    StaffGrantIn,
    StaffGrantOut,
)
from almanac.platform import accounts
from almanac.platform.mail import outbox
from almanac.platform.publishing.identity import agreement, invitations
from almanac.platform.publishing.identity.invitations import DecisionMade

router = APIRouter(prefix="/staff", tags=["staff"])


@router.get("/roles", response_model=list[StaffGrantOut])
def roles(operator: Operator, db: Db) -> list[StaffGrantOut]:
    """Every staff role held now."""
    return [StaffGrantOut.of(g) for g in accounts.staff_grants(db)]


@router.post("/roles", status_code=status.HTTP_201_CREATED, response_model=StaffGrantOut)
def grant(body: StaffGrantIn, operator: Operator, db: Db, now: Now) -> StaffGrantOut:
    """Give an account the operator or reviewer role (granting a held role changes nothing)."""
    row = accounts.grant_staff_role(db, body.email, body.role, now, granted_by=operator)
    db.commit()
    return StaffGrantOut.of(row)


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


def _decision(ctx: ApiContext, made: DecisionMade, now: datetime) -> InvitationDecisionOut:
    """Mail what the decision sends (its transaction committed) and answer with it."""
    mailed = invitations.send_decision_mail(ctx.mailer, made, now)
    return InvitationDecisionOut.of(made, mailed=mailed)


@router.post("/invitations/{request_id}/invite", response_model=InvitationDecisionOut)
def invite(
    request_id: RowIdPath, operator: Operator, db: Db, ctx: Context, now: Now
) -> InvitationDecisionOut:
    """Invite the domain of an open request: the invitation belongs to the domain, and the
    requester is mailed now (never before). An answered request is INVITATION-NOT-OPEN."""
    made = invitations.invite(db, request_id, operator, now, ctx.settings.base_url)
    db.commit()
    return _decision(ctx, made, now)


@router.post("/invitations/{request_id}/decline", response_model=InvitationDecisionOut)
def decline(
    request_id: RowIdPath, operator: Operator, db: Db, ctx: Context, now: Now
) -> InvitationDecisionOut:
    """Decline an open request; nobody is mailed."""
    made = invitations.decline(db, request_id, operator, now)
    db.commit()
    return _decision(ctx, made, now)


@router.post(
    "/agreement/versions",
    status_code=status.HTTP_201_CREATED,
    response_model=AgreementVersionOut,
)
def post_agreement_version(
    body: AgreementVersionIn, operator: Operator, db: Db, now: Now
) -> AgreementVersionOut:
    """Post the next Developer Agreement version with its effective date (today or later,
    after the newest version's: AGREEMENT-EFFECTIVE-DATE) and a note of changes. From that
    date organizations accept it again before their next submission."""
    found = agreement.post_version(db, operator, body.text, body.effective_on, body.changes, now)
    db.commit()
    return AgreementVersionOut.model_validate(found)

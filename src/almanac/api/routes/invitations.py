"""POST /api/developers/invitations ("Endpoints"): ask to be invited to publish."""

from __future__ import annotations

from fastapi import APIRouter, Request, status

from almanac.api.deps import Db, Now
from almanac.api.schemas.invitations import InvitationIn, InvitationOut
from almanac.platform import accounts

router = APIRouter(prefix="/developers", tags=["invitations"])


@router.post("/invitations", status_code=status.HTTP_202_ACCEPTED, response_model=InvitationOut)
def request_invitation(body: InvitationIn, request: Request, db: Db, now: Now) -> InvitationOut:
    """No credentials. The answer is the same whether or not the domain is known or already
    asked for; nothing is mailed until someone is invited. At most 5 a day per address."""
    if "authorization" in request.headers:
        # "Authentication" 5: a token may not ask to be invited.
        raise accounts.Forbidden("invitation requests take no credentials; send none")
    accounts.request_invitation(
        db,
        email=body.email,
        organization=body.organization,
        domain=body.domain,
        note=body.note,
        now=now,
    )
    db.commit()
    return InvitationOut()

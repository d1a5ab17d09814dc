"""POST /api/developers/invitations ("Endpoints"): ask to be invited to publish."""

from __future__ import annotations

from fastapi import APIRouter, Request, status

from almanac.api.deps import Db, Now
from almanac.api.schemas.invitations import InvitationIn, InvitationOut
from almanac.platform import accounts, agents
from almanac.platform.agents import AgentAction

router = APIRouter(prefix="/developers", tags=["invitations"])


@router.post(
    "/invitations",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=InvitationOut,
    responses={429: {"description": "RATE-LIMITED: see Retry-After"}},
)
def request_invitation(body: InvitationIn, request: Request, db: Db, now: Now) -> InvitationOut:
    """No credentials. The answer is the same whether or not the domain is known or already
    asked for; nothing is mailed until someone is invited. At most 5 a day per e-mail address:
    past it, 429 with `Retry-After` (RATE-LIMITED)."""
    header = request.headers.get("authorization")
    if header is not None:
        # "Authentication" 5: a token may not ask to be invited; an agent's is AGENT_FORBIDDEN.
        secret = header.partition(" ")[2].strip()
        if agents.is_agent_secret(secret):
            try:
                grant = agents.grant_of(agents.use_agent_token(db, secret, now))
            except accounts.NotAuthenticated:
                grant = None
            if grant is not None:
                agents.agent_may(AgentAction.ASK_INVITATION, grant)
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

"""The invitation request page at /invitations ("Endpoints", POST /api/developers/invitations;
"Authentication" 6: no sign-in needed): the same input model and the same domain function as
the API route, so the answer is the same whether or not the domain is known, nothing is mailed
until an operator invites, and at most 5 requests a day come from one address. The operators
answer the requests on the host page (`host.py`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from almanac.api.deps import Db, Now
from almanac.api.pages.common import (
    Form,
    MaybeAccount,
    PageRefused,
    field_of,
    redirect,
    refusals,
    render,
    text_field,
)
from almanac.api.schemas.invitations import InvitationIn, InvitationOut
from almanac.platform import accounts
from almanac.platform.accounts.invitations import MAX_NOTE, MAX_ORGANIZATION
from almanac.platform.limits import INVITATION_REQUESTS_PER_EMAIL

router = APIRouter(include_in_schema=False)

FIELDS = ("email", "organization", "domain", "note")


def _context(values: dict[str, str], error: PageRefused | None, sent: bool) -> dict[str, Any]:
    return {
        "title": "Ask to be invited to publish",
        "values": values,
        "error": error,
        "error_field": None if error is None else field_of(error.message, FIELDS),
        "sent": InvitationOut().message if sent else None,
        "limits": {
            "organization": MAX_ORGANIZATION,
            "note": MAX_NOTE,
            "per_address": INVITATION_REQUESTS_PER_EMAIL.most,
        },
    }


@router.get("/invitations")
def request_page(
    request: Request,
    account: MaybeAccount,
    domain: str = "",
    organization: str = "",
    sent: str = "",
) -> Response:
    """The form, filled in from the address (the portal's gate links here with its domain and
    organization) and with a signed-in person's e-mail address."""
    values = {
        "email": account.email if account is not None else "",
        "organization": organization,
        "domain": domain,
        "note": "",
    }
    context = _context(values, None, sent == "1")
    return render(request, "invitation_request.html", context, account=account)


@router.post("/invitations")
def ask(request: Request, form: Form, account: MaybeAccount, db: Db, now: Now) -> Response:
    """Ask as `POST /api/developers/invitations` does; a refusal draws the form again with
    what was typed and the field it names."""
    values = {name: text_field(form, name) for name in FIELDS}
    try:
        with refusals():
            body = InvitationIn.model_validate(values)
            accounts.request_invitation(
                db,
                email=body.email,
                organization=body.organization,
                domain=body.domain,
                note=body.note,
                now=now,
            )
            db.commit()
    except PageRefused as refusal:
        db.rollback()
        context = _context(values, refusal, False)
        return render(
            request, "invitation_request.html", context, status=refusal.status, account=account
        )
    return redirect("/invitations?sent=1")

"""The reader's webhooks page (issue 38): register an endpoint for plug-ins they may read (the
secret shown once), list, pause, resume, rotate the secret, delete, and each endpoint's
delivery log with a replay button; over the same domain functions as `routes/webhooks.py`.
An owner or admin of organizations may register an endpoint for one of them instead (for the
plug-ins it may see) and finds each organization's endpoints in a section of its own."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from fastapi import APIRouter, Request
from fastapi.responses import Response

from almanac.api.deps import Context, Db, Now
from almanac.api.pages.common import (
    Form,
    PageAccount,
    PageRefused,
    redirect,
    refusals,
    render,
    text_field,
)
from almanac.api.schemas import RowIdPath
from almanac.api.schemas.webhooks import EndpointIn
from almanac.platform.accounts.models import Account, Organization
from almanac.platform.audience.visibility import organization_plugins, visible_plugins
from almanac.platform.publishing.identity.roles import managed_organizations
from almanac.platform.webhooks import deliveries, endpoints
from almanac.platform.webhooks.endpoints import EndpointView, EndpointWithSecret

router = APIRouter(include_in_schema=False)
PAGE = "/account/webhooks"


@dataclass(frozen=True, slots=True)
class OwnerSection:
    """An organization the reader manages: its endpoints and the plug-ins it may see."""

    organization: Organization
    endpoints: list[EndpointView]
    plugins: list[str]

    @property
    def field(self) -> str:
        """The name of its plug-in checkboxes in the register form."""
        return f"plugins-{self.organization.id}"


def _sections(db: Db, account: Account) -> list[OwnerSection]:
    return [
        OwnerSection(
            organization,
            endpoints.account_endpoints(db, account, organization.id),
            [p.id for p in organization_plugins(db, organization.id)],
        )
        for organization in managed_organizations(db, account)
    ]


def _context(db: Db, account: Account, **extra: Any) -> dict[str, Any]:
    readable = sorted(p.id for p in visible_plugins(db, account))
    return {
        "title": "Webhooks",
        "endpoints": endpoints.account_endpoints(db, account),
        "sections": _sections(db, account),
        "readable": readable,
        "made": None,
        "error": None,
        "form": {"url": "", "description": "", "plugins": [], "organization": ""},
        "max_endpoints": endpoints.MAX_ENDPOINTS,
        **extra,
    }


@router.get(PAGE)
def webhooks_page(request: Request, account: PageAccount, db: Db) -> Response:
    """The reader's endpoints and the form to register one."""
    return render(request, "webhooks.html", _context(db, account), account=account)


def _shown_once(
    request: Request, db: Db, account: Account, made: EndpointWithSecret, status: int = 200
) -> Response:
    context = _context(db, account, made=made)
    return render(request, "webhooks.html", context, status=status, account=account)


@router.post(PAGE)
def register_endpoint(
    request: Request, form: Form, account: PageAccount, db: Db, ctx: Context, now: Now
) -> Response:
    """Register as `POST /api/v1/reader/webhooks` does, for the reader or (`organization`) one
    of the organizations they manage; the secret is on this answer only."""
    organization = text_field(form, "organization")
    # Each owner's plug-ins are checkboxes of their own: the chosen owner's alone count.
    field = f"plugins-{organization}" if organization else "plugins"
    typed = {
        "url": text_field(form, "url"),
        "description": text_field(form, "description"),
        "plugins": [p for p in form.getlist(field) if isinstance(p, str)],
        "organization": organization or None,
    }
    try:
        with refusals():
            body = EndpointIn.model_validate(typed)
            made = endpoints.register(
                db,
                account,
                url=body.url,
                plugin_ids=body.plugins,
                description=body.description,
                addresses=ctx.endpoint_addresses,
                now=now,
                organization_id=body.organization,
            )
            db.commit()
    except PageRefused as refusal:
        db.rollback()
        shown = {**typed, "organization": organization}
        context = _context(db, account, error=refusal.message, form=shown)
        return render(request, "webhooks.html", context, status=refusal.status, account=account)
    return _shown_once(request, db, account, made, status=201)


@router.post(PAGE + "/{endpoint_id}/rotate")
def rotate_endpoint_secret(
    request: Request, endpoint_id: RowIdPath, form: Form, account: PageAccount, db: Db, now: Now
) -> Response:
    """A new secret, shown on this answer only; the old one signs beside it for 24 hours."""
    with refusals():
        made = endpoints.rotate_secret(db, account, endpoint_id, now)
    db.commit()
    return _shown_once(request, db, account, made)


@router.post(PAGE + "/{endpoint_id}/delete")
def delete_endpoint(endpoint_id: RowIdPath, form: Form, account: PageAccount, db: Db) -> Response:
    with refusals():
        endpoints.delete_endpoint(db, account, endpoint_id)
    db.commit()
    return redirect(PAGE)


@router.get(PAGE + "/{endpoint_id}")
def delivery_log_page(
    request: Request, endpoint_id: RowIdPath, account: PageAccount, db: Db
) -> Response:
    """One endpoint's newest deliveries, each with its attempts, and a replay button."""
    with refusals():
        view = endpoints.endpoint(db, account, endpoint_id)
        log = deliveries.delivery_log(db, account, endpoint_id)
    replayed = request.query_params.get("replayed")
    context = {"title": "Webhook deliveries", "endpoint": view, "log": log, "replayed": replayed}
    return render(request, "webhook_log.html", context, account=account)


@router.post(PAGE + "/{endpoint_id}/deliveries/{delivery_id}/replay")
def replay_delivery(
    endpoint_id: RowIdPath,
    delivery_id: RowIdPath,
    form: Form,
    account: PageAccount,
    db: Db,
    now: Now,
) -> Response:
    with refusals():
        deliveries.replay(db, account, endpoint_id, delivery_id, now)
    db.commit()
    return redirect(f"{PAGE}/{endpoint_id}?replayed={delivery_id}")


# Last: `{move}` would match the other moves' paths too.
@router.post(PAGE + "/{endpoint_id}/{move}")
def pause_or_resume_endpoint(
    endpoint_id: RowIdPath,
    move: Literal["pause", "resume"],
    form: Form,
    account: PageAccount,
    db: Db,
    now: Now,
) -> Response:
    with refusals():
        endpoints.set_paused(db, account, endpoint_id, move == "pause", now)
    db.commit()
    return redirect(PAGE)

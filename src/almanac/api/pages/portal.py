"""The publishers' portal at /portal: an organization's domain proof (the exact TXT record and
file, and "check now"), invitation and agreement, reserved ids, uploads with their checks'
progress and findings, an upload's record diff, review information, attestations, submit with
every reason it is refused, publish and withdraw, and each published plug-in's listing
(unpublish, list again, retire with the typed id), history, reports, last five runs and the
portal's notices. Every move calls the domain function its `/api/v1/portal` route calls."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import Response
from sqlalchemy.orm import Session
from starlette.datastructures import UploadFile

from almanac.api.deps import Context, Db, Now
from almanac.api.pages.common import (
    Form,
    MaybeAccount,
    PageAccount,
    PageRefused,
    redirect,
    refusals,
    render,
    text_field,
)
from almanac.api.pages.documents import document_html
from almanac.api.pages.review import shadow_diff_view
from almanac.api.schemas import RowIdPath
from almanac.api.schemas.portal import (
    AgreementVersionPath,
    DomainIn,
    PluginIdIn,
    PublishIn,
    RetireIn,
    RolloutMoveIn,
)
from almanac.platform import accounts, agents, audience, figures
from almanac.platform.accounts import Account
from almanac.platform.accounts.organizations import MANAGERS
from almanac.platform.agents.tokens import AgentView
from almanac.platform.contract.pack import MAX_ARCHIVE_BYTES
from almanac.platform.mail import send_all
from almanac.platform.publishing.identity import agreement, domains, ids
from almanac.platform.publishing.identity.roles import require_member
from almanac.platform.publishing.models import Attestation, UploadState
from almanac.platform.publishing.publication import listings, notices, publication, rollouts
from almanac.platform.publishing.review import gate, submission
from almanac.platform.publishing.review.submission import ATTESTATION_WORDS
from almanac.platform.publishing.uploads import uploads
from almanac.platform.store.reading import last_runs

router = APIRouter(prefix="/portal", include_in_schema=False)

DONE = {
    "domain": "Domain named: publish the TXT record or the file below, then check now.",
    "checked": "Checked: see what each way found below.",
    "agreement": "Agreement accepted.",
    "reserved": "Id reserved for the organization.",
    "uploaded": "Uploaded: its checks run now.",
    "review": "Review information sent: the checks run again.",
    "attested": "Attestations made.",
    "submitted": "Submitted for review.",
    "published": "Published: it runs within minutes and readers move to it.",
    "shadowing": "Published with a shadow period: it runs beside the current version, writing "
    "nothing, and readers get it once its shadow runs pass.",
    "rollout-promote": "Promoted: it is the current version; readers move to it at the next run.",
    "rollout-stop": "Rollout stopped: the current version keeps running.",
    "rollout-roll-back": "Rolled back: the version before is current again.",
    "withdrawn": "Withdrawn.",
    "rechecks": "Its checks run again.",
    "unpublish": "Unpublished: nobody new can install it; its readers keep it.",
    "relist": "Listed again.",
    "retire": "Retired: its runs stopped for good; its owners and admins were e-mailed.",
    "organization": "Organization made.",
    "revoked": "Agent revoked: its token stops working at once.",
}


@router.get("")
def home(request: Request, account: PageAccount, db: Db, done: str = "") -> Response:
    """The organizations the person belongs to, and a form to make one."""
    mine = accounts.organizations_of(db, account)
    context = {"title": "Portal", "organizations": mine, "done": DONE.get(done)}
    return render(request, "portal_home.html", context, account=account)


@router.post("/organizations")
def make_organization(form: Form, account: PageAccount, db: Db, now: Now) -> Response:
    with refusals():
        made = accounts.create_organization(db, account, text_field(form, "name"), now)
    db.commit()
    return redirect(f"/portal/{made.id}?done=organization")


@router.get("/agreement/{version}")
def agreement_page(
    request: Request, version: AgreementVersionPath, account: MaybeAccount, db: Db
) -> Response:
    """A Developer Agreement version as a document: its text drawn, its number, effective date
    and note of changes. Open to anyone, as `GET /api/v1/portal/agreement/versions/{version}`."""
    with refusals():
        found = agreement.agreement_version(db, version)
    context = {
        "title": f"Developer Agreement, version {found.version}",
        "found": found,
        "text": document_html(found.text),
    }
    return render(request, "portal_agreement.html", context, account=account)


@router.get("/device")
def device(
    request: Request, account: PageAccount, db: Db, now: Now, user_code: str = "", done: str = ""
) -> Response:
    """The device grant's verification address: type the code the tool printed, see the
    agent's name, choose the organization and whether it may publish, approve or deny."""
    found = None
    managed: list[tuple[int, str]] = []
    if user_code:
        with refusals():
            found = agents.login_code(db, user_code, account, now)
        managed = [
            (org.id, org.name)
            for org, role in accounts.organizations_of(db, account)
            if role in MANAGERS
        ]
    context = {
        "title": "Approve an agent",
        "user_code": user_code,
        "code": found,
        "managed": managed,
        "done": {"approve": "Approved: the tool receives its token now.", "deny": "Denied."}.get(
            done
        ),
    }
    return render(request, "portal_device.html", context, account=account)


@router.post("/device/{decision}")
def decide_device(
    decision: str, form: Form, request: Request, account: PageAccount, db: Db, now: Now
) -> Response:
    """Approve (for the chosen organization, publishing allowed or not) or deny a login code.
    Signed in with a password: the page's session is a person's."""
    typed = text_field(form, "user_code")
    with refusals():
        if decision == "approve":
            agents.approve(
                db,
                typed,
                account,
                int(text_field(form, "organization_id") or 0),
                form.get("may_publish") == "yes",
                now,
            )
        elif decision == "deny":
            agents.deny(db, typed, account, now)
        else:
            raise PageRefused(404, "NOT-FOUND", f"no decision {decision!r} for a login code")
    db.commit()
    return redirect(f"/portal/device?user_code={quote(typed)}&done={decision}")


@router.post("/{organization_id}/agents/{agent_id}/revoke")
def revoke_agent(
    organization_id: RowIdPath,
    agent_id: RowIdPath,
    form: Form,
    account: PageAccount,
    db: Db,
    now: Now,
) -> Response:
    with refusals():
        agents.revoke_agent(db, organization_id, account, agent_id, now)
    db.commit()
    return _back(organization_id, "revoked", "#agents")


@router.get("/{organization_id}")
def organization(
    request: Request,
    organization_id: RowIdPath,
    account: PageAccount,
    db: Db,
    ctx: Context,
    now: Now,
    done: str = "",
) -> Response:
    """Everything of one organization's publishing on one page."""
    with refusals():
        require_member(db, organization_id, account)
        found = accounts.visible_organization(db, organization_id, account)
        context = {
            "title": f"{found.name} · Portal",
            "org": found,
            "domain": domains.current_domain(db, organization_id),
            "gate": gate.submission_gate(db, organization_id, now),
            "in_effect": agreement.version_in_effect(db, now),
            "accepted": agreement.organization_acceptances(db, organization_id, account),
            "ids": ids.organization_ids(db, organization_id, account),
            "uploads": uploads.organization_uploads(db, organization_id, account),
            "published": listings.organization_listings(db, organization_id, account),
            "notices": notices.organization_notices(db, organization_id, account)[:10],
            "agents": _agents_or_none(db, organization_id, account),
            "base_url": ctx.settings.base_url,
            "done": DONE.get(done),
        }
    return render(request, "portal_organization.html", context, account=account)


def _agents_or_none(db: Session, organization_id: int, viewer: Account) -> list[AgentView] | None:
    """The organization's agents for an owner or admin; None for anyone else, who sees none."""
    try:
        return list(agents.organization_agents(db, organization_id, viewer))
    except (accounts.Forbidden, accounts.EmailUnverified):
        return None


def _back(organization_id: RowIdPath, done: str, anchor: str = "") -> Response:
    return redirect(f"/portal/{organization_id}?done={done}{anchor}")


@router.post("/{organization_id}/domain")
def name_domain(
    organization_id: RowIdPath, form: Form, account: PageAccount, db: Db, now: Now
) -> Response:
    with refusals():
        body = DomainIn(domain=text_field(form, "domain"))
        domains.name_domain(db, organization_id, account, body.domain, now)
    db.commit()
    return _back(organization_id, "domain", "#domain")


@router.post("/{organization_id}/domain/check")
def check_domain(
    organization_id: RowIdPath, form: Form, account: PageAccount, db: Db, ctx: Context, now: Now
) -> Response:
    with refusals():
        domains.check_now(db, organization_id, account, ctx.domain_prover, now)
    db.commit()
    return _back(organization_id, "checked", "#domain")


@router.post("/{organization_id}/agreement")
def accept_agreement(
    organization_id: RowIdPath, form: Form, account: PageAccount, db: Db, now: Now
) -> Response:
    with refusals():
        version = int(text_field(form, "version") or 0)
        agreement.accept(db, organization_id, account, version, now)
    db.commit()
    return _back(organization_id, "agreement", "#agreement")


@router.post("/{organization_id}/ids")
def reserve_id(
    organization_id: RowIdPath, form: Form, account: PageAccount, db: Db, now: Now
) -> Response:
    with refusals():
        body = PluginIdIn(id=text_field(form, "id"))
        ids.reserve_id(db, organization_id, account, body.id, now)
    db.commit()
    return _back(organization_id, "reserved", "#ids")


@router.post("/{organization_id}/uploads")
async def upload(
    organization_id: RowIdPath, form: Form, account: PageAccount, db: Db, ctx: Context, now: Now
) -> Response:
    """The pack chosen in the form's file field, checked as the API's upload route checks it."""
    sent = form.get("archive")
    if not isinstance(sent, UploadFile):
        raise PageRefused(422, "REQUEST-INVALID", "archive: choose the pack (.zip) to upload")
    archive = await sent.read(MAX_ARCHIVE_BYTES * 2)
    with refusals():
        uploads.require_uploader(db, organization_id, account)
        answer = uploads.upload(
            db, organization_id, account, uploads.examine(archive, ctx.imports), now
        )
    db.commit()
    return redirect(f"/portal/{organization_id}/uploads/{answer.upload.id}?done=uploaded")


@router.get("/{organization_id}/uploads/{upload_id}")
def upload_page(
    request: Request,
    organization_id: RowIdPath,
    upload_id: RowIdPath,
    account: PageAccount,
    db: Db,
    ctx: Context,
    now: Now,
    done: str = "",
    refused: str = "",
) -> Response:
    """One upload: checks (a checking upload's page refreshes itself), findings, record diff,
    review information, attestations, and the moves its state allows."""
    with refusals():
        found = uploads.show_upload(db, organization_id, account, upload_id)
        review = submission.review_information(db, organization_id, account, upload_id)
        made = submission.attestations(db, organization_id, account, upload_id)
        row = uploads.upload_row(db, organization_id, upload_id)
        reasons = (
            gate.submission_reasons(db, row, now)
            if found.state in (UploadState.CHECKED, UploadState.CHANGES_REQUESTED)
            else ()
        )
    context = {
        "title": f"{found.plugin_id} {found.version} · Portal",
        "org_id": organization_id,
        "u": found,
        "review": review,
        "review_text": None
        if review.document is None
        else json.dumps(review.document, indent=2, ensure_ascii=False),
        "diff_text": None
        if found.record_diff is None
        else json.dumps(found.record_diff, indent=2, ensure_ascii=False),
        "made": {a.attestation.value: a for a in made},
        "attestations": [(a.value, ATTESTATION_WORDS[a]) for a in Attestation],
        "reasons": reasons,
        "base_url": ctx.settings.base_url,
        "refresh": found.state is UploadState.CHECKING,
        "done": DONE.get(done),
    }
    return render(request, "portal_upload.html", context, account=account)


def _to_upload(organization_id: RowIdPath, upload_id: RowIdPath, done: str) -> Response:
    return redirect(f"/portal/{organization_id}/uploads/{upload_id}?done={done}")


@router.post("/{organization_id}/uploads/{upload_id}/review")
def send_review(
    organization_id: RowIdPath,
    upload_id: RowIdPath,
    form: Form,
    account: PageAccount,
    db: Db,
    now: Now,
) -> Response:
    try:
        document = json.loads(text_field(form, "document"))
    except ValueError as error:
        raise PageRefused(
            422, "PLG-REVIEW-INVALID", f"document: not JSON ({error.args[0]})"
        ) from None
    with refusals():
        submission.send_review_information(db, organization_id, account, upload_id, document, now)
    db.commit()
    return _to_upload(organization_id, upload_id, "review")


@router.post("/{organization_id}/uploads/{upload_id}/attestations")
def attest(
    organization_id: RowIdPath,
    upload_id: RowIdPath,
    form: Form,
    account: PageAccount,
    db: Db,
    now: Now,
) -> Response:
    chosen = [Attestation(v) for v in form.getlist("attestation") if v in set(Attestation)]
    if not chosen:
        raise PageRefused(422, "REQUEST-INVALID", "attestation: tick at least one")
    with refusals():
        submission.attest(db, organization_id, account, upload_id, chosen, now)
    db.commit()
    return _to_upload(organization_id, upload_id, "attested")


@router.post("/{organization_id}/uploads/{upload_id}/submit")
def submit(
    request: Request,
    organization_id: RowIdPath,
    upload_id: RowIdPath,
    form: Form,
    account: PageAccount,
    db: Db,
    now: Now,
) -> Response:
    """Submit; a refusal lists every reason on the page, as the API's SUBMIT-REFUSED does."""
    with refusals():
        submission.submit(
            db,
            organization_id,
            account,
            upload_id,
            now,
            publish_on_approval=form.get("publish_on_approval") == "yes",
        )
    db.commit()
    return _to_upload(organization_id, upload_id, "submitted")


UploadMove = Callable[[Session, int, Account, int, datetime], object]
UPLOAD_MOVES: dict[str, tuple[UploadMove, str]] = {
    "withdraw": (uploads.withdraw, "withdrawn"),
    "checks": (uploads.rerun_checks, "rechecks"),
}
"""The upload moves of one shape (organization, actor, upload, moment) and what the page says."""


@router.post("/{organization_id}/uploads/{upload_id}/publish")
def publish_upload(
    organization_id: RowIdPath,
    upload_id: RowIdPath,
    form: Form,
    account: PageAccount,
    db: Db,
    now: Now,
) -> Response:
    """Publish, at once or with the shadow period chosen (README, Rollouts)."""
    with refusals():
        body = PublishIn.model_validate({"shadow": text_field(form, "shadow") or 0})
        publication.publish(db, organization_id, account, upload_id, now, shadow=body.shadow)
    db.commit()
    return _to_upload(organization_id, upload_id, "shadowing" if body.shadow else "published")


@router.post("/{organization_id}/uploads/{upload_id}/{move}")
def upload_move(
    organization_id: RowIdPath,
    upload_id: RowIdPath,
    move: str,
    form: Form,
    account: PageAccount,
    db: Db,
    now: Now,
) -> Response:
    """Publish, withdraw, or run the checks again, each by its domain function."""
    if move not in UPLOAD_MOVES:
        raise PageRefused(404, "NOT-FOUND", f"no move {move!r} for an upload")
    act, done = UPLOAD_MOVES[move]
    with refusals():
        act(db, organization_id, account, upload_id, now)
    db.commit()
    return _to_upload(organization_id, upload_id, done)


@router.get("/{organization_id}/plugins/{plugin_id}")
def plugin_page(
    request: Request,
    organization_id: RowIdPath,
    plugin_id: str,
    account: PageAccount,
    db: Db,
    now: Now,
    done: str = "",
    days: int = 30,
) -> Response:
    """A published plug-in: its listing and moves, its figures over 30 or 365 days, history,
    reports and last five runs."""
    with refusals():
        listing = listings.show_listing(db, organization_id, account, plugin_id)
        history = listings.listing_history(db, organization_id, account, plugin_id)
        drawn = figures.publisher_figures(db.connection(), plugin_id, days, now)
        try:
            reports = audience.publisher_reports(db, organization_id, account, plugin_id)
        except accounts.Forbidden:
            reports = None
    context = {
        "title": f"{plugin_id} · Portal",
        "org_id": organization_id,
        "listing": listing,
        "history": history,
        "reports": reports,
        "runs": last_runs(db.connection(), plugin_id),
        "rollouts": rollouts.plugin_rollouts(db, organization_id, account, plugin_id),
        "rollout_moves": ROLLOUT_PAGE_MOVES,
        "done": DONE.get(done),
        "figures": drawn,
        "figures_src": f"/api/v1/portal/organizations/{organization_id}/plugins/"
        f"{quote(plugin_id)}/figures?days={days}",
        "figure_spans": [
            (d, f"{d} days", f"/portal/{organization_id}/plugins/{quote(plugin_id)}?days={d}")
            for d in figures.PUBLISHER_DAYS
        ],
    }
    return render(request, "portal_plugin.html", context, account=account)


@router.get("/{organization_id}/plugins/{plugin_id}/shadow-runs/{shadow_id}/diff")
def shadow_diff_page(
    request: Request,
    organization_id: RowIdPath,
    plugin_id: str,
    shadow_id: RowIdPath,
    account: PageAccount,
    db: Db,
) -> Response:
    """A shadow run's full record diff, per series, as the review desk shows a diff."""
    with refusals():
        found = rollouts.shadow_diff(db, organization_id, account, plugin_id, shadow_id)
    back = f"/portal/{organization_id}/plugins/{quote(plugin_id)}"
    return shadow_diff_view(request, account, found, back, f"Back to {plugin_id}")


ROLLOUT_PAGE_MOVES = (
    ("promote", "Promote now", ("shadowing",)),
    ("stop", "Stop the rollout", ("shadowing", "held")),
    ("roll-back", "Roll back", ("promoted",)),
)
"""The rollout's moves on the plug-in page and the states in which each is offered."""
ROLLOUT_MOVES: dict[str, Callable[..., rollouts.RolloutView]] = {
    "promote": rollouts.promote,
    "stop": rollouts.stop,
    "roll-back": rollouts.roll_back,
}


@router.post("/{organization_id}/plugins/{plugin_id}/rollout/{move}")
def rollout_move(
    organization_id: RowIdPath,
    plugin_id: str,
    move: str,
    form: Form,
    account: PageAccount,
    db: Db,
    now: Now,
) -> Response:
    """Promote early, stop, or roll back, with why, each by its domain function."""
    if move not in ROLLOUT_MOVES:
        raise PageRefused(404, "NOT-FOUND", f"no move {move!r} for a rollout")
    with refusals():
        body = RolloutMoveIn.model_validate({"reason": text_field(form, "reason")})
        ROLLOUT_MOVES[move](db, organization_id, account, plugin_id, body.reason, now)
    db.commit()
    return _to_plugin(organization_id, plugin_id, f"rollout-{move}")


def _to_plugin(organization_id: RowIdPath, plugin_id: str, done: str) -> Response:
    return redirect(f"/portal/{organization_id}/plugins/{quote(plugin_id)}?done={done}")


@router.post("/{organization_id}/plugins/{plugin_id}/retire")
def retire(
    organization_id: RowIdPath,
    plugin_id: str,
    form: Form,
    account: PageAccount,
    db: Db,
    ctx: Context,
    now: Now,
) -> Response:
    with refusals():
        body = RetireIn(confirm=text_field(form, "confirm"))
        done = listings.retire(db, organization_id, account, plugin_id, body.confirm, now)
    db.commit()
    send_all(ctx.mailer, done.mails, now)
    return _to_plugin(organization_id, plugin_id, "retire")


ListingMove = Callable[[Session, int, Account, str, datetime], object]
LISTING_MOVES: dict[str, ListingMove] = {
    "unpublish": listings.unpublish,
    "relist": listings.relist,
}


@router.post("/{organization_id}/plugins/{plugin_id}/{move}")
def listing_move(
    organization_id: RowIdPath,
    plugin_id: str,
    move: str,
    form: Form,
    account: PageAccount,
    db: Db,
    now: Now,
) -> Response:
    """Unpublish or list again, each by its domain function."""
    if move not in LISTING_MOVES:
        raise PageRefused(404, "NOT-FOUND", f"no move {move!r} for a published plug-in")
    with refusals():
        LISTING_MOVES[move](db, organization_id, account, plugin_id, now)
    db.commit()
    return _to_plugin(organization_id, plugin_id, move)

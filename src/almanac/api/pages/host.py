"""The operators' pages at /host: every plug-in with its state and the open invitation requests
(invite or decline each, as the staff API does), and a plug-in's page (its
current version's files and digest, approve by that digest, pause, resume, remove, restore,
Held with the first missing dates and its two choices, the retention answer, purge with the
dry-run counts and the typed id, takedown and the shelf, the private reader list, the last
five runs, and a link to its asset in the Dagster UI).

Each move calls exactly the store function the `/api/v1/host` route calls, with the form
checked by the route's own input model; refusals are the domain's, drawn by `refusals()` with
the API's status table."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from urllib.parse import quote, urlsplit

from fastapi import APIRouter, Request
from fastapi.responses import Response
from sqlalchemy import Connection
from sqlalchemy.orm import Session
from starlette.datastructures import FormData

from almanac.api.deps import Context, Db, Now
from almanac.api.pages.common import (
    Form,
    PageOperator,
    PageRefused,
    redirect,
    refusals,
    render,
    text_field,
)
from almanac.api.schemas import RowIdPath
from almanac.api.schemas.host import (
    DigestIn,
    HeldDecisionIn,
    HostPluginOut,
    PluginSummaryOut,
    PurgeIn,
    ReadersIn,
    RetentionIn,
    RollbackIn,
    TakedownIn,
    VersionOut,
)
from almanac.platform import accounts, audience, figures
from almanac.platform.accounts.models import InvitationRequest
from almanac.platform.alerts import send as alerts
from almanac.platform.publishing.identity import invitations
from almanac.platform.publishing.publication import listings
from almanac.platform.publishing.publication.rollout_states import host_stops
from almanac.platform.publishing.publication.rollouts import rollouts_in_progress
from almanac.platform.publishing.uploads.check_queue import network_outage
from almanac.platform.publishing.uploads.network import RETRY_WITHOUT_PROBE
from almanac.platform.store import moves
from almanac.platform.store.held import decide_held
from almanac.platform.store.plugins import all_plugins
from almanac.platform.store.retention import purge
from almanac.settings import Settings

router = APIRouter(prefix="/host", include_in_schema=False)

DONE = {
    "approve": "Approved: it runs now, then on its schedule.",
    "restore": "Restored: approved again, its kept records are used again.",
    "pause": "Paused: readers see a not-updating row.",
    "resume": "Resumed.",
    "remove": "Removed: it left the app; its records are kept.",
    "held": "Held decision recorded.",
    "retention": "Retention answer recorded.",
    "purge": "Purged: every record and revision is gone; the run history stays.",
    "takedown": "Taken down: runs stop and readers see the public message.",
    "takedown-restore": "Takedown lifted.",
    "take-off-shelf": "Taken off the shelf.",
    "put-on-shelf": "Back on the shelf.",
    "readers": "Reader list saved.",
    "rollback": "Rolled back: the earlier approved version runs again.",
}


def dagster_asset_url(settings: Settings, plugin_id: str) -> str:
    """The plug-in's asset (`plugins/<id>`) in the Dagster UI, on the service's host name."""
    parts = urlsplit(settings.base_url)
    host = parts.hostname or "127.0.0.1"
    host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme or 'http'}://{host}:{settings.dagster_port}/assets/plugins/{quote(plugin_id)}"


def _list_context(db: Session, ctx: Context, now: datetime, days: int = 1) -> dict[str, object]:
    listed = [PluginSummaryOut.of(s) for s in all_plugins(db.connection())]
    return {
        "figures": figures.operator_figures(db.connection(), days, now),
        "figures_src": f"/api/v1/host/figures?days={days}",
        "figure_spans": [(1, "Last day", "/host?days=1"), (7, "Last week", "/host?days=7")],
        "title": "Host",
        "plugins": listed,
        "network": network_outage(db),
        "network_probe": ctx.settings.network_probe,
        "retry_minutes": int(RETRY_WITHOUT_PROBE.total_seconds() // 60),
        "requests": accounts.open_requests(db),
        "alerts": alerts.sent_alerts(db, limit=20),
        "rollouts": rollouts_in_progress(db),
        "dagster": {p.id: dagster_asset_url(ctx.settings, p.id) for p in listed},
        "done": None,
        "error": None,
    }


def _answered(db: Session, done: str, request_id: int | None, mailed: str) -> str | None:
    """What the list says after an invitation request was answered."""
    row = db.get(InvitationRequest, request_id) if request_id is not None else None
    if row is None or done not in ("invite", "decline"):
        return None
    if done == "decline":
        return f"Declined {row.domain}: nobody was mailed."
    if mailed == "1":
        return f"Invited {row.domain}: {row.email} was mailed."
    return f"Invited {row.domain}, but the mail to {row.email} could not be sent (see the log)."


@router.get("")
def plugins(
    request: Request,
    account: PageOperator,
    db: Db,
    ctx: Context,
    now: Now,
    done: str = "",
    request_id: int | None = None,
    mailed: str = "",
    days: int = 1,
) -> Response:
    """Every plug-in ever registered, removed ones too, with its state and flags; the runs'
    figures of the last day or week; the open invitation requests, oldest first; the alerts
    sent."""
    with refusals():
        context = _list_context(db, ctx, now, days)
    context["done"] = _answered(db, done, request_id, mailed)
    return render(request, "host_list.html", context, account=account)


@router.post("/invitations/{request_id}/{decision}")
def answer_request(
    request: Request,
    request_id: RowIdPath,
    decision: str,
    account: PageOperator,
    form: Form,
    db: Db,
    ctx: Context,
    now: Now,
) -> Response:
    """Invite or decline an open request by the staff routes' domain functions; the invitation
    mail goes once the decision is committed. A request answered meanwhile draws the list again
    with the API's sentence (INVITATION-NOT-OPEN)."""
    try:
        with refusals():
            if decision == "invite":
                made = invitations.invite(db, request_id, account, now, ctx.settings.base_url)
            elif decision == "decline":
                made = invitations.decline(db, request_id, account, now)
            else:
                raise PageRefused(404, "NOT-FOUND", f"no answer {decision!r} to a request")
            db.commit()
    except PageRefused as refusal:
        db.rollback()
        if refusal.status == 404:
            raise
        context = _list_context(db, ctx, now)
        context["error"] = refusal
        return render(request, "host_list.html", context, status=refusal.status, account=account)
    mailed = invitations.send_decision_mail(ctx.mailer, made, now)
    return redirect(
        f"/host?done={decision}&request_id={made.request_id}&mailed={int(mailed)}#invitations"
    )


def _plugin_context(
    db: Session, ctx: Context, plugin_id: str, version_id: int | None
) -> dict[str, object]:
    conn = db.connection()
    with refusals():
        page = HostPluginOut.read(conn, plugin_id)
        shown_version = version_id or page.current_version_id
        version = (
            VersionOut.read(conn, plugin_id, shown_version, ctx.settings.base_url)
            if shown_version is not None
            else None
        )
    return {
        "title": f"{plugin_id} · Host",
        "plugin": page,
        "version": version,
        "readers": audience.reader_list(db, plugin_id),
        "listing": listings.store_listing(db, plugin_id),
        "dagster_url": dagster_asset_url(ctx.settings, plugin_id),
        # The store's own limits, so a browser says them before the server would.
        "limits": {
            "takedown_message": moves.TAKEDOWN_MESSAGE_MAX,
            "rollback_reason": moves.ROLLBACK_REASON_MAX,
        },
        "error": None,
        "done": None,
    }


@router.get("/plugins/{plugin_id}")
def plugin(
    request: Request,
    plugin_id: str,
    account: PageOperator,
    db: Db,
    ctx: Context,
    version: int | None = None,
    done: str | None = None,
) -> Response:
    """The plug-in page; `version` shows another kept version's files and checks."""
    context = _plugin_context(db, ctx, plugin_id, version)
    context["done"] = DONE.get(done or "")
    return render(request, "host_plugin.html", context, account=account)


@router.get("/plugins/{plugin_id}/purge")
def purge_page(
    request: Request, plugin_id: str, account: PageOperator, db: Db, now: Now
) -> Response:
    """The purge's dry run (what it would remove; removes nothing) and the typed-id form."""
    with refusals():
        count = purge(
            db.connection(), plugin_id, typed_id=None, dry_run=True, by=account.email, now=now
        )
    context = {"title": f"Purge {plugin_id}", "plugin_id": plugin_id, "count": count}
    return render(request, "host_purge.html", context, account=account)


Move = Callable[[Connection, Session, str, FormData, str, datetime], None]


def _approve(
    conn: Connection, db: Session, pid: str, form: FormData, by: str, now: datetime
) -> None:
    body = DigestIn(digest=text_field(form, "digest"))
    moves.approve(conn, pid, digest_shown=body.digest, by=by, now=now, removed=False)


def _restore(
    conn: Connection, db: Session, pid: str, form: FormData, by: str, now: datetime
) -> None:
    body = DigestIn(digest=text_field(form, "digest"))
    moves.approve(conn, pid, digest_shown=body.digest, by=by, now=now, removed=True)


def _pause(conn: Connection, db: Session, pid: str, form: FormData, by: str, now: datetime) -> None:
    moves.pause(conn, pid, by=by, now=now)


def _resume(
    conn: Connection, db: Session, pid: str, form: FormData, by: str, now: datetime
) -> None:
    moves.resume(conn, pid, by=by, now=now)


def _remove(
    conn: Connection, db: Session, pid: str, form: FormData, by: str, now: datetime
) -> None:
    moves.remove(conn, pid, by=by, now=now)


def _held(conn: Connection, db: Session, pid: str, form: FormData, by: str, now: datetime) -> None:
    body = HeldDecisionIn.model_validate({"decision": text_field(form, "decision")})
    decide_held(conn, pid, accept=body.decision == "accept-removals", by=by, now=now)


def _retention(
    conn: Connection, db: Session, pid: str, form: FormData, by: str, now: datetime
) -> None:
    body = RetentionIn.model_validate(
        {"answer": text_field(form, "answer"), "terms_read": form.get("terms_read") == "yes"}
    )
    moves.record_retain_answer(conn, pid, body.answer, by=by, now=now)


def _purge(conn: Connection, db: Session, pid: str, form: FormData, by: str, now: datetime) -> None:
    body = PurgeIn(typed_id=text_field(form, "typed_id") or None)
    purge(conn, pid, typed_id=body.typed_id, dry_run=False, by=by, now=now)


def _takedown(
    conn: Connection, db: Session, pid: str, form: FormData, by: str, now: datetime
) -> None:
    body = TakedownIn(
        reason=text_field(form, "reason"),
        note=text_field(form, "note"),
        message=text_field(form, "message"),
    )
    moves.set_taken_down(
        conn, pid, True, reason=body.reason, note=body.note, message=body.message, by=by, now=now
    )
    host_stops(db, pid, "takedown", by=by, now=now)


def _takedown_restore(
    conn: Connection, db: Session, pid: str, form: FormData, by: str, now: datetime
) -> None:
    body = DigestIn(digest=text_field(form, "digest"))
    moves.set_taken_down(conn, pid, False, digest=body.digest, by=by, now=now)


def _off_shelf(
    conn: Connection, db: Session, pid: str, form: FormData, by: str, now: datetime
) -> None:
    moves.set_shelved(conn, pid, True, by=by, now=now)
    host_stops(db, pid, "shelf", by=by, now=now)


def _on_shelf(
    conn: Connection, db: Session, pid: str, form: FormData, by: str, now: datetime
) -> None:
    moves.set_shelved(conn, pid, False, by=by, now=now)


def _readers(
    conn: Connection, db: Session, pid: str, form: FormData, by: str, now: datetime
) -> None:
    # One entry a line (or comma-separated): a person's e-mail, or an organization's id.
    def entries(name: str) -> list[str]:
        return [e for e in text_field(form, name).replace(",", "\n").split() if e]

    body = ReadersIn.model_validate(
        {"emails": entries("emails"), "organizations": entries("organizations")}
    )
    audience.set_reader_list(db, pid, body.emails, body.organizations, by=by, now=now)


def _rollback(
    conn: Connection, db: Session, pid: str, form: FormData, by: str, now: datetime
) -> None:
    body = RollbackIn(version=text_field(form, "version"), reason=text_field(form, "reason"))
    try:
        moves.roll_back(conn, pid, version=body.version, reason=body.reason, by=by, now=now)
    except ValueError as error:  # a reason of nothing but white space, as the API says
        raise PageRefused(422, "REQUEST-INVALID", f"reason: {error}") from None


MOVES: dict[str, Move] = {
    "approve": _approve,
    "restore": _restore,
    "pause": _pause,
    "resume": _resume,
    "remove": _remove,
    "held": _held,
    "retention": _retention,
    "purge": _purge,
    "takedown": _takedown,
    "takedown-restore": _takedown_restore,
    "take-off-shelf": _off_shelf,
    "put-on-shelf": _on_shelf,
    "readers": _readers,
    "rollback": _rollback,
}


@router.post("/plugins/{plugin_id}/{move}")
def make_move(
    request: Request,
    plugin_id: str,
    move: str,
    account: PageOperator,
    form: Form,
    db: Db,
    ctx: Context,
    now: Now,
) -> Response:
    """One move of the plug-in page, recorded with the operator's e-mail; a refusal draws the
    page again with the API's sentence for it (409, 422, ...)."""
    do = MOVES.get(move)
    if do is None:
        raise PageRefused(404, "NOT-FOUND", "there is no such move on this page")
    try:
        with refusals():
            # The request's own transaction, begun with the write lock (deps.get_db).
            do(db.connection(), db, plugin_id, form, account.email, now)
            db.commit()
    except PageRefused as refusal:
        db.rollback()
        if refusal.status == 404:
            raise
        context = _plugin_context(db, ctx, plugin_id, None)
        context["error"] = refusal
        return render(request, "host_plugin.html", context, status=refusal.status, account=account)
    return redirect(f"/host/plugins/{quote(plugin_id)}?done={move}")

"""Alert mail (issue 20; DECISIONS 7, mail through the `Mailer`): at most one a day per
plug-in and cause, to the recipients the operators chose (every operator until they choose)
when a plug-in turns Failing, stays Failing past a day, or is Held; and to the publishing
organization's owners and admins for their own plug-ins when it fails, with the reason and the
source that failed. Every alert sent is kept (plug-in, cause, day, recipients) and listed on
the host."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from almanac.platform.accounts.identity import normalize_email
from almanac.platform.accounts.models import Account, StaffGrant, StaffRole
from almanac.platform.alerts.facts import plugin_facts
from almanac.platform.alerts.models import AlertRecipients, SentAlert
from almanac.platform.alerts.rules import (
    PUBLISHER_CAUSES,
    RETRY_ALLOWANCE,
    STILL_FAILING_AFTER,
    Cause,
    PluginFacts,
    SentFact,
    alert_day,
    causes_due,
    failed_source,
)
from almanac.platform.errors import Invalid
from almanac.platform.mail import Mailer, MailError, MailMessage
from almanac.platform.publishing.identity.roles import manager_addresses
from almanac.platform.publishing.uploads.check_queue import NetworkOutage
from almanac.platform.publishing.uploads.network import RETRY_WITHOUT_PROBE, Probe

log = logging.getLogger(__name__)

MAX_RECIPIENTS = 100
SETTINGS_ROW = 1


# -- the recipients the operators choose -----------------------------------------------------


@dataclass(frozen=True, slots=True)
class Recipients:
    """Who receives the operators' alerts: the chosen addresses (`chosen`), or every operator
    while none were chosen; `addresses` is the list in effect."""

    chosen: bool
    addresses: list[str]
    chosen_by: str | None = None
    chosen_at: datetime | None = None


def operator_addresses(db: Session) -> list[str]:
    """The e-mail addresses of the present operators, in the order they were granted."""
    rows = db.scalars(
        select(Account.email)
        .join(StaffGrant, StaffGrant.account_id == Account.id)
        .where(StaffGrant.role == str(StaffRole.OPERATOR), StaffGrant.revoked_at.is_(None))
        .order_by(StaffGrant.granted_at, StaffGrant.id)
    )
    return list(dict.fromkeys(rows))


def recipients(db: Session) -> Recipients:
    """The operators' alert recipients as they stand."""
    row = db.get(AlertRecipients, SETTINGS_ROW)
    if row is None:
        return Recipients(chosen=False, addresses=operator_addresses(db))
    return Recipients(
        chosen=True, addresses=list(row.addresses), chosen_by=row.chosen_by, chosen_at=row.chosen_at
    )


def choose_recipients(
    db: Session, addresses: Sequence[str] | None, *, by: str, now: datetime
) -> Recipients:
    """An operator chooses the recipients of the operators' alerts: a list of addresses (an
    address given twice, in any case, once; at most `MAX_RECIPIENTS`; an empty list sends the
    operators' alerts to nobody), or None for every operator again. REQUEST-INVALID names a
    malformed address. The caller commits."""
    row = db.get(AlertRecipients, SETTINGS_ROW)
    if addresses is None:
        if row is not None:
            db.delete(row)
            db.flush()
        return recipients(db)
    folded: dict[str, str] = {}
    for index, address in enumerate(addresses):
        try:
            written, key = normalize_email(address)
        except Invalid as exc:
            raise Invalid(f"recipients[{index}]: {exc.detail.removeprefix('email: ')}") from None
        folded.setdefault(key, written)
    if len(folded) > MAX_RECIPIENTS:
        raise Invalid(f"recipients: {len(folded)} addresses; at most {MAX_RECIPIENTS}")
    chosen = list(folded.values())
    if row is None:
        db.add(AlertRecipients(id=SETTINGS_ROW, addresses=chosen, chosen_by=by, chosen_at=now))
    else:
        row.addresses, row.chosen_by, row.chosen_at = chosen, by, now
    db.flush()
    return recipients(db)


# -- the alerts sent ---------------------------------------------------------------------------


def sent_alerts(db: Session, *, plugin_id: str | None = None, limit: int = 100) -> list[SentAlert]:
    """The alerts sent, newest first (of one plug-in when given)."""
    query = select(SentAlert).order_by(SentAlert.id.desc()).limit(max(1, min(limit, 1000)))
    if plugin_id is not None:
        query = query.where(SentAlert.plugin_id == plugin_id)
    return list(db.scalars(query))


def _recent(db: Session, now: datetime) -> dict[str, list[SentFact]]:
    """The alerts sent since the day before yesterday, by plug-in (all the rules look at)."""
    since = now - STILL_FAILING_AFTER - timedelta(days=1)
    found: dict[str, list[SentFact]] = {}
    for row in db.execute(
        select(SentAlert.plugin_id, SentAlert.cause, SentAlert.day, SentAlert.sent_at).where(
            SentAlert.sent_at >= since, SentAlert.plugin_id.is_not(None)
        )
    ):
        found.setdefault(row.plugin_id, []).append(SentFact(Cause(row.cause), row.day, row.sent_at))
    return found


# -- the messages ------------------------------------------------------------------------------


def _at(instant: datetime) -> str:
    return instant.strftime("%Y-%m-%d %H:%M UTC")


def _failure_lines(facts: PluginFacts) -> list[str]:
    run = facts.last_run
    if run is None or run.succeeded:
        return []
    lines = [f"Reason of the last run ({_at(run.ended_at)}): {run.reason or 'none kept'}"]
    source = failed_source(facts)
    if source is not None:
        name, url = source
        lines.append(f"Source that failed: {name}" + (f" ({url})" if url else ""))
    elif run.sources:
        lines.append(
            "Sources it downloaded (the fetcher failed after them): "
            + ", ".join(f"{name} ({url})" for name, url in run.sources)
        )
    return lines


def _subject(facts: PluginFacts, cause: Cause) -> str:
    what = {
        Cause.FAILING: "is Failing",
        Cause.STILL_FAILING: "is still Failing",
        Cause.HELD: "is Held",
    }[cause]
    return f"Almanac: plug-in {facts.plugin_id} {what}"[:300]


def _detail(facts: PluginFacts, cause: Cause) -> str:
    """The alert's text without the greeting or links: what is kept and listed on the host."""
    if cause is Cause.HELD:
        lines = [f"The plug-in {facts.name} ({facts.plugin_id}) is Held: a run would withdraw"]
        lines.append("more records than the held-run limits allow, and none were withdrawn.")
        for h in facts.held:
            lines.append(
                f"Series {h.series}: {h.count} records, first missing "
                + ", ".join(h.first_dates[:5])
            )
        lines.append("An operator chooses Accept removals or Keep them at the host.")
        return "\n".join(lines)
    since = facts.failing_since
    head = f"The plug-in {facts.name} ({facts.plugin_id}) is Failing"
    if since is not None:
        head += f" since {_at(since)}"
    lines = [head + "."]
    lines += _failure_lines(facts)
    if cause is Cause.STILL_FAILING:
        lines.append("It has been Failing for more than a day.")
    else:
        minutes = int(RETRY_ALLOWANCE.total_seconds() // 60)
        lines.append(
            f"A failed run is retried {minutes} minutes later, then waits for its next "
            "scheduled time; readers see the could-not-refresh row until a run succeeds."
        )
    return "\n".join(lines)


def _message(to: str, subject: str, detail: str, link: str | None) -> MailMessage:
    body = detail + (f"\n\n{link}\n" if link else "\n")
    return MailMessage(to=to, subject=subject, body=body)


# -- sending -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AlertSent:
    """What one evaluation sent: the plug-in (None for the service's own), the cause and to
    whom."""

    plugin_id: str | None
    cause: Cause
    recipients: list[str]
    undelivered: list[str]


@dataclass(frozen=True, slots=True)
class _Alert:
    """One alert to keep and mail: `to` holds each recipient with the link its mail carries."""

    plugin_id: str | None
    cause: Cause
    subject: str
    detail: str
    to: dict[str, str | None]


def _keep(sessions: sessionmaker[Session], alert: _Alert, now: datetime) -> int | None:
    """Keep the alert before sending it; None when another evaluation kept it today."""
    with sessions() as db:
        row = SentAlert(
            plugin_id=alert.plugin_id,
            cause=str(alert.cause),
            day=alert_day(now),
            subject=alert.subject,
            detail=alert.detail,
            recipients=list(alert.to),
            undelivered=[],
            sent_at=now,
        )
        db.add(row)
        try:
            db.commit()
        except IntegrityError:
            db.rollback()
            return None
        return row.id


def _keep_and_mail(
    sessions: sessionmaker[Session], mailer: Mailer, alert: _Alert, now: datetime
) -> AlertSent | None:
    """Keep the alert first (so a second evaluation the same day sends nothing), then mail it
    to each recipient; an address the mail could not be handed to is logged and kept as
    undelivered. None when it was kept today already."""
    alert_id = _keep(sessions, alert, now)
    if alert_id is None:
        return None
    undelivered: list[str] = []
    for address, link in alert.to.items():
        try:
            mailer.send(_message(address, alert.subject, alert.detail, link), now)
        except MailError as error:
            log.warning("alert %r to %s not sent: %s", alert.subject, address, error)
            undelivered.append(address)
    if undelivered:
        with sessions() as db, db.begin():
            kept = db.get(SentAlert, alert_id)
            assert kept is not None
            kept.undelivered = undelivered
    return AlertSent(alert.plugin_id, alert.cause, list(alert.to), undelivered)


def send_alerts(
    sessions: sessionmaker[Session],
    mailer: Mailer,
    now: datetime,
    *,
    base_url: str | None = None,
) -> list[AlertSent]:
    """Evaluate the alerts of every plug-in ever approved at `now` and send those due: each is
    kept first (so a second evaluation the same day sends nothing), then mailed to each
    recipient; an address the mail could not be handed to is logged and kept as undelivered.
    `sessions` make write sessions (the embedded default's write lock)."""
    with sessions() as db:
        every = plugin_facts(db.connection())
        recent = _recent(db, now)
        operators = recipients(db).addresses
        managers: dict[int, list[str]] = {}
        plan: list[tuple[PluginFacts, Cause, list[str], list[str]]] = []
        for facts in every.values():
            for cause in causes_due(facts, recent.get(facts.plugin_id, []), now):
                publishers: list[str] = []
                org = facts.publisher_organization_id
                if cause in PUBLISHER_CAUSES and org is not None:
                    if org not in managers:
                        managers[org] = manager_addresses(db, org)
                    publishers = managers[org]
                plan.append((facts, cause, list(operators), list(publishers)))
    done: list[AlertSent] = []
    for facts, cause, to_operators, to_publishers in plan:
        # Only the operators' mail links the host's page of the plug-in.
        host_link = f"{base_url}/host/plugins/{facts.plugin_id}" if base_url else None
        to = {
            address: host_link if address in to_operators else None
            for address in [*to_operators, *to_publishers]
        }
        alert = _Alert(facts.plugin_id, cause, _subject(facts, cause), _detail(facts, cause), to)
        sent = _keep_and_mail(sessions, mailer, alert, now)
        if sent is not None:
            done.append(sent)
    return done


# -- the service's own network -----------------------------------------------------------------


def network_alert_detail(outage: NetworkOutage, probe: Probe | None) -> str:
    """The network alert's text: what could not run since when, the downloader's words, the
    probe, and when the checks run again (the same words the host's notice shows)."""
    lines = [
        f"Almanac could not reach the network: {outage.checks} upload "
        f"{'check' if outage.checks == 1 else 'checks'} could not run since {_at(outage.since)}.",
        f"The newest ({_at(outage.last_at)}): {outage.last_message}",
    ]
    if probe is not None:
        lines.append(
            f"The probe {probe.url} (ALMANAC_NETWORK_PROBE) did not answer either"
            + (f": {probe.reason}" if probe.reason else ".")
        )
        lines.append("The checks run again by themselves as soon as the probe answers.")
    else:
        minutes = int(RETRY_WITHOUT_PROBE.total_seconds() // 60)
        lines.append(
            "No probe is set (ALMANAC_NETWORK_PROBE, an https URL that always answers); the "
            f"checks run again by themselves every {minutes} minutes."
        )
    lines.append(
        "Publishers see that the service could not reach the network, not that their URLs "
        "failed. Check the machine's route out, its name servers and any firewall."
    )
    return "\n".join(lines)


def send_network_alert(
    sessions: sessionmaker[Session],
    mailer: Mailer,
    now: datetime,
    outage: NetworkOutage,
    probe: Probe | None,
    *,
    base_url: str | None = None,
) -> AlertSent | None:
    """Tell the operators' alert recipients that the service's network is down (checks could
    not run), at most once a UTC day: kept first in `alerts_sent` with no plug-in (a second
    evaluation the same day sends nothing), then mailed. None when it was sent today already."""
    with sessions() as db:
        sent = db.scalar(
            select(SentAlert.id).where(
                SentAlert.plugin_id.is_(None),
                SentAlert.cause == str(Cause.NETWORK),
                SentAlert.day == alert_day(now),
            )
        )
        if sent is not None:
            return None
        to = recipients(db).addresses
    link = f"{base_url}/host" if base_url else None
    alert = _Alert(
        plugin_id=None,
        cause=Cause.NETWORK,
        subject="Almanac: the service could not reach the network",
        detail=network_alert_detail(outage, probe),
        to=dict.fromkeys(to, link),
    )
    return _keep_and_mail(sessions, mailer, alert, now)

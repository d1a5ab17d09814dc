"""A reader's webhook endpoints (issue 38, Subscriptions): register an https address for
plug-ins they may read, list, pause, resume, rotate the secret, delete. The secret is shown
once; after a rotation the previous one keeps signing beside the new for 24 hours. An
organization's owners and admins do the same with its endpoints, for plug-ins the
organization may see, for its members' use; its other members may not."""

from __future__ import annotations

import base64
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol
from urllib.parse import urlsplit

from sqlalchemy import Row, and_, delete, func, insert, select, update
from sqlalchemy.orm import Session

from almanac.platform.accounts.models import Account
from almanac.platform.audience.visibility import (
    ReadablePlugin,
    not_found,
    organization_plugins,
    visible_plugins,
)
from almanac.platform.errors import Invalid, NotFound
from almanac.platform.publishing.identity.roles import require_manager
from almanac.platform.webhooks.tables import endpoints, subscriptions

MAX_ENDPOINTS = 20
MAX_URL = 2000
MAX_DESCRIPTION = 200
MAX_PLUGINS = 100
PREVIOUS_SECRET_KEPT = timedelta(hours=24)
SECRET_PREFIX = "whsec_"
"""Standard Webhooks' secret form: the prefix and base64 of the key (24 random bytes)."""


class EndpointAddresses(Protocol):
    """Registration's checks of an endpoint that ask the world (an adapter)."""

    def check(self, host: str, port: int) -> None:
        """Resolve `host` and raise Invalid unless every address is public (the download
        rules' address policy)."""
        ...

    def probe(self, url: str, secret: str, now: datetime) -> None:
        """Post a signed test message to the checked `url` and raise Invalid if it answers
        with a redirect."""
        ...


@dataclass(frozen=True, slots=True)
class EndpointView:
    id: int
    organization_id: int | None
    url: str
    description: str
    plugins: tuple[str, ...]
    paused: bool
    disabled_at: datetime | None
    created_at: datetime
    previous_secret_until: datetime | None


@dataclass(frozen=True, slots=True)
class EndpointWithSecret:
    """An endpoint just registered or rotated, with the secret shown this once."""

    endpoint: EndpointView
    secret: str


def new_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(24)).decode("ascii")


def checked_url(url: str, addresses: EndpointAddresses) -> str:
    """Issue 38: an endpoint is an https address of a named host (no user information, no IP
    address), every address of which is public (Source download rules 2 to 4)."""
    url = url.strip()
    if len(url) > MAX_URL:
        raise Invalid(f"url: at most {MAX_URL} characters")
    try:
        parts = urlsplit(url)
        port = parts.port or 443
    except ValueError as exc:
        raise Invalid(f"url: not an address ({exc})") from exc
    if parts.scheme != "https":
        raise Invalid("url: only https addresses receive webhooks; give an https:// address")
    if parts.username is not None or parts.password is not None:
        raise Invalid("url: leave out the user name and password")
    host = parts.hostname
    if not host:
        raise Invalid("url: the address has no host")
    addresses.check(host, port)
    return url


def _view(db: Session, row: Row[Any]) -> EndpointView:
    plugin_ids = db.execute(
        select(subscriptions.c.plugin_id)
        .where(subscriptions.c.endpoint_id == row.id)
        .order_by(subscriptions.c.plugin_id)
    ).scalars()
    return EndpointView(
        id=row.id,
        organization_id=row.organization_id,
        url=row.url,
        description=row.description,
        plugins=tuple(plugin_ids),
        paused=row.paused,
        disabled_at=row.disabled_at,
        created_at=row.created_at,
        previous_secret_until=row.previous_until,
    )


MANAGE = "manage its webhook endpoints"


def _checked_plugins(
    db: Session, account: Account, organization_id: int | None, plugin_ids: Sequence[str]
) -> list[str]:
    wanted = sorted(set(plugin_ids))
    if not wanted:
        raise Invalid("plugins: name at least one plug-in whose events the endpoint receives")
    if len(wanted) > MAX_PLUGINS:
        raise Invalid(f"plugins: at most {MAX_PLUGINS} plug-ins an endpoint")
    readable = {p.id for p in may_see(db, account.id, organization_id, wanted)}
    who = "the organization may see" if organization_id else "you may read"
    for plugin_id in wanted:
        if plugin_id not in readable:
            raise Invalid(f"plugins: {not_found(plugin_id)} {who}")
    return wanted


def may_see(
    db: Session, account_id: int, organization_id: int | None, plugin_ids: Sequence[str]
) -> list[ReadablePlugin]:
    """Of `plugin_ids`, those an endpoint may receive events of: what its reader may read, or
    what its organization may see (asked at registration and again at each delivery)."""
    if organization_id is not None:
        return organization_plugins(db, organization_id, plugin_ids)
    account = db.get(Account, account_id)
    return [] if account is None else visible_plugins(db, account, among=plugin_ids)


def register(
    db: Session,
    account: Account,
    *,
    url: str,
    plugin_ids: Sequence[str],
    description: str,
    addresses: EndpointAddresses,
    now: datetime,
    organization_id: int | None = None,
) -> EndpointWithSecret:
    """Issue 38, Subscriptions: a new endpoint of the reader for plug-ins they may read, at
    most 20 a reader; or, by an owner or admin, of the organization for plug-ins it may see,
    at most 20 an organization. Its secret is returned this once."""
    if organization_id is not None:
        require_manager(db, organization_id, account, MANAGE)
    if len(description) > MAX_DESCRIPTION:
        raise Invalid(f"description: at most {MAX_DESCRIPTION} characters")
    count = db.execute(select(func.count()).where(_owner_is(account, organization_id))).scalar_one()
    if count >= MAX_ENDPOINTS:
        who = "an organization" if organization_id else "a reader"
        raise Invalid(f"{MAX_ENDPOINTS} endpoints are the most {who} may have: delete one first")
    wanted = _checked_plugins(db, account, organization_id, plugin_ids)
    checked = checked_url(url, addresses)
    secret = new_secret()
    addresses.probe(checked, secret, now)
    endpoint_id = db.execute(
        insert(endpoints)
        .values(
            account_id=account.id,
            organization_id=organization_id,
            url=checked,
            description=description.strip(),
            secret=secret,
            paused=False,
            created_at=now,
        )
        .returning(endpoints.c.id)
    ).scalar_one()
    db.execute(
        insert(subscriptions), [{"endpoint_id": endpoint_id, "plugin_id": p} for p in wanted]
    )
    return EndpointWithSecret(endpoint(db, account, endpoint_id), secret)


def _owner_is(account: Account, organization_id: int | None) -> Any:
    if organization_id is not None:
        return endpoints.c.organization_id == organization_id
    return and_(endpoints.c.account_id == account.id, endpoints.c.organization_id.is_(None))


def _owned(db: Session, account: Account, endpoint_id: int) -> Row[Any]:
    """The endpoint if it is the reader's own, or its organization's and the reader one of
    its owners or admins (FORBIDDEN to its other members); NOT-FOUND to anyone else."""
    row = db.execute(select(endpoints).where(endpoints.c.id == endpoint_id)).first()
    if row is not None and row.organization_id is not None:
        try:
            require_manager(db, row.organization_id, account, MANAGE)
        except NotFound:
            row = None
    if row is None or (row.organization_id is None and row.account_id != account.id):
        raise NotFound(f"no webhook endpoint {endpoint_id}")
    return row


def endpoint(db: Session, account: Account, endpoint_id: int) -> EndpointView:
    """One of the reader's endpoints, or of an organization they manage; NOT-FOUND for
    anyone else's."""
    return _view(db, _owned(db, account, endpoint_id))


def account_endpoints(
    db: Session, account: Account, organization_id: int | None = None
) -> list[EndpointView]:
    """The reader's endpoints, or the organization's (to its owners and admins), oldest
    first."""
    if organization_id is not None:
        require_manager(db, organization_id, account, MANAGE)
    rows = db.execute(
        select(endpoints).where(_owner_is(account, organization_id)).order_by(endpoints.c.id)
    ).all()
    return [_view(db, row) for row in rows]


def set_paused(
    db: Session, account: Account, endpoint_id: int, paused: bool, now: datetime
) -> EndpointView:
    """Pause (no event is queued or sent) or resume; resuming a disabled endpoint enables it
    again with its failures forgotten."""
    _owned(db, account, endpoint_id)
    values: dict[str, object] = {"paused": paused}
    if not paused:
        values.update(disabled_at=None, failing_since=None)
    db.execute(update(endpoints).where(endpoints.c.id == endpoint_id).values(**values))
    return endpoint(db, account, endpoint_id)


def rotate_secret(
    db: Session, account: Account, endpoint_id: int, now: datetime
) -> EndpointWithSecret:
    """A new secret, returned this once; the previous one keeps signing beside it for 24
    hours, so receivers can change theirs without losing a message."""
    row = _owned(db, account, endpoint_id)
    secret = new_secret()
    db.execute(
        update(endpoints)
        .where(endpoints.c.id == endpoint_id)
        .values(
            secret=secret,
            previous_secret=row.secret,
            previous_until=now + PREVIOUS_SECRET_KEPT,
        )
    )
    return EndpointWithSecret(endpoint(db, account, endpoint_id), secret)


def delete_endpoint(db: Session, account: Account, endpoint_id: int) -> None:
    """The endpoint, its plug-ins and its delivery log are gone."""
    _owned(db, account, endpoint_id)
    db.execute(delete(endpoints).where(endpoints.c.id == endpoint_id))


def signing_secrets(
    secret: str, previous: str | None, until: datetime | None, now: datetime
) -> tuple[str, ...]:
    """The secrets a message is signed with at `now`: the current one, and the previous one
    while it is kept."""
    kept = previous is not None and until is not None and now < until
    return (secret, previous) if kept and previous else (secret,)

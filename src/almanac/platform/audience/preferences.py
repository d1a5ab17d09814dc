"""The synced preference `plugins.<id>.shown` (true, false, or null for no choice) and the
organization default ("Reader presentation rules" 1): for a private plug-in an owner or admin
of a listed organization turns it on (or off) for the members who made no choice; a member's
own choice wins. Nothing is pushed onto days: a plug-in with no choice and no default is not
shown. Turning a plug-in on is installing it: a plug-in published through the portal and no
longer in the store is not newly installed ("Listing of a published plug-in", Unpublish)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import BindParameter, Integer, Table, bindparam, delete, insert, select, union
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from almanac.platform.accounts.models import Account
from almanac.platform.accounts.organizations import (
    MANAGERS,
    current_membership,
    in_audience_as_member,
)
from almanac.platform.accounts.tables import memberships
from almanac.platform.audience.tables import organization_shown_defaults as defaults
from almanac.platform.audience.tables import reader_list_organizations as listed_organizations
from almanac.platform.audience.tables import shown_changes as shown_history
from almanac.platform.audience.tables import shown_preferences as choices
from almanac.platform.audience.visibility import (
    ReadablePlugin,
    not_found,
    readable_plugin,
    visible_plugins,
)
from almanac.platform.errors import Conflict, Forbidden, Invalid, NotFound
from almanac.platform.store.installable import not_newly_installable

SHOWN_KEY = re.compile(r"plugins\.([a-z][a-z0-9-]{1,47})\.shown")


def shown_key(plugin_id: str) -> str:
    return f"plugins.{plugin_id}.shown"


@dataclass(frozen=True, slots=True)
class Shown:
    """A reader's `shown` for one plug-in: their own choice, their organizations' default, and
    what that makes of it."""

    choice: bool | None
    organization_default: bool | None

    @property
    def shown(self) -> bool:
        if self.choice is not None:
            return self.choice
        return bool(self.organization_default)


# Both statements of `shown_of` are built once and run with the account and ids bound: building
# them anew cost more than running them (`visibility` does the same).
_ACCOUNT_ID = bindparam("shown_account_id", type_=Integer)
_IDS: BindParameter[list[str]] = bindparam("shown_plugin_ids", expanding=True)
_OWN = select(choices.c.plugin_id, choices.c.shown).where(
    choices.c.account_id == _ACCOUNT_ID, choices.c.plugin_id.in_(_IDS)
)
_OFFERED = (
    select(defaults.c.plugin_id, defaults.c.shown)
    .join(
        listed_organizations,
        (listed_organizations.c.plugin_id == defaults.c.plugin_id)
        & (listed_organizations.c.organization_id == defaults.c.organization_id),
    )
    .join(memberships, memberships.c.organization_id == defaults.c.organization_id)
    .where(defaults.c.plugin_id.in_(_IDS), in_audience_as_member(_ACCOUNT_ID))
)


def shown_of(db: Session, account: Account, readable: Iterable[ReadablePlugin]) -> dict[str, Shown]:
    """The `shown` of each readable plug-in for the account. Defaults count only on private
    plug-ins and only from organizations that are on the list and where the account is an
    active member; when such organizations disagree, one that turns it on wins, since a
    default is an offer to show and the member can still turn it off."""
    plugins = list(readable)
    ids = [p.id for p in plugins]
    own: dict[str, bool] = {}
    if ids:
        own = dict(db.execute(_OWN, {_ACCOUNT_ID.key: account.id, _IDS.key: ids}).all())
    private = [p.id for p in plugins if p.audience == "private"]
    offered: dict[str, bool] = {}
    if private:
        rows = db.execute(_OFFERED, {_ACCOUNT_ID.key: account.id, _IDS.key: private})
        for plugin_id, shown in rows:
            offered[plugin_id] = offered.get(plugin_id, False) or bool(shown)
    return {pid: Shown(own.get(pid), offered.get(pid)) for pid in ids}


_MAY_SHOW = union(
    select(choices.c.plugin_id).where(
        choices.c.account_id == _ACCOUNT_ID, choices.c.shown.is_(True)
    ),
    select(defaults.c.plugin_id)
    .join(memberships, memberships.c.organization_id == defaults.c.organization_id)
    .where(defaults.c.shown.is_(True), in_audience_as_member(_ACCOUNT_ID)),
)


def may_show(db: Session, account: Account) -> set[str]:
    """The plug-ins whose `shown` can be true for the account (`shown_of` decides): those it
    turned on itself and those an organization it is an active member of shows by default.
    It shows no other: a reader's days and feeds read these alone, however many plug-ins
    there are to read (issue 33)."""
    return set(db.scalars(_MAY_SHOW, {_ACCOUNT_ID.key: account.id}))


def chosen_shown(db: Session, account: Account) -> set[str]:
    """The plug-ins the account itself turned `shown` on for: of a public plug-in, whose
    `shown` no organization default decides (`shown_of`), the ones it shows; one statement
    however many plug-ins there are (the store marks the installed ones among thousands)."""
    return set(
        db.scalars(
            select(choices.c.plugin_id).where(
                choices.c.account_id == account.id, choices.c.shown.is_(True)
            )
        )
    )


def _upsert(db: Session, table: Table, values: dict[str, Any], keys: tuple[str, ...]) -> None:
    dialect = db.get_bind().dialect.name
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    statement = insert(table).values(**values)
    statement = statement.on_conflict_do_update(
        index_elements=list(keys),
        set_={k: statement.excluded[k] for k in values if k not in keys},
    )
    db.execute(statement)


def set_shown(
    db: Session, account: Account, changes: Mapping[str, bool | None], now: datetime
) -> dict[str, Shown]:
    """Set (true, false) or clear (null) the account's own `plugins.<id>.shown` choices; a key
    of another form is REQUEST-INVALID, a plug-in the account may not read NOT-FOUND (the
    same as an unknown id). Each choice that changes is written to the history of shown
    choices in the same transaction (before and after, never whose)."""
    wanted: dict[str, bool | None] = {}
    for key, value in changes.items():
        found = SHOWN_KEY.fullmatch(key)
        if found is None:
            raise Invalid(f"{key}: preferences are named plugins.<id>.shown")
        if value is not None and not isinstance(value, bool):
            raise Invalid(f"{key}: give true, false or null")
        wanted[found.group(1)] = value
    readable = {p.id: p for p in visible_plugins(db, account)}
    for plugin_id in wanted:
        if plugin_id not in readable:
            raise not_found(plugin_id)
    turned_on = [p for p, value in wanted.items() if value is True]
    unlisted = not_newly_installable(db, turned_on)
    if unlisted:
        installed = shown_of(db, account, (readable[p] for p in unlisted))
        for plugin_id in sorted(unlisted):
            if not installed[plugin_id].shown:
                raise Conflict(
                    f"{shown_key(plugin_id)}: {plugin_id} is not in the store; only its "
                    "present readers keep it",
                    code="STORE-NOT-LISTED",
                )
    before: dict[str, bool] = {
        plugin_id: shown
        for plugin_id, shown in db.execute(
            select(choices.c.plugin_id, choices.c.shown).where(
                choices.c.account_id == account.id, choices.c.plugin_id.in_(list(wanted))
            )
        )
    }
    changed = [
        {"plugin_id": p, "changed_at": now, "shown_before": before.get(p), "shown_after": value,
         "baseline": False}
        for p, value in wanted.items()
        if before.get(p) is not value
    ]  # fmt: skip
    if changed:
        db.execute(insert(shown_history), changed)
    for plugin_id, value in wanted.items():
        if value is None:
            db.execute(
                delete(choices).where(
                    choices.c.account_id == account.id, choices.c.plugin_id == plugin_id
                )
            )
        else:
            _upsert(
                db,
                choices,
                {"account_id": account.id, "plugin_id": plugin_id, "shown": value, "set_at": now},
                ("account_id", "plugin_id"),
            )
    return shown_of(db, account, (readable[p] for p in wanted))


def set_organization_default(
    db: Session,
    account: Account,
    organization_id: int,
    plugin_id: str,
    shown: bool | None,
    now: datetime,
) -> None:
    """An owner or admin of a listed organization sets (or clears, with null) the `shown` of a
    private plug-in for the members who made no choice. NOT-FOUND when the account may not
    read the plug-in or is no member of the organization; FORBIDDEN for a member who is not
    owner or admin; AUDIENCE-NOT-PRIVATE for a public plug-in; AUDIENCE-ORGANIZATION-NOT-LISTED
    when the organization is not on the plug-in's list."""
    plugin = readable_plugin(db, account, plugin_id)
    mine = current_membership(db, organization_id, account.id)
    if mine is None:
        raise NotFound(f"no organization {organization_id}")
    if mine.role not in MANAGERS:
        raise Forbidden("only owners and admins set what their organization's members see")
    if plugin.audience != "private":
        raise Conflict(
            f"plug-in {plugin_id} is public: each reader turns it on for themselves",
            code="AUDIENCE-NOT-PRIVATE",
        )
    listed = db.execute(
        select(listed_organizations.c.organization_id).where(
            listed_organizations.c.plugin_id == plugin_id,
            listed_organizations.c.organization_id == organization_id,
        )
    ).first()
    if listed is None:
        raise Forbidden(
            f"organization {organization_id} is not on the reader list of plug-in {plugin_id}",
            code="AUDIENCE-ORGANIZATION-NOT-LISTED",
        )
    if shown is None:
        db.execute(
            delete(defaults).where(
                defaults.c.organization_id == organization_id, defaults.c.plugin_id == plugin_id
            )
        )
        return
    _upsert(
        db,
        defaults,
        {
            "organization_id": organization_id,
            "plugin_id": plugin_id,
            "shown": shown,
            "set_by": account.id,
            "set_at": now,
        },
        ("organization_id", "plugin_id"),
    )

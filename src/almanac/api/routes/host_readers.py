"""The host's part of the audience: the reader list of a private plug-in ("Authentication" 1;
"Limits": 500 people and 100 organizations), for service operators."""

from __future__ import annotations

from fastapi import APIRouter

from almanac.api.deps import Db, Now, Operator
from almanac.api.schemas.host import ReadersIn, ReadersOut
from almanac.platform import audience
from almanac.platform.store.plugins import UnknownPlugin, plugin_status

router = APIRouter(prefix="/host/plugins", tags=["host"])


@router.get("/{plugin_id}/readers", response_model=ReadersOut)
def readers(plugin_id: str, operator: Operator, db: Db) -> ReadersOut:
    """The reader list of a plug-in: people by e-mail, organizations by id."""
    try:
        plugin_status(db.connection(), plugin_id)
    except UnknownPlugin:
        raise audience.visibility.not_found(plugin_id) from None
    return ReadersOut.of(audience.reader_list(db, plugin_id))


@router.put("/{plugin_id}/readers", response_model=ReadersOut)
def set_readers(
    plugin_id: str, body: ReadersIn, operator: Operator, db: Db, now: Now
) -> ReadersOut:
    """Replace the reader list of a private plug-in whole; the move is kept in its history."""
    found = audience.set_reader_list(
        db, plugin_id, body.emails, body.organizations, by=operator.email, now=now
    )
    db.commit()
    return ReadersOut.of(found)

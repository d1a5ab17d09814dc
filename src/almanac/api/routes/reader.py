"""The reader API (DECISIONS 6): the plug-ins a reader may read, the `plugins.<id>.shown`
preference and the organization default, the rendered days of the shown plug-ins (at most 62),
a plug-in's raw records with their revisions, and reports. A plug-in the reader may not read
is NOT-FOUND, the same answer as an unknown id ("Other error behaviour" 5)."""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query, status
from fastapi.responses import JSONResponse, Response

from almanac.api.deps import CurrentAccount, Db, Now
from almanac.api.schemas import RowIdPath
from almanac.api.schemas.pictures import DaysAsOfOut, SeriesChartOut
from almanac.api.schemas.reader import (
    Language,
    OrganizationDefaultIn,
    OrganizationDefaultOut,
    PreferencesIn,
    PreferencesOut,
    ReaderPluginOut,
    ReportIn,
    ReportOut,
)
from almanac.platform import audience
from almanac.platform.accounts import Invalid
from almanac.platform.audience import Shown, compact_json
from almanac.platform.audience.days import RawRecord
from almanac.platform.audience.pictures import read_days_as_of, reader_series_chart
from almanac.platform.store.installable import not_newly_installable

router = APIRouter(prefix="/reader", tags=["reader"])

AsOf = Annotated[
    datetime | None,
    Query(description="A moment with its zone: the records as they stood then."),
]
ReaderToday = Annotated[
    date | None,
    Query(description="The reader's today; the UTC date of the request when left out."),
]
FromDate = Annotated[date, Query(alias="from", description="First day, YYYY-MM-DD.")]
ToDate = Annotated[date, Query(alias="to", description="Last day, included; at most 62 days.")]


@router.get("/plugins", response_model=list[ReaderPluginOut])
def plugins(account: CurrentAccount, db: Db, language: Language = "en") -> list[ReaderPluginOut]:
    """Every plug-in the reader may read, by id, with its `shown` preference."""
    audience.check_language(language)
    readable = audience.visible_plugins(db, account)
    shown = audience.shown_of(db, account, readable)
    unlisted = not_newly_installable(db, [p.id for p in readable])
    return [
        ReaderPluginOut.of(p, shown[p.id], language, unlisted=p.id in unlisted) for p in readable
    ]


@router.get("/plugins/{plugin_id}", response_model=ReaderPluginOut)
def plugin(
    plugin_id: str, account: CurrentAccount, db: Db, language: Language = "en"
) -> ReaderPluginOut:
    """One plug-in the reader may read; NOT-FOUND otherwise, as for an unknown id."""
    audience.check_language(language)
    readable = audience.readable_plugin(db, account, plugin_id)
    shown = audience.shown_of(db, account, [readable])
    unlisted = not_newly_installable(db, [readable.id])
    return ReaderPluginOut.of(
        readable, shown[readable.id], language, unlisted=readable.id in unlisted
    )


def _shown(db: Db, account: CurrentAccount) -> dict[str, Shown]:
    """The reader's `shown` of every plug-in they may read."""
    return audience.shown_of(db, account, audience.visible_plugins(db, account))


@router.get("/preferences", response_model=PreferencesOut)
def preferences(account: CurrentAccount, db: Db) -> PreferencesOut:
    """The reader's synced `plugins.<id>.shown` choices (null: no choice)."""
    return PreferencesOut.of(_shown(db, account))


@router.put("/preferences", response_model=PreferencesOut)
def set_preferences(
    body: PreferencesIn, account: CurrentAccount, db: Db, now: Now
) -> PreferencesOut:
    """Set or clear (null) the named choices; the others stay as they are."""
    audience.set_shown(db, account, body.preferences, now)
    db.commit()
    return PreferencesOut.of(_shown(db, account))


@router.put(
    "/organizations/{organization_id}/plugins/{plugin_id}/shown",
    response_model=OrganizationDefaultOut,
)
def set_organization_default(
    organization_id: RowIdPath,
    plugin_id: str,
    body: OrganizationDefaultIn,
    account: CurrentAccount,
    db: Db,
    now: Now,
) -> OrganizationDefaultOut:
    """An owner or admin of an organization on a private plug-in's reader list turns it on
    (or off; null clears) for the members who made no choice of their own."""
    audience.set_organization_default(db, account, organization_id, plugin_id, body.shown, now)
    db.commit()
    return OrganizationDefaultOut.of(organization_id, plugin_id, body.shown)


@router.get(
    "/days",
    responses={
        200: {
            "description": "Per shown plug-in, its days in the rows of "
            "tests/conformance/days/schema.json.",
        }
    },
)
def days(
    account: CurrentAccount,
    db: Db,
    now: Now,
    first: FromDate,
    last: ToDate,
    language: Language = "en",
    today: ReaderToday = None,
    as_of: AsOf = None,
) -> Response:
    """The days `from`..`to` (at most 62) of every plug-in the reader shows, drawn by the
    Reader presentation rules for `today` and `language`; with `as_of`, drawn from the records
    as they stood at that moment, each plug-in listing the records of those days revised
    since (when, from what to what, which run)."""
    reader_today = today or now.date()
    if as_of is not None:
        stood = read_days_as_of(
            db, account, first=first, last=last, today=reader_today, language=language,
            as_of=as_of,
        )  # fmt: skip
        out = DaysAsOfOut.of(
            stood, first=first, last=last, today=reader_today, language=language, as_of=as_of
        )
        return JSONResponse(out.model_dump(mode="json", by_alias=True))
    drawn = audience.read_days_json(
        db, account, first=first, last=last, today=reader_today, language=language
    )
    head = compact_json(
        {
            "from": first.isoformat(),
            "to": last.isoformat(),
            "today": reader_today.isoformat(),
            "language": language,
        }
    )
    # Each plug-in's days come encoded (and mostly kept from an earlier read): the answer is
    # joined from bytes, the same bytes a JSONResponse of the whole object would write, in one
    # join, since every partial join would copy the days (some 500 KB for 10 plug-ins) again.
    parts = [head[:-1], b',"plugins":[']
    for n, d in enumerate(drawn):
        entry = compact_json({"plugin": d.plugin, "status": d.status, "notice": d.notice})
        parts += [b"{" if n == 0 else b",{", entry[1:-1], b',"days":', d.days_json, b"}"]
    parts.append(b"]}")
    return Response(b"".join(parts), media_type="application/json")


def _raw(entry: RawRecord) -> dict[str, Any]:
    return {
        "record": entry.record,
        "digest": entry.digest,
        "since": entry.since.isoformat(),
        "revisions": [
            {
                "record": r.record,
                "withdrawn": r.withdrawn,
                "digest": r.digest,
                "valid_from": r.valid_from.isoformat(),
                "valid_to": r.valid_to.isoformat() if r.valid_to else None,
            }
            for r in entry.revisions
        ],
    }


@router.get("/plugins/{plugin_id}/records")
def records(
    plugin_id: str,
    account: CurrentAccount,
    db: Db,
    first: FromDate,
    last: ToDate,
    as_of: AsOf = None,
) -> JSONResponse:
    """The plug-in's stored records dated `from`..`to` (at most 62 days), as they stand or as
    they stood at `as_of`, each with every content it had, oldest first."""
    if as_of is not None and as_of.tzinfo is None:
        raise Invalid("as_of: give a moment with its time zone, such as 2026-06-01T12:00Z")
    found = audience.plugin_records(db, account, plugin_id, first=first, last=last, as_of=as_of)
    return JSONResponse(
        {
            "plugin": found.plugin,
            "from": first.isoformat(),
            "to": last.isoformat(),
            "as_of": as_of.isoformat() if as_of else None,
            "notice": found.notice,
            "records": [_raw(r) for r in found.records],
        }
    )


@router.get("/plugins/{plugin_id}/series/{series}/chart", response_model=SeriesChartOut)
def chart(
    plugin_id: str,
    series: str,
    account: CurrentAccount,
    db: Db,
    now: Now,
    span: Annotated[str, Query(alias="range", description="month, year or all.")] = "year",
    field: Annotated[
        str | None, Query(description="The field drawn; the change field when left out.")
    ] = None,
    language: Language = "en",
    today: ReaderToday = None,
) -> SeriesChartOut:
    """A value series' field over the range, each day filled as the reader's days fill it
    (rule 5: values in force and the last rate marked as such), or an event series' happened
    values as steps with its scheduled events ahead (rule 6)."""
    audience.check_language(language)
    drawn = reader_series_chart(
        db, account, plugin_id, series, field=field, span=span, today=today or now.date(),
        language=language,
    )  # fmt: skip
    return SeriesChartOut.model_validate(drawn)


@router.post(
    "/plugins/{plugin_id}/reports",
    status_code=status.HTTP_201_CREATED,
    response_model=ReportOut,
)
def report(plugin_id: str, body: ReportIn, account: CurrentAccount, db: Db, now: Now) -> ReportOut:
    """A reader reports a plug-in they may read: wrong-data, offensive, impersonating,
    data-it-may-not-use, stopped-working or other, with a note and the day."""
    view = audience.file_report(
        db, account, plugin_id, category=body.category, note=body.note, day=body.day, now=now
    )
    db.commit()
    return ReportOut.of(view)


@router.get("/plugins/{plugin_id}/reports", response_model=list[ReportOut])
def reports(plugin_id: str, account: CurrentAccount, db: Db) -> list[ReportOut]:
    """Every report about the plug-in, newest first, never who sent it: for the publisher's
    owners and admins and the service's operators and reviewers."""
    return [ReportOut.of(v) for v in audience.plugin_reports(db, account, plugin_id)]

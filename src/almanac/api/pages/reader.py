"""The readers' pages: the home, the calendar (a month grid, or a 62-day agenda) drawn from
exactly the rows `audience.read_days` gives the reader API, the Show sections menu of a day
(the synced `plugins.<id>.shown` preference, through `audience.set_shown`) and the report form
(`audience.file_report`). Nothing here decides what a row says: the rows are the API's."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from functools import cached_property
from typing import Annotated
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from almanac.api.deps import Context, Db, Now
from almanac.api.pages.account import safe_next
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
from almanac.api.schemas.feeds import feed_addresses
from almanac.api.schemas.reader import ReportIn
from almanac.platform import accounts, audience, feeds
from almanac.platform.accounts import StaffRole
from almanac.platform.audience import ReportCategory
from almanac.platform.audience.pictures import (
    RevisedRecord,
    read_days_as_of,
    reader_series_chart,
)
from almanac.platform.reader import MAX_DAYS
from almanac.platform.reader.chart import RANGES
from almanac.platform.reader.month import CellLine, month_cell
from almanac.platform.reader.render import Section
from almanac.platform.reader.words import MONTHS, WEEKDAYS

router = APIRouter(include_in_schema=False)
API_READER = "/api/v1/reader"

CATEGORY_WORDS = {
    ReportCategory.WRONG_DATA: "Wrong data",
    ReportCategory.OFFENSIVE: "Offensive",
    ReportCategory.IMPERSONATING: "Impersonating someone",
    ReportCategory.DATA_IT_MAY_NOT_USE: "Data it may not use",
    ReportCategory.STOPPED_WORKING: "Stopped working",
    ReportCategory.OTHER: "Other",
}


@dataclass
class CalendarDay:
    """One day as the page draws it: its sections (one per shown plug-in with rows)."""

    day: date
    sections: list[Section] = field(default_factory=list)
    in_month: bool = True
    today: bool = False
    selected: bool = False

    @property
    def iso(self) -> str:
        return self.day.isoformat()

    @property
    def weekend(self) -> bool:
        return self.day.weekday() >= 5

    @cached_property
    def lines(self) -> list[CellLine]:
        """The day's lines in a month cell, what happened that day first (read once all its
        sections are in)."""
        return month_cell(self.sections)


@dataclass(frozen=True)
class MenuEntry:
    """A plug-in in the Show sections menu: its name in the reader's language, and whether
    it is shown now (the reader's own choice, else an organization's default)."""

    id: str
    name: str
    shown: bool
    notice: str | None


def _date(value: str | None, what: str) -> date | None:
    if not value:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise PageRefused(422, "REQUEST-INVALID", f"{what}: {value!r} is not a date") from None


def _month(value: str | None, fallback: date) -> date:
    if not value:
        return fallback.replace(day=1)
    try:
        year, month = value.split("-")
        return date(int(year), int(month), 1)
    except ValueError:
        raise PageRefused(422, "REQUEST-INVALID", f"month: {value!r} is not YYYY-MM") from None


def _as_of(value: str | None) -> datetime | None:
    """The moment the calendar is drawn as of: a moment with its zone, or a date, meaning the
    end of that day (UTC), so the day's writes are in."""
    if not value:
        return None
    try:
        if len(value) == 10:
            return datetime.combine(date.fromisoformat(value), time.max, tzinfo=UTC)
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise PageRefused(
            422, "REQUEST-INVALID", f"as_of: {value!r} is not a date or a moment"
        ) from None
    if moment.tzinfo is None:
        raise PageRefused(422, "REQUEST-INVALID", "as_of: give a moment with its time zone")
    return moment


def _next_month(first: date) -> date:
    return (first + timedelta(days=32)).replace(day=1)


def _short(day: date) -> str:
    return f"{day.day} {MONTHS[day.month - 1]} {day.year}"


def _link(**params: str | None) -> str:
    return "/calendar?" + urlencode({k: v for k, v in params.items() if v})


@router.get("/")
def home(request: Request, account: MaybeAccount) -> Response:
    """The reader's home: the calendar when signed in, else what Almanac is and the way in."""
    if account is not None:
        return redirect("/calendar")
    return render(request, "home.html", {"title": "Almanac"}, account=None)


@router.get("/calendar")
def calendar(
    request: Request,
    account: PageAccount,
    db: Db,
    now: Now,
    view: str = "month",
    month: str | None = None,
    start: str | None = None,
    day: str | None = None,
    lang: str = "en",
    today: str | None = None,
    as_of: str | None = None,
) -> Response:
    """The calendar of the reader's shown plug-ins: a month grid (Monday first; the weeks that
    hold the month) or a 62-day agenda from `start`; `day` selects a day whose full rows,
    Show sections menu and report links are drawn beside the grid. With `as_of` the days are
    drawn from the records as they stood then: a record revised since is marked, and the day
    panel lists its revisions."""
    moment = _as_of(as_of)
    with refusals():
        audience.check_language(lang)
    reader_today = _date(today, "today") or now.date()
    selected = _date(day, "day")
    try:
        if view == "agenda":
            first = _date(start, "start") or reader_today
            last = first + timedelta(days=MAX_DAYS - 1)
            shown_month = first.replace(day=1)
        else:
            view = "month"
            shown_month = _month(month, selected or reader_today)
            first = shown_month - timedelta(days=shown_month.weekday())
            end = _next_month(shown_month) - timedelta(days=1)
            last = end + timedelta(days=6 - end.weekday())
        # The links to the periods on either side must exist as well.
        _next_month(last) - timedelta(days=MAX_DAYS + 31)
    except OverflowError:
        raise PageRefused(422, "REQUEST-INVALID", "that date is beyond the calendar") from None
    revised: dict[tuple[str, str, str], list[RevisedRecord]] = {}
    with refusals():
        if moment is None:
            # The very bytes `GET /api/v1/reader/days` answers with (kept between reads of
            # unchanged records), decoded: the page draws the API's rows, never its own.
            drawn = [
                json.loads(d.days_json)
                for d in audience.read_days_json(
                    db, account, first=first, last=last, today=reader_today, language=lang
                )
            ]
        else:
            stood = read_days_as_of(
                db, account, first=first, last=last, today=reader_today, language=lang,
                as_of=moment,
            )  # fmt: skip
            drawn = [s.days.days for s in stood]
            for s in stood:
                for r in s.revised:
                    revised.setdefault((s.days.plugin, r.series, r.date.isoformat()), []).append(r)
    days = [
        CalendarDay(
            day=first + timedelta(days=n),
            in_month=view == "agenda" or (first + timedelta(days=n)).month == shown_month.month,
            today=first + timedelta(days=n) == reader_today,
        )
        for n in range((last - first).days + 1)
    ]
    for plugin_days in drawn:
        for n, drawn_day in enumerate(plugin_days):
            days[n].sections.extend(drawn_day["sections"])
    chosen = next((d for d in days if d.day == selected), None)
    if chosen is not None:
        chosen.selected = True
    readable = audience.visible_plugins(db, account)
    shown = audience.shown_of(db, account, readable)
    menu = [
        MenuEntry(
            id=p.id,
            name=p.display_name(lang),
            shown=shown[p.id].shown,
            notice=p.takedown_message if p.taken_down else None,
        )
        for p in readable
    ]
    languages = sorted({"en", lang} | {key for p in readable for key in p.names})
    keep = {"lang": None if lang == "en" else lang, "today": today, "as_of": as_of}
    if view == "month":
        previous = _link(month=(shown_month - timedelta(days=1)).strftime("%Y-%m"), **keep)
        following = _link(month=_next_month(shown_month).strftime("%Y-%m"), **keep)
        heading = f"{MONTHS[shown_month.month - 1]} {shown_month.year}"
    else:
        previous = _link(
            view="agenda", start=(first - timedelta(days=MAX_DAYS)).isoformat(), **keep
        )
        following = _link(view="agenda", start=(last + timedelta(days=1)).isoformat(), **keep)
        heading = f"{_short(first)} to {_short(last)}"
    here = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    context = {
        "title": "Calendar",
        "view": view,
        "heading": heading,
        "weeks": [days[i : i + 7] for i in range(0, len(days), 7)],
        "days": days,
        "chosen": chosen,
        "weekdays": WEEKDAYS,
        "menu": menu,
        "notices": [m for m in menu if m.shown and m.notice],
        "languages": languages,
        "lang": lang,
        "today_param": today,
        "reader_today": reader_today,
        "previous": previous,
        "following": following,
        "today_link": _link(view=None if view == "month" else "agenda", **keep),
        "month_link": _link(month=shown_month.strftime("%Y-%m"), **keep),
        "agenda_link": _link(view="agenda", start=first.isoformat(), **keep)
        if view == "agenda"
        else _link(view="agenda", start=reader_today.isoformat(), **keep),
        "day_link": lambda d: _link(
            month=None if view == "agenda" else shown_month.strftime("%Y-%m"),
            view="agenda" if view == "agenda" else None,
            start=first.isoformat() if view == "agenda" else None,
            day=d.isoformat(),
            **keep,
        ),
        "here": here,
        # The language form keeps what the page shows: view, month or start, day, today.
        "hidden": {
            k: v
            for k, v in {
                "view": "agenda" if view == "agenda" else None,
                "month": shown_month.strftime("%Y-%m") if view == "month" else None,
                "start": first.isoformat() if view == "agenda" else None,
                "day": selected.isoformat() if selected else None,
                "today": today,
                "as_of": as_of,
            }.items()
            if v
        },
        "saved": request.query_params.get("saved"),
        "report_sent": request.query_params.get("reported"),
        "is_operator": accounts.has_staff_role(db, account, StaffRole.OPERATOR),
        "as_of": moment,
        "as_of_param": as_of,
        "now_link": request.url.path
        + "?"
        + urlencode([(k, v) for k, v in request.query_params.multi_items() if k != "as_of"]),
        "revised_days": {day for (_, _, day) in revised},
        "revised": revised,
        "chart_link": lambda plugin, series: _chart_link(plugin, series, lang, today),
    }
    return render(request, "calendar.html", context, account=account)


def _chart_link(plugin: str, series: str, lang: str, today: str | None, **more: str) -> str:
    query = urlencode(
        {
            k: v
            for k, v in {"lang": None if lang == "en" else lang, "today": today, **more}.items()
            if v
        }
    )
    return f"/calendar/chart/{quote(plugin)}/{quote(series)}" + (f"?{query}" if query else "")


@router.get("/calendar/chart/{plugin_id}/{series}")
def chart_page(
    request: Request,
    plugin_id: str,
    series: str,
    account: PageAccount,
    db: Db,
    now: Now,
    span: Annotated[str, Query(alias="range")] = "year",
    field: str | None = None,
    lang: str = "en",
    today: str | None = None,
) -> Response:
    """A series drawn over a month, a year or all its days (uPlot in `charts.js`, its data
    from `GET /api/v1/reader/plugins/{id}/series/{series}/chart`), with the same figures as a
    table for those who do not see the drawing."""
    reader_today = _date(today, "today") or now.date()
    with refusals():
        audience.check_language(lang)
        drawn = reader_series_chart(
            db, account, plugin_id, series, field=field, span=span, today=reader_today,
            language=lang,
        )  # fmt: skip
    data = urlencode(
        {k: v for k, v in {"range": span, "field": field, "language": lang,
                           "today": reader_today.isoformat()}.items() if v}
    )  # fmt: skip
    context = {
        "title": drawn.name,
        "chart": drawn,
        "data_src": f"{API_READER}/plugins/{quote(plugin_id)}/series/{quote(series)}/chart?{data}",
        "ranges": [
            (
                r,
                r.capitalize(),
                _chart_link(plugin_id, series, lang, today, range=r, field=field or ""),
            )
            for r in RANGES
        ],
        "fields": [
            (key, label, _chart_link(plugin_id, series, lang, today, range=span, field=key))
            for key, label in drawn.fields
        ],
        "back": _link(
            day=reader_today.isoformat(), today=today, lang=None if lang == "en" else lang
        ),
    }
    return render(request, "chart.html", context, account=account)


@router.post("/calendar/sections")
def set_sections(account: PageAccount, form: Form, db: Db, now: Now) -> Response:
    """The Show sections menu: each listed plug-in whose box changed becomes the reader's own
    choice (`plugins.<id>.shown` true or false); an unchanged one keeps its choice, or none."""
    listed = [v for v in form.getlist("plugin") if isinstance(v, str)]
    ticked = {v for v in form.getlist("shown") if isinstance(v, str)}
    changes: dict[str, bool | None] = {}
    for plugin_id in listed:
        before = form.get(f"was.{plugin_id}") == "1"
        if (plugin_id in ticked) != before:
            changes[audience.shown_key(plugin_id)] = plugin_id in ticked
    with refusals():
        audience.set_shown(db, account, changes, now)
        db.commit()
    back = safe_next(text_field(form, "back"))
    return redirect(back + ("&" if "?" in back else "?") + "saved=1")


@router.get("/calendar/report/{plugin_id}")
def report_page(
    request: Request,
    plugin_id: str,
    account: PageAccount,
    db: Db,
    day: str | None = None,
    lang: str = "en",
) -> Response:
    """The report form for a plug-in the reader may read (else the NOT-FOUND page)."""
    with refusals():
        plugin = audience.readable_plugin(db, account, plugin_id)
    context = {
        "title": "Report a plug-in",
        "plugin_id": plugin.id,
        "plugin_name": plugin.display_name(lang),
        "day": _date(day, "day"),
        "categories": CATEGORY_WORDS,
        "error": None,
        "note": "",
    }
    return render(request, "report.html", context, account=account)


@router.post("/calendar/report/{plugin_id}")
def send_report(
    request: Request, plugin_id: str, account: PageAccount, form: Form, db: Db, now: Now
) -> Response:
    """File the report as `POST /api/v1/reader/plugins/{id}/reports` does; the publisher and
    the service read it, never who sent it."""
    day = _date(text_field(form, "day"), "day")
    note = text_field(form, "note")
    try:
        with refusals():
            body = ReportIn(category=text_field(form, "category"), note=note, day=day)
            audience.file_report(
                db, account, plugin_id, category=body.category, note=body.note, day=day, now=now
            )
            db.commit()
    except PageRefused as refusal:
        if refusal.status == 404:
            raise
        context = {
            "title": "Report a plug-in",
            "plugin_id": plugin_id,
            "plugin_name": plugin_id,
            "day": day,
            "categories": CATEGORY_WORDS,
            "error": refusal.message,
            "note": note,
        }
        return render(request, "report.html", context, status=refusal.status, account=account)
    month = f"&month={day.strftime('%Y-%m')}&day={day.isoformat()}" if day else ""
    return redirect(f"/calendar?reported=1{month}")


@router.get("/calendar/feed")
def feed_page(request: Request, account: PageAccount, db: Db) -> Response:
    """The reader's calendar feed: whether an address exists (never the address again), and
    the moves to make a new one or stop it."""
    found = feeds.current_feed(db, account)
    context = {"title": "Calendar feed", "feed": found, "made": None}
    return render(request, "calendar_feed.html", context, account=account)


@router.post("/calendar/feed")
def make_feed(
    request: Request, form: Form, account: PageAccount, db: Db, ctx: Context, now: Now
) -> Response:
    """A new address, shown on this answer only (the earlier one stops answering)."""
    made = feeds.create_feed(db, account, now)
    db.commit()
    url, webcal = feed_addresses(ctx.settings.base_url, made.secret)
    context = {"title": "Calendar feed", "feed": made.feed, "made": {"url": url, "webcal": webcal}}
    return render(request, "calendar_feed.html", context, account=account)


@router.post("/calendar/feed/stop")
def stop_feed(form: Form, account: PageAccount, db: Db, now: Now) -> Response:
    feeds.revoke_feed(db, account, now)
    db.commit()
    return redirect("/calendar/feed")

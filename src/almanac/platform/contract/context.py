"""The run context the fetcher reads on stdin (spec "Resources and their fields": Run context,
Series context; Plug-in folder: `fixtures/context.json`).

The service builds the context; the fetcher never builds a path. `now` is the run's start in
UTC written `YYYY-MM-DDTHH:MM:SSZ` (seconds, no fraction), `today` its date in the manifest's
zone, `backfill` true when nothing is stored for any series, `backfillFrom` null for `all` and
otherwise today minus the backfill Window. Every clock read comes in as `now`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, date, datetime
from typing import Any, TypeGuard
from zoneinfo import ZoneInfo

from almanac.platform.contract.manifest import Manifest
from almanac.platform.contract.problems import Problem
from almanac.platform.contract.rules import parse_date
from almanac.platform.contract.windows import window_start

CONTRACT = 1
MAX_NOW_CHARS = 40
SOURCES_ROOT = "/sources"
CONTEXT_KEYS = (
    "contract",
    "plugin",
    "now",
    "today",
    "backfill",
    "backfillFrom",
    "sources",
    "series",
)
REQUIRED_KEYS = ("contract", "plugin", "now", "today", "backfill", "sources", "series")
SERIES_STATE_KEYS = ("last", "count")

_INSTANT = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,6})?"
    r"(?P<zone>Z|[+-][0-9]{2}:[0-9]{2})"
)

SeriesState = tuple[date | None, int]


def format_instant(instant: datetime) -> str:
    """An aware instant as the context writes `now`: UTC, whole seconds, `Z`."""
    if instant.tzinfo is None or instant.utcoffset() is None:
        raise ValueError("now must be an aware instant, got a naive datetime")
    return instant.astimezone(UTC).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_instant(text: Any, *, utc_only: bool) -> datetime | None:
    """An ISO 8601 instant with seconds and an offset (`Z`, ±hh:mm), or None when not one."""
    if not isinstance(text, str) or len(text) > MAX_NOW_CHARS:
        return None
    match = _INSTANT.fullmatch(text)
    if match is None:
        return None
    if utc_only and match["zone"] not in ("Z", "+00:00"):
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)
    except ValueError:
        return None


def today_in_zone(now: datetime, zone: str) -> date:
    """The date of the instant `now` on the clock of `zone` (the run's today)."""
    return now.astimezone(ZoneInfo(zone)).date()


def backfill_from(manifest: Manifest, today: date) -> date | None:
    """First date a backfill fills: None for `all`, else today minus the backfill Window."""
    if manifest.backfill == "all":
        return None
    return window_start(today, manifest.backfill)


def source_path(name: str) -> str:
    """Where the locked room puts the download of source `name`."""
    return f"{SOURCES_ROOT}/{name}"


def build_run_context(
    manifest: Manifest,
    *,
    now: datetime,
    series_state: Mapping[str, SeriesState],
    backfill: bool | None = None,
) -> dict[str, Any]:
    """The run context of one run (Run context table), every declared series and source in it.

    `series_state` maps a series key to (date of its newest stored record on or before today,
    count of stored records); a declared series missing from it has (None, 0). `backfill` None
    means true exactly when nothing is stored for any series.
    """
    stamp = format_instant(now)
    today = today_in_zone(parse_instant(stamp, utc_only=True) or now, manifest.timezone)
    states = {s.key: series_state.get(s.key, (None, 0)) for s in manifest.series}
    for key, (last, count) in states.items():
        if count < 0 or (last is not None and last > today):
            raise ValueError(f"series {key}: state ({last}, {count}) is not a stored state")
    if backfill is None:
        backfill = all(count == 0 for _, count in states.values())
    start = backfill_from(manifest, today)
    return {
        "contract": CONTRACT,
        "plugin": manifest.id,
        "now": stamp,
        "today": today.isoformat(),
        "backfill": backfill,
        "backfillFrom": start.isoformat() if start is not None else None,
        "sources": {source.name: source_path(source.name) for source in manifest.sources},
        "series": {
            key: {"last": last.isoformat() if last is not None else None, "count": count}
            for key, (last, count) in states.items()
        },
    }


class _Findings:
    def __init__(self, code: str, where: str) -> None:
        self.code = code
        self.where = where
        self.problems: list[Problem] = []

    def add(self, path: str | None, detail: str, code: str | None = None) -> None:
        where = f"{self.where} {path}" if path is not None else self.where
        self.problems.append(Problem(code or self.code, f"{where}: {detail}", path=path))


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_series_state(
    out: _Findings, value: Any, manifest: Manifest, today: date | None, *, every_series: bool
) -> None:
    if not isinstance(value, Mapping):
        out.add("series", "must be an object of series key to {last, count}")
        return
    declared = [s.key for s in manifest.series]
    for key in value:
        if key not in declared:
            out.add(f"series.{key}", "is not a declared series")
    if every_series:
        for key in declared:
            if key not in value:
                out.add(f"series.{key}", "is missing; every declared series has a state")
    for key, state in value.items():
        if key not in declared:
            continue
        path = f"series.{key}"
        if not isinstance(state, Mapping):
            out.add(path, "must be an object {last, count}")
            continue
        for extra in state:
            if extra not in SERIES_STATE_KEYS:
                out.add(f"{path}.{extra}", "is not a series context key")
        if "last" not in state or "count" not in state:
            out.add(path, "needs both last and count")
        last = state.get("last")
        count = state.get("count")
        if last is not None:
            day = parse_date(last)
            if day is None:
                out.add(f"{path}.last", f"{last!r} is not a date YYYY-MM-DD or null")
            elif today is not None and day > today:
                out.add(f"{path}.last", f"{last} is after today {today}")
        if "count" in state and (not _is_int(count) or count < 0):
            out.add(f"{path}.count", f"{count!r} is not an integer of at least 0")
        elif last is not None and count == 0:
            out.add(path, "has a last date but a count of 0")


def check_run_context(ctx: Any, manifest: Manifest) -> list[Problem]:
    """Every way a built run context breaks the Run context table for this manifest.

    A missing or wrong `today` is PLG-RECORD-TODAY; every other fault is PLG-CONTEXT-INVALID.
    """
    out = _Findings("PLG-CONTEXT-INVALID", "run context")
    if not isinstance(ctx, Mapping):
        out.add(None, "must be one JSON object")
        return out.problems
    for key in ctx:
        if key not in CONTEXT_KEYS:
            out.add(str(key), "is not a run context key")
    for key in REQUIRED_KEYS:
        if key not in ctx:
            out.add(key, "is missing", "PLG-RECORD-TODAY" if key == "today" else None)
    if "contract" in ctx and (not _is_int(ctx["contract"]) or ctx["contract"] != CONTRACT):
        out.add("contract", f"must be {CONTRACT}")
    if "plugin" in ctx and ctx["plugin"] != manifest.id:
        out.add("plugin", f"{ctx['plugin']!r} is not the plug-in id {manifest.id!r}")
    now = None
    if "now" in ctx:
        now = parse_instant(ctx["now"], utc_only=True)
        if now is None:
            out.add("now", f"{ctx['now']!r} is not a UTC ISO 8601 instant of at most 40 characters")
    today = None
    if "today" in ctx:
        today = parse_date(ctx["today"])
        if today is None:
            out.add("today", f"{ctx['today']!r} is not a date YYYY-MM-DD", "PLG-RECORD-TODAY")
        elif now is not None and today != today_in_zone(now, manifest.timezone):
            expected = today_in_zone(now, manifest.timezone)
            out.add(
                "today",
                f"{today} is not the date of now in {manifest.timezone} ({expected})",
                "PLG-RECORD-TODAY",
            )
            today = None
    if "backfill" in ctx and not isinstance(ctx["backfill"], bool):
        out.add("backfill", "must be true or false")
    if "backfillFrom" in ctx:
        value = ctx["backfillFrom"]
        expected_from = backfill_from(manifest, today) if today is not None else None
        if manifest.backfill == "all":
            if value is not None:
                out.add("backfillFrom", "must be null for backfill all")
        elif parse_date(value) is None:
            out.add("backfillFrom", f"{value!r} is not a date YYYY-MM-DD")
        elif expected_from is not None and parse_date(value) != expected_from:
            out.add("backfillFrom", f"{value} is not today minus {manifest.backfill}")
    if "sources" in ctx:
        expected_sources = {s.name: source_path(s.name) for s in manifest.sources}
        if ctx["sources"] != expected_sources:
            out.add("sources", f"must be exactly {json.dumps(expected_sources)}")
    if "series" in ctx:
        _check_series_state(out, ctx["series"], manifest, today, every_series=True)
    return out.problems


FIXTURE_PATH = "fixtures/context.json"


def check_fixture_context(fixture: Any, manifest: Manifest) -> list[Problem]:
    """`fixtures/context.json` rules: an object of run context keys with `now` an ISO instant and
    `today` the date of `now` in the manifest zone (PLG-FIXTURE-CONTEXT-INVALID).

    Text or bytes are read as JSON first. Other keys are optional; when given they follow the
    Run context table (sources are always filled by the checker, so `sources` is refused).
    """
    out = _Findings("PLG-FIXTURE-CONTEXT-INVALID", FIXTURE_PATH)
    if isinstance(fixture, str | bytes):
        try:
            fixture = json.loads(fixture)
        except (ValueError, UnicodeDecodeError) as error:
            out.add(None, f"is not JSON ({error})")
            return out.problems
    if not isinstance(fixture, Mapping):
        out.add(None, "must be one JSON object")
        return out.problems
    allowed = tuple(key for key in CONTEXT_KEYS if key != "sources")
    for key in fixture:
        if key not in allowed:
            out.add(str(key), "is not a key fixtures/context.json may set")
    now = None
    if "now" not in fixture:
        out.add("now", "is missing")
    else:
        now = parse_instant(fixture["now"], utc_only=False)
        if now is None:
            out.add("now", f"{fixture['now']!r} is not an ISO 8601 instant with an offset")
    today = None
    if "today" not in fixture:
        out.add("today", "is missing")
    else:
        today = parse_date(fixture["today"])
        if today is None:
            out.add("today", f"{fixture['today']!r} is not a date YYYY-MM-DD")
        elif now is not None and today != today_in_zone(now, manifest.timezone):
            expected = today_in_zone(now, manifest.timezone)
            out.add("today", f"{today} is not the date of now in {manifest.timezone} ({expected})")
            today = None
    if "contract" in fixture and (not _is_int(fixture["contract"]) or fixture["contract"] != 1):
        out.add("contract", "must be 1")
    if "plugin" in fixture and fixture["plugin"] != manifest.id:
        out.add("plugin", f"must be the plug-in id {manifest.id!r}")
    if "backfill" in fixture and not isinstance(fixture["backfill"], bool):
        out.add("backfill", "must be true or false")
    if "backfillFrom" in fixture:
        value = fixture["backfillFrom"]
        if value is not None and parse_date(value) is None:
            out.add("backfillFrom", f"{value!r} is not a date YYYY-MM-DD or null")
    if "series" in fixture:
        _check_series_state(out, fixture["series"], manifest, today, every_series=False)
    return out.problems


def series_state_of_records(
    manifest: Manifest, records: Iterable[Mapping[str, Any]], today: date
) -> dict[str, SeriesState]:
    """Series context ("Run context", Series context) of the records stored before a run:
    per declared series `count` = its records, `last` = the newest dated on or before today.

    It is what `check` gives `fixtures/runs/<case>` from `fixtures/records.jsonl`, and what the
    store's `series_state` reads from stored records. Records of undeclared series are left
    out; a record of a declared series without a valid `date` is a ValueError.
    """
    states: dict[str, SeriesState] = {s.key: (None, 0) for s in manifest.series}
    for number, record in enumerate(records, start=1):
        key = record.get("series")
        if key not in states:
            continue
        day = parse_date(record.get("date"))
        if day is None:
            raise ValueError(f"record {number}: date {record.get('date')!r} is not YYYY-MM-DD")
        last, count = states[key]
        if day <= today and (last is None or day > last):
            last = day
        states[key] = (last, count + 1)
    return states


def run_context_from_fixture(
    fixture: Mapping[str, Any],
    manifest: Manifest,
    *,
    series_state: Mapping[str, SeriesState] | None = None,
    backfill: bool | None = None,
) -> dict[str, Any]:
    """The run context `check` gives the fetcher for a valid `fixtures/context.json` (or a
    case's `context.json`): the Run context table built from the manifest.

    `now` and `today` come from the fixture. `series_state` is the state of the records before
    the run (for a case, those of `fixtures/records.jsonl`); a series the fixture names takes
    the fixture's state instead, and any other has none stored. The fixture's `backfill` and
    `backfillFrom`, when given, win over the built ones.
    """
    now = parse_instant(fixture["now"], utc_only=False)
    if now is None:
        raise ValueError("fixtures/context.json: now is not an ISO 8601 instant")
    states: dict[str, SeriesState] = dict(series_state or {})
    for key, state in (fixture.get("series") or {}).items():
        last = parse_date(state.get("last"))
        states[key] = (last, int(state.get("count", 0)))
    if "backfill" in fixture:
        backfill = fixture["backfill"]
    ctx = build_run_context(manifest, now=now, series_state=states, backfill=backfill)
    if "backfillFrom" in fixture:
        ctx["backfillFrom"] = fixture["backfillFrom"]
    return ctx

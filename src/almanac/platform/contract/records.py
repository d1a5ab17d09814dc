"""The record batch's static check, one of the contract's rules (spec "Records": Value, Event
and Item tables, Batch rules; "Errors": Records of a run; "The write" rule 1: one bad line
refuses the whole batch).

Decisions where the spec is silent, shared with the Node tool through tests/conformance/:
- Lines: one JSON object per line. When the last line given is empty ("" or b"", what splitting
  a text that ends in a newline leaves), it is not a record; any other empty line is
  PLG-RECORD-INVALID. A line may keep its own line ending ("\\n", "\\r\\n").
- More than 250,000 records refuse the batch at once with PLG-RECORD-TOO-MANY (line null);
  no line is checked then.
- Every problem of every line is reported, in line order. Within a line: a line that is not
  JSON, not an object, or whose `kind` is not value, event or item gets that one problem.
  Otherwise each unknown key, each field rule and the series are judged separately; checks that
  need the series (declared fields, `period`, `revises`) are skipped when the series is wrong.
  "After today" is judged only on a valid date (and, for an event, a valid state).
- A value record's `fields` must name at least one declared field; a declared field may be left
  out (a day may lack one figure of a multi-field series). `period` and `revises` on an
  observation series are PLG-RECORD-INVALID.
- Optional keys, when present, must hold their type: `null` is refused for `value`, `title`,
  `period` and `revises` (leave the key out instead).
- Plain text (titles): no control characters, no HTML tag, comment or character reference
  (`<b>`, `</`, `<!--`, `&amp;`); a lone `<` or `&` is text. An event title may be empty; an
  item title is 1 to 200 characters.
- Ids: 1 to 64 characters with no whitespace or control character.
- Item links: https, at most 1,000 characters, no user name or password, host exactly (lowercase)
  a source host or a `links.hosts` entry; a link that is not a string is PLG-RECORD-INVALID.
- Repeats are judged only on lines with no other problem: a value or item by its record key
  (`identity.record_key`), an event by its series and id (`identity.event_identity`), so the
  same event id printed twice is a repeat whatever its dates.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from almanac.platform.contract.identity import event_identity, record_key
from almanac.platform.contract.manifest import Manifest
from almanac.platform.contract.problems import Problem
from almanac.platform.contract.rules import (
    CONTROL_PATTERN,
    JSON_DECODER,
    MARKUP_PATTERN,
    MAX_FLOAT,
    WHITESPACE_OR_CONTROL,
    parse_date,
    split_https_url,
)

MAX_RECORDS = 250_000
MAX_PERIOD = 32
MAX_ID = 64
MAX_TITLE = 200
MAX_LINK = 1000
MAX_REASON = 300

VALUE_KEYS = frozenset({"kind", "series", "date", "period", "fields", "revises"})
EVENT_KEYS = frozenset({"kind", "series", "id", "date", "state", "value", "title"})
ITEM_KEYS = frozenset({"kind", "series", "date", "id", "title", "url"})
_A = {"value": "a value", "event": "an event", "item": "an item"}
EVENT_STATES = frozenset({"scheduled", "happened", "cancelled"})
_KEY_ORDER = {
    "value": ("kind", "series", "date", "period", "fields", "revises"),
    "event": ("kind", "series", "id", "date", "state", "value", "title"),
    "item": ("kind", "series", "date", "id", "title", "url"),
}


@dataclass(slots=True)
class BatchResult:
    """The parsed records (empty unless the batch passed) and every problem found."""

    records: list[dict[str, Any]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def reason(self, limit: int = MAX_REASON) -> str | None:
        """A failed run's reason ("The write" rule 4): the first broken rule and its line, at
        most `limit` characters; None when the batch passed."""
        if not self.problems:
            return None
        first = self.problems[0]
        text = f"{first.code} {first.message}"
        if len(self.problems) > 1:
            more = len(self.problems) - 1
            text += f" (and {more} more problem{'s' if more > 1 else ''})"
        return text if len(text) <= limit else text[: limit - 3] + "..."


def _show(value: Any) -> str:
    """A value as JSON writes it, shortened, for messages (only on the error path)."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _finite(value: Any) -> bool:
    kind = type(value)
    if kind is float:
        return bool(value - value == 0.0)  # false for NaN and the infinities
    if kind is int:
        return bool(-MAX_FLOAT <= value <= MAX_FLOAT)
    return False


def _plain_text_problem(value: Any, low: int) -> str | None:
    if type(value) is not str:
        return f"must be a string, not {_show(value)}"
    if not low <= len(value) <= MAX_TITLE:
        return f"must be {low} to {MAX_TITLE} characters, not {len(value)}"
    if CONTROL_PATTERN.search(value):
        return "must be one line of plain text, without control characters"
    if MARKUP_PATTERN.search(value):
        return "must be plain text, without markup such as tags or character references"
    return None


def _id_ok(value: Any) -> bool:
    return (
        type(value) is str
        and 0 < len(value) <= MAX_ID
        and WHITESPACE_OR_CONTROL.search(value) is None
    )


def _today_text(today: Any) -> str | None:
    if type(today) is date:
        return today.isoformat()
    if isinstance(today, str) and parse_date(today) is not None:
        return today
    return None


class _Batch:
    """The per-batch lookups, built once, and the line checks that use them."""

    def __init__(self, manifest: Manifest, today: str) -> None:
        self.today = today
        self.problems: list[Problem] = []
        self.kinds = {series.key: series.kind for series in manifest.series}
        # value series key -> (declared fields, dated by publication)
        self.values = {
            s.key: (frozenset(s.fields), s.dates == "publication")
            for s in manifest.series
            if s.kind == "value"
        }
        self.dating = {s.key: s.dates for s in manifest.series}
        self.events = frozenset(s.key for s in manifest.series if s.kind == "event")
        self.items = frozenset(s.key for s in manifest.series if s.kind == "item")
        self.link_hosts = manifest.link_hosts()
        self.dates: dict[str, bool] = {}
        self.seen: set[tuple[str, str, str]] = set()
        self.seen_events: set[tuple[str, str]] = set()

    def add(self, code: str, line: int, path: str | None, detail: str) -> None:
        where = f"line {line}: {path}" if path else f"line {line}"
        self.problems.append(Problem(code, f"{where}: {detail}", path=path, line=line))

    def date_ok(self, value: Any) -> bool:
        if type(value) is not str:
            return False
        known = self.dates.get(value)
        if known is None:
            known = self.dates[value] = parse_date(value) is not None
        return known

    def unknown_keys(self, record: dict[str, Any], kind: str, line: int) -> None:
        known = _KEY_ORDER[kind]
        for key in record:
            if key not in known:
                self.add(
                    "PLG-RECORD-UNKNOWN-KEY",
                    line,
                    key,
                    f"{_show(key)} is not a key of {_A[kind]} record",
                )

    def missing(self, key: str, line: int) -> None:
        self.add("PLG-RECORD-INVALID", line, key, "is required")

    def series(self, record: dict[str, Any], kind: str, line: int) -> bool:
        """Spec: `series` is a declared series of the record's kind."""
        if "series" not in record:
            self.missing("series", line)
            return False
        key = record["series"]
        if type(key) is not str:
            self.add("PLG-RECORD-INVALID", line, "series", f"must be a string, not {_show(key)}")
            return False
        declared = self.kinds.get(key)
        if declared is None:
            self.add("PLG-RECORD-SERIES", line, "series", f"{_show(key)} is not a declared series")
        else:
            self.add(
                "PLG-RECORD-SERIES",
                line,
                "series",
                f"{_show(key)} is declared as {_A[declared]} series, not {_A[kind]} series",
            )
        return False

    def date(self, record: dict[str, Any], line: int) -> bool:
        value = record.get("date")
        if self.date_ok(value):
            return True
        if "date" not in record:
            self.missing("date", line)
            return False
        self.add(
            "PLG-RECORD-INVALID",
            line,
            "date",
            f"{_show(value)} is not a real calendar date written YYYY-MM-DD",
        )
        return False

    def after_today(self, record: dict[str, Any], line: int, what: str) -> None:
        self.add(
            "PLG-RECORD-AFTER-TODAY",
            line,
            "date",
            f"{record['date']} is after today ({self.today}); {what}",
        )

    def record_id(self, record: dict[str, Any], line: int) -> bool:
        if "id" not in record:
            self.missing("id", line)
            return False
        if _id_ok(record["id"]):
            return True
        self.add(
            "PLG-RECORD-INVALID",
            line,
            "id",
            f"{_show(record['id'])} is not an id (1 to 64 characters, no spaces)",
        )
        return False

    def repeated(
        self, key: tuple[Any, ...], seen: set[Any], record: dict[str, Any], line: int
    ) -> bool:
        """Batch rule: two lines with the same key (an event: the same id) refuse the batch."""
        if key not in seen:
            seen.add(key)
            return False
        kind, series = record["kind"], _show(record["series"])
        if kind == "value":
            what = f"the value of series {series} on {record['date']}"
            if key[2]:
                what += f" for period {_show(key[2])}"
        elif kind == "event":
            what = f"event {_show(record['id'])} of series {series}"
        else:
            what = f"item {_show(record['id'])} of series {series} on {record['date']}"
        self.add("PLG-RECORD-REPEATED", line, None, f"{what} was printed before in this run")
        return True

    def value(self, record: dict[str, Any], line: int) -> bool:
        """Spec "Value record"."""
        ok = True
        if not record.keys() <= VALUE_KEYS:
            self.unknown_keys(record, "value", line)
            ok = False
        series = record.get("series")
        info = self.values.get(series) if type(series) is str else None
        if info is None:
            ok = self.series(record, "value", line)
        if self.date(record, line):
            if record["date"] > self.today:
                self.after_today(record, line, "a value is never dated after today")
                ok = False
        else:
            ok = False
        if "fields" in record:
            if not self.fields(record["fields"], info, series, line):
                ok = False
        else:
            self.missing("fields", line)
            ok = False
        if len(record) > 4 and not self.publication_keys(record, info, series, line):
            ok = False
        if not ok or info is None:
            return False
        key = record_key(record, "publication" if info[1] else "observation")
        return not self.repeated(key, self.seen, record, line)

    def fields(
        self, fields: Any, info: tuple[frozenset[str], bool] | None, series: Any, line: int
    ) -> bool:
        if type(fields) is not dict or not fields:
            self.add(
                "PLG-RECORD-INVALID",
                line,
                "fields",
                f"must be an object of at least one declared field, not {_show(fields)}",
            )
            return False
        ok = True
        for name, number in fields.items():
            if not _finite(number):
                self.add(
                    "PLG-RECORD-INVALID",
                    line,
                    f"fields.{name}",
                    f"{_show(number)} is not a finite number",
                )
                ok = False
        if info is not None and not info[0].issuperset(fields):
            for name in fields:
                if name not in info[0]:
                    self.add(
                        "PLG-RECORD-INVALID",
                        line,
                        f"fields.{name}",
                        f"{_show(name)} is not a declared field of series {_show(series)}",
                    )
            ok = False
        return ok

    def publication_keys(
        self,
        record: dict[str, Any],
        info: tuple[frozenset[str], bool] | None,
        series: Any,
        line: int,
    ) -> bool:
        """`period` and `revises`: publication series only."""
        ok = True
        for key in ("period", "revises"):
            if key not in record or info is None:
                continue
            value = record[key]
            if not info[1]:
                self.add(
                    "PLG-RECORD-INVALID",
                    line,
                    key,
                    f"series {_show(series)} is dated by observation; only a series dated by "
                    f"publication takes {key}",
                )
                ok = False
            elif key == "period" and not (type(value) is str and len(value) <= MAX_PERIOD):
                self.add(
                    "PLG-RECORD-INVALID",
                    line,
                    key,
                    f"must be a string of at most {MAX_PERIOD} characters, not {_show(value)}",
                )
                ok = False
            elif key == "revises" and not self.date_ok(value):
                self.add(
                    "PLG-RECORD-INVALID",
                    line,
                    key,
                    f"{_show(value)} is not a real calendar date written YYYY-MM-DD",
                )
                ok = False
        return ok

    def event(self, record: dict[str, Any], line: int) -> bool:
        """Spec "Event record"; only a scheduled event may be after today."""
        ok = True
        if not record.keys() <= EVENT_KEYS:
            self.unknown_keys(record, "event", line)
            ok = False
        series = record.get("series")
        if type(series) is not str or series not in self.events:
            ok = self.series(record, "event", line)
        if not self.record_id(record, line):
            ok = False
        state = record.get("state")
        state_ok = type(state) is str and state in EVENT_STATES
        if not state_ok:
            ok = False
            if "state" not in record:
                self.missing("state", line)
            else:
                self.add(
                    "PLG-RECORD-INVALID",
                    line,
                    "state",
                    f"{_show(state)} is not one of scheduled, happened, cancelled",
                )
        if self.date(record, line):
            if state_ok and state != "scheduled" and record["date"] > self.today:
                self.after_today(
                    record,
                    line,
                    f"a {state} event is past news; only a scheduled event may come later",
                )
                ok = False
        else:
            ok = False
        if "value" in record and not _finite(record["value"]):
            self.add(
                "PLG-RECORD-INVALID",
                line,
                "value",
                f"{_show(record['value'])} is not a finite number",
            )
            ok = False
        if "title" in record:
            problem = _plain_text_problem(record["title"], 0)
            if problem is not None:
                self.add("PLG-RECORD-INVALID", line, "title", problem)
                ok = False
        if not ok:
            return False
        return not self.repeated(event_identity(record), self.seen_events, record, line)

    def item(self, record: dict[str, Any], line: int) -> bool:
        """Spec "Item record"."""
        ok = True
        if not record.keys() <= ITEM_KEYS:
            self.unknown_keys(record, "item", line)
            ok = False
        series = record.get("series")
        if type(series) is not str or series not in self.items:
            ok = self.series(record, "item", line)
        if self.date(record, line):
            if record["date"] > self.today:
                self.after_today(record, line, "an item is never dated after today")
                ok = False
        else:
            ok = False
        if not self.record_id(record, line):
            ok = False
        if "title" in record:
            problem = _plain_text_problem(record["title"], 1)
            if problem is not None:
                self.add("PLG-RECORD-INVALID", line, "title", problem)
                ok = False
        else:
            self.missing("title", line)
            ok = False
        if "url" in record:
            if not self.link(record["url"], line):
                ok = False
        else:
            self.missing("url", line)
            ok = False
        if not ok:
            return False
        key = record_key(record, self.dating[record["series"]])
        return not self.repeated(key, self.seen, record, line)

    def link(self, url: Any, line: int) -> bool:
        """Item `url`: https, at most 1,000 characters, to a source host or a links.hosts host."""
        if type(url) is not str:
            self.add("PLG-RECORD-INVALID", line, "url", f"must be a string, not {_show(url)}")
            return False
        if len(url) > MAX_LINK:
            detail = f"is {len(url)} characters long; at most {MAX_LINK}"
        else:
            parts = split_https_url(url)
            if type(parts) is tuple:
                if parts[0] in self.link_hosts:
                    return True
                detail = f"host {parts[0]!r} is neither a source host nor listed in links.hosts"
            else:
                detail = f"{_show(url)} {parts}"
        self.add("PLG-RECORD-LINK", line, "url", detail)
        return False


def _decode_problem(batch: _Batch, text: str | bytes, line: int, error: Exception) -> None:
    if not text.strip():
        batch.add("PLG-RECORD-INVALID", line, None, "is empty; print one JSON object per line")
        return
    if isinstance(error, UnicodeDecodeError):
        detail = f"is not UTF-8 text (byte {error.start + 1} cannot be read)"
    elif hasattr(error, "msg") and hasattr(error, "pos"):
        detail = f"is not JSON ({error.msg} at character {error.pos + 1})"
    else:
        detail = f"is not JSON ({error})"
    batch.add("PLG-RECORD-INVALID", line, None, detail)


def check_batch(
    lines: Iterable[str | bytes], manifest: Manifest, today: date | str | None
) -> BatchResult:
    """Check every line a run printed against the approved manifest (spec "Records", Batch
    rules). One bad line refuses the whole batch: `records` is filled only when `ok`.

    `today` is the run context's today (a date, or its YYYY-MM-DD text); a missing or invalid
    one is PLG-RECORD-TODAY and no line is checked.
    """
    today_text = _today_text(today)
    if today_text is None:
        return BatchResult(
            problems=[
                Problem(
                    "PLG-RECORD-TODAY",
                    f"today: {_show(today)} is not a valid today (YYYY-MM-DD) for this run",
                    path="today",
                )
            ]
        )
    texts = lines if isinstance(lines, list) else list(lines)
    if texts and not texts[-1]:
        texts = texts[:-1]
    if len(texts) > MAX_RECORDS:
        return BatchResult(
            problems=[
                Problem(
                    "PLG-RECORD-TOO-MANY",
                    f"the run printed {len(texts)} records; at most {MAX_RECORDS:,}",
                )
            ]
        )
    batch = _Batch(manifest, today_text)
    records: list[dict[str, Any]] = []
    append = records.append
    decode = JSON_DECODER.decode
    checks = {"value": batch.value, "event": batch.event, "item": batch.item}
    for number, text in enumerate(texts, 1):
        try:
            record = decode(text if type(text) is str else text.decode("utf-8"))
        except ValueError as error:
            _decode_problem(batch, text, number, error)
            continue
        if type(record) is not dict:
            batch.add("PLG-RECORD-INVALID", number, None, f"is not a JSON object: {_show(record)}")
            continue
        kind = record.get("kind")
        check = checks.get(kind) if type(kind) is str else None
        if check is None:
            if "kind" in record:
                detail = f"{_show(kind)} is not one of value, event, item"
            else:
                detail = "is required (value, event or item)"
            batch.add("PLG-RECORD-INVALID", number, "kind", detail)
            continue
        if check(record, number):
            append(record)
    if batch.problems:
        return BatchResult(problems=batch.problems)
    return BatchResult(records=records)

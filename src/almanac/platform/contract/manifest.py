"""The manifest's static check, one of the contract's rules (spec "Resources and their fields":
Manifest, Source, Series, Snapshot, Links, Limits, Licence; "Errors": Manifest and listing) and
the typed `Manifest` it yields.

The check is written by hand rather than with a schema library: every rule maps to its own
catalog code and JSON path (`sources[0].url`, `series[1].fieldNames.rate.en`), and every
problem of a manifest must be reported in one pass, including those below a broken sibling.
A required key that is missing reports the code of that field at the missing key's path.
Names objects anywhere (the plug-in name, a series name, a field's names) report
PLG-MANIFEST-NAME, since the Names rule and its fix are the same wherever they appear.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from almanac.platform.contract.names import pick_name
from almanac.platform.contract.problems import Problem
from almanac.platform.contract.rules import (
    ID_PATTERN,
    JSON_DECODER,
    KEY_PATTERN,
    LANGUAGE_PATTERN,
    VERSION_PATTERN,
    host_problem,
    is_integer,
    is_offset_zone,
    named_zones,
    source_url_problem,
    url_host,
    version_key,
)
from almanac.platform.contract.schedule import max_runs_per_day, parse_schedule
from almanac.platform.contract.windows import Window, parse_window

Audience = Literal["public", "private", "local"]
SeriesKind = Literal["value", "event", "item"]
Cadence = Literal["business-day", "daily", "weekly", "monthly", "quarterly", "irregular"]
Dating = Literal["observation", "publication"]
Retain = Literal["yes", "no", "unknown"]
Names = Mapping[str, str]

AUDIENCES = ("public", "private", "local")
SERIES_KINDS = ("value", "event", "item")
CADENCES = ("business-day", "daily", "weekly", "monthly", "quarterly", "irregular")
DATINGS = ("observation", "publication")
RETAINS = ("yes", "no", "unknown")

MAX_SOURCES = 16
MAX_SERIES = 64
MAX_FIELDS = 16
MAX_LINK_HOSTS = 16
MAX_SOURCE_BYTES = 20_971_520
DEFAULT_SECONDS = 120
DEFAULT_MEGABYTES = 256
MAX_RUNS_A_DAY = 24

RESERVED_IDS: frozenset[str] = frozenset(
    {
        # named by the specification and DECISIONS section 1
        "store", "publish", "search", "markets",
        # first path segments the server uses or may use (DECISIONS sections 1 and 6)
        "api", "portal", "host", "reader", "docs", "tool", "static", "login", "logout",
        "admin", "health", "plugins", "plugin", "problems", "invitations", "invite",
        "developers", "agents", "agent", "auth", "oauth", "device", "account", "accounts",
        "organizations", "orgs", "settings", "review", "reviews", "reports", "report",
        "assets", "metrics", "status", "signup", "register", "verify", "mail", "outbox",
        "dagster", "openapi", "about", "help", "support", "terms", "privacy", "www",
    }
)  # fmt: skip
"""Ids nobody may take: words of the service's own addresses (PLG-ID-RESERVED)."""

RESERVED_ID_PREFIXES: tuple[str, ...] = ("almanac", "alm-", "chk-", "test-")


@dataclass(frozen=True, slots=True)
class Source:
    """A declared download: `name` is the Key the fetcher finds the file under."""

    name: str
    url: str
    max_bytes: int = MAX_SOURCE_BYTES

    @property
    def host(self) -> str:
        host = url_host(self.url)
        assert host is not None, "a checked Source always has an https host"
        return host


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The window [today - back, today + ahead] each run restates in full."""

    back: Window
    ahead: Window


@dataclass(frozen=True, slots=True)
class Series:
    """A declared series. `fields` is empty for event and item series; `field_names` maps a
    field to its Names."""

    key: str
    kind: SeriesKind
    cadence: Cadence
    dates: Dating
    name: Names
    unit: str | None = None
    fields: tuple[str, ...] = ()
    field_names: Mapping[str, Names] = field(default_factory=lambda: MappingProxyType({}))
    change: str | None = None
    snapshot: Snapshot | None = None


@dataclass(frozen=True, slots=True)
class Links:
    """Hosts item links may point to besides every source's host."""

    hosts: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Limits:
    """Run limits; a manifest without `limits` gets the defaults (120 s, 256 MB)."""

    seconds: int = DEFAULT_SECONDS
    megabytes: int = DEFAULT_MEGABYTES


@dataclass(frozen=True, slots=True)
class Licence:
    """`terms` is None when the holder states none; `retain` is yes, no or unknown."""

    holder: str
    terms: str | None
    retain: Retain
    attribution: str | None = None


@dataclass(frozen=True, slots=True)
class Manifest:
    """A manifest that passed every contract 1 rule. `raw` is a copy of the JSON object as
    written (plain dicts and lists, ready for `json.dumps`)."""

    contract: int
    id: str
    name: Names
    version: str
    timezone: str
    audience: Audience
    schedule: str
    backfill: Window | Literal["all"]
    sources: tuple[Source, ...]
    series: tuple[Series, ...]
    licence: Licence
    links: Links | None = None
    limits: Limits = Limits()
    schema: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def display_name(self, language: str | None = None) -> str:
        """The plug-in's name a reader sees ("Reader presentation rules" 2): in their language,
        else English, else the first listed; the id when the manifest names it in none."""
        name = pick_name(self.name, language)
        return self.id if name is None else name

    @property
    def version_tuple(self) -> tuple[int, int, int]:
        return version_key(self.version)

    def series_by_key(self) -> dict[str, Series]:
        return {series.key: series for series in self.series}

    def source_hosts(self) -> frozenset[str]:
        return frozenset(source.host for source in self.sources)

    def link_hosts(self) -> frozenset[str]:
        """Hosts an item link may point to: every source's host and `links.hosts`."""
        extra = self.links.hosts if self.links is not None else ()
        return self.source_hosts() | frozenset(extra)


@dataclass(frozen=True, slots=True)
class ManifestResult:
    """`manifest` is set only when `problems` is empty."""

    manifest: Manifest | None
    problems: list[Problem]

    @property
    def ok(self) -> bool:
        return self.manifest is not None and not self.problems


def is_reserved_id(plugin_id: str) -> bool:
    """DECISIONS section 1: reserved words and ids starting with almanac, alm-, chk-, test-."""
    return plugin_id in RESERVED_IDS or plugin_id.startswith(RESERVED_ID_PREFIXES)


TOP_KEYS = (
    "$schema", "contract", "id", "name", "version", "timezone", "audience", "schedule",
    "backfill", "sources", "series", "links", "limits", "licence",
)  # fmt: skip
SOURCE_KEYS = ("name", "url", "maxBytes")
SERIES_KEYS = (
    "key", "kind", "cadence", "dates", "name", "unit", "fields", "fieldNames", "change",
    "snapshot",
)  # fmt: skip
SNAPSHOT_KEYS = ("back", "ahead")
LINKS_KEYS = ("hosts",)
LIMITS_KEYS = ("seconds", "megabytes")
LICENCE_KEYS = ("holder", "attribution", "terms", "retain")

_REQUIRED_TOP = {
    "contract": "PLG-MANIFEST-CONTRACT",
    "id": "PLG-MANIFEST-ID",
    "name": "PLG-MANIFEST-NAME",
    "version": "PLG-MANIFEST-VERSION",
    "timezone": "PLG-MANIFEST-TIMEZONE",
    "audience": "PLG-MANIFEST-AUDIENCE",
    "schedule": "PLG-MANIFEST-SCHEDULE",
    "backfill": "PLG-MANIFEST-BACKFILL",
    "sources": "PLG-MANIFEST-SOURCES",
    "series": "PLG-MANIFEST-SERIES",
    "licence": "PLG-MANIFEST-LICENCE",
}


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False) if _jsonable(value) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


class _Check:
    """One pass over a manifest object, collecting every problem."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def add(self, code: str, path: str | None, detail: str) -> None:
        message = f"{path}: {detail}" if path else detail
        self.problems.append(Problem(code=code, message=message, path=path))

    def object(self, value: Any, path: str, code: str) -> bool:
        if isinstance(value, Mapping):
            return True
        self.add(code, path, f"must be an object, not {_show(value)}")
        return False

    def unknown_keys(self, obj: Mapping[str, Any], known: tuple[str, ...], prefix: str) -> None:
        for key in obj:
            if key not in known:
                path = f"{prefix}.{key}" if prefix else str(key)
                self.add(
                    "PLG-MANIFEST-UNKNOWN-KEY",
                    path,
                    f"{_show(key)} is not a key contract 1 knows here",
                )

    def required(self, obj: Mapping[str, Any], keys: Mapping[str, str], prefix: str) -> None:
        """A missing required key reports the code of that field at the key's own path."""
        for key, code in keys.items():
            if key not in obj:
                self.add(code, f"{prefix}.{key}" if prefix else key, "is required")

    def text(self, value: Any, path: str, code: str, low: int, high: int) -> bool:
        if not isinstance(value, str):
            self.add(code, path, f"must be a string, not {_show(value)}")
            return False
        if not low <= len(value) <= high:
            self.add(code, path, f"must be {low} to {high} characters, not {len(value)}")
            return False
        return True

    def names(self, value: Any, path: str) -> None:
        """Spec "Names": object keyed by language code; each value 1 to 80 characters."""
        code = "PLG-MANIFEST-NAME"
        if not self.object(value, path, code):
            return
        if not value:
            self.add(code, path, "must have at least one language entry")
        for language, text in value.items():
            entry = f"{path}.{language}"
            if not isinstance(language, str) or LANGUAGE_PATTERN.fullmatch(language) is None:
                self.add(
                    code,
                    entry,
                    f"{_show(language)} is not a language code (two or three lowercase letters, "
                    "optionally a region such as pt-BR)",
                )
            self.text(text, entry, code, 1, 80)

    def key(self, value: Any, path: str, code: str) -> bool:
        """Spec "Key": lowercase letters, digits, hyphens, underscores, from a letter, 1-48."""
        if isinstance(value, str) and KEY_PATTERN.fullmatch(value):
            return True
        self.add(
            code,
            path,
            f"{_show(value)} is not a key (1 to 48 lowercase letters, digits, hyphens and "
            "underscores, starting with a letter)",
        )
        return False

    def window(self, value: Any, path: str, code: str) -> None:
        try:
            parse_window(value)
        except ValueError:
            self.add(
                code,
                path,
                f"{_show(value)} is not a window (1 to 4 digits followed by d or y)",
            )

    def integer(self, value: Any, path: str, code: str, low: int, high: int) -> None:
        if not is_integer(value):
            self.add(code, path, f"must be an integer, not {_show(value)}")
        elif not low <= value <= high:
            self.add(code, path, f"must be {low} to {high}, not {_show(value)}")

    def choice(self, value: Any, path: str, code: str, allowed: tuple[str, ...]) -> None:
        if not isinstance(value, str) or value not in allowed:
            self.add(code, path, f"{_show(value)} is not one of {', '.join(allowed)}")


def _check_top(check: _Check, doc: Mapping[str, Any], folder_name: str | None) -> None:
    check.unknown_keys(doc, TOP_KEYS, "")
    check.required(doc, _REQUIRED_TOP, "")

    if "$schema" in doc:
        check.text(doc["$schema"], "$schema", "PLG-INVALID", 0, 500)

    if "contract" in doc:
        value = doc["contract"]
        if not (is_integer(value) and value == 1):
            check.add("PLG-MANIFEST-CONTRACT", "contract", f"must be 1, not {_show(value)}")

    if "id" in doc:
        _check_id(check, doc["id"], folder_name)

    if "name" in doc:
        check.names(doc["name"], "name")

    if "version" in doc:
        value = doc["version"]
        if not (isinstance(value, str) and VERSION_PATTERN.fullmatch(value)):
            check.add(
                "PLG-MANIFEST-VERSION",
                "version",
                f"{_show(value)} is not major.minor.patch (three non-negative integers "
                "without leading zeros)",
            )

    zone_ok = False
    if "timezone" in doc:
        zone_ok = _check_timezone(check, doc["timezone"])

    if "audience" in doc:
        check.choice(doc["audience"], "audience", "PLG-MANIFEST-AUDIENCE", AUDIENCES)

    if "schedule" in doc:
        _check_schedule(check, doc["schedule"], doc["timezone"] if zone_ok else "UTC")

    if "backfill" in doc and doc["backfill"] != "all":
        check.window(doc["backfill"], "backfill", "PLG-MANIFEST-BACKFILL")

    if "sources" in doc:
        _check_sources(check, doc["sources"])
    if "series" in doc:
        _check_series_list(check, doc["series"])
    if "links" in doc:
        _check_links(check, doc["links"])
    if "limits" in doc:
        _check_limits(check, doc["limits"])
    if "licence" in doc:
        _check_licence(check, doc["licence"])


def _check_id(check: _Check, value: Any, folder_name: str | None) -> None:
    """Spec "Manifest" id; PLG-ID-RESERVED (DECISIONS 1); PLG-FOLDER-ID ("Plug-in folder")."""
    if not (isinstance(value, str) and ID_PATTERN.fullmatch(value)):
        check.add(
            "PLG-MANIFEST-ID",
            "id",
            f"{_show(value)} is not an id (2 to 48 lowercase letters, digits and hyphens, "
            "starting with a letter)",
        )
    if isinstance(value, str) and is_reserved_id(value):
        check.add(
            "PLG-ID-RESERVED", "id", f"{_show(value)} is reserved for Almanac's own addresses"
        )
    if folder_name is not None and value != folder_name:
        check.add(
            "PLG-FOLDER-ID",
            "id",
            f"{_show(value)} differs from the folder name {_show(folder_name)}",
        )


def _check_timezone(check: _Check, value: Any) -> bool:
    """Spec "Manifest" timezone: a named IANA zone, 1 to 100 characters; offsets refused."""
    code = "PLG-MANIFEST-TIMEZONE"
    if not check.text(value, "timezone", code, 1, 100):
        return False
    if is_offset_zone(value):
        check.add(
            code,
            "timezone",
            f"{_show(value)} is a fixed offset, not a place; name the place's IANA zone",
        )
        return False
    if value not in named_zones():
        check.add(code, "timezone", f"{_show(value)} is not a named IANA time zone")
        return False
    return True


def _check_schedule(check: _Check, value: Any, zone: str) -> None:
    """Spec "Manifest" schedule: five-field cron, at most 100 characters, at most 24 runs a day."""
    code = "PLG-MANIFEST-SCHEDULE"
    if not check.text(value, "schedule", code, 1, 100):
        return
    try:
        schedule = parse_schedule(value)
    except ValueError as error:
        check.add(code, "schedule", str(error))
        return
    runs = max_runs_per_day(schedule, zone)
    if runs > MAX_RUNS_A_DAY:
        check.add(
            "PLG-SCHEDULE-TOO-FREQUENT",
            "schedule",
            f"{_show(value)} runs up to {runs} times a day; at most {MAX_RUNS_A_DAY}",
        )


def _check_sources(check: _Check, value: Any) -> None:
    code = "PLG-MANIFEST-SOURCES"
    if not isinstance(value, list):
        check.add(code, "sources", f"must be an array, not {_show(value)}")
        return
    if len(value) > MAX_SOURCES:
        check.add(code, "sources", f"has {len(value)} sources; at most {MAX_SOURCES}")
    seen: set[str] = set()
    for index, source in enumerate(value):
        path = f"sources[{index}]"
        if not check.object(source, path, code):
            continue
        check.unknown_keys(source, SOURCE_KEYS, path)
        check.required(source, {"name": code, "url": "PLG-MANIFEST-SOURCE-URL"}, path)
        if "name" in source:
            name = source["name"]
            if check.key(name, f"{path}.name", code):
                if name in seen:
                    check.add(code, f"{path}.name", f"{_show(name)} names an earlier source too")
                seen.add(name)
        if "url" in source:
            problem = source_url_problem(source["url"])
            if problem is not None:
                check.add("PLG-MANIFEST-SOURCE-URL", f"{path}.url", problem)
        if "maxBytes" in source:
            check.integer(source["maxBytes"], f"{path}.maxBytes", code, 1, MAX_SOURCE_BYTES)


def _check_series_list(check: _Check, value: Any) -> None:
    code = "PLG-MANIFEST-SERIES"
    if not isinstance(value, list):
        check.add(code, "series", f"must be an array, not {_show(value)}")
        return
    if not 1 <= len(value) <= MAX_SERIES:
        check.add(code, "series", f"has {len(value)} series; 1 to {MAX_SERIES}")
    seen: set[str] = set()
    for index, series in enumerate(value):
        path = f"series[{index}]"
        if not check.object(series, path, code):
            continue
        key = series.get("key")
        if "key" in series and check.key(key, f"{path}.key", code):
            if key in seen:
                check.add(code, f"{path}.key", f"{_show(key)} is the key of an earlier series too")
            seen.add(key)
        _check_series(check, series, path)


def _check_series(check: _Check, series: Mapping[str, Any], path: str) -> None:
    """Spec "Series" table (the key's syntax and uniqueness are checked by the caller)."""
    code = "PLG-MANIFEST-SERIES"
    check.unknown_keys(series, SERIES_KEYS, path)
    required = {"key": code, "kind": code, "cadence": code, "dates": code}
    required["name"] = "PLG-MANIFEST-NAME"
    check.required(series, required, path)
    kind = series.get("kind")
    if "kind" in series:
        check.choice(kind, f"{path}.kind", code, SERIES_KINDS)
    if "cadence" in series:
        check.choice(series["cadence"], f"{path}.cadence", code, CADENCES)
    if "dates" in series:
        check.choice(series["dates"], f"{path}.dates", code, DATINGS)
    if "name" in series:
        check.names(series["name"], f"{path}.name")
    if "unit" in series:
        check.text(series["unit"], f"{path}.unit", code, 0, 16)

    fields: set[str] | None = set()
    if "fields" in series:
        fields = _check_fields(check, series["fields"], f"{path}.fields", kind)
    elif kind == "value":
        check.add(code, f"{path}.fields", "is required for a value series")
        fields = None

    if "fieldNames" in series:
        names = series["fieldNames"]
        if check.object(names, f"{path}.fieldNames", code):
            for field_key, field_names in names.items():
                entry = f"{path}.fieldNames.{field_key}"
                if fields is not None and field_key not in fields:
                    check.add(
                        code, entry, f"{_show(field_key)} is not a declared field of the series"
                    )
                check.names(field_names, entry)

    if "change" in series:
        change = series["change"]
        known = check.key(change, f"{path}.change", code)
        if known and fields is not None and change not in fields:
            check.add(
                code, f"{path}.change", f"{_show(change)} is not a declared field of the series"
            )

    if "snapshot" in series:
        snapshot = series["snapshot"]
        snap_path = f"{path}.snapshot"
        if check.object(snapshot, snap_path, code):
            check.unknown_keys(snapshot, SNAPSHOT_KEYS, snap_path)
            check.required(snapshot, {"back": code, "ahead": code}, snap_path)
            for side in SNAPSHOT_KEYS:
                if side in snapshot:
                    check.window(snapshot[side], f"{snap_path}.{side}", code)


def _check_fields(check: _Check, value: Any, path: str, kind: Any) -> set[str] | None:
    """`fields`: only value series; 1 to 16 unique Keys. Returns the declared fields, or None
    when they cannot be known (so membership checks are skipped, not reported twice)."""
    code = "PLG-MANIFEST-SERIES"
    if kind != "value":
        if kind in SERIES_KINDS:
            check.add(code, path, f"only value series have fields, not {kind} series")
            return set()
        return None
    if not isinstance(value, list):
        check.add(code, path, f"must be an array of keys, not {_show(value)}")
        return None
    if not 1 <= len(value) <= MAX_FIELDS:
        check.add(code, path, f"has {len(value)} fields; 1 to {MAX_FIELDS}")
    declared: set[str] = set()
    for index, item in enumerate(value):
        if check.key(item, f"{path}[{index}]", code):
            if item in declared:
                check.add(code, f"{path}[{index}]", f"{_show(item)} is declared twice")
            declared.add(item)
    return declared


def _check_links(check: _Check, value: Any) -> None:
    code = "PLG-MANIFEST-LINKS"
    if not check.object(value, "links", code):
        return
    check.unknown_keys(value, LINKS_KEYS, "links")
    check.required(value, {"hosts": code}, "links")
    if "hosts" not in value:
        return
    hosts = value["hosts"]
    if not isinstance(hosts, list):
        check.add(code, "links.hosts", f"must be an array of host names, not {_show(hosts)}")
        return
    if len(hosts) > MAX_LINK_HOSTS:
        check.add(code, "links.hosts", f"has {len(hosts)} hosts; at most {MAX_LINK_HOSTS}")
    for index, host in enumerate(hosts):
        problem = host_problem(host)
        if problem is not None:
            check.add(code, f"links.hosts[{index}]", problem)


def _check_limits(check: _Check, value: Any) -> None:
    code = "PLG-MANIFEST-LIMITS"
    if not check.object(value, "limits", code):
        return
    check.unknown_keys(value, LIMITS_KEYS, "limits")
    if "seconds" in value:
        check.integer(value["seconds"], "limits.seconds", code, 1, DEFAULT_SECONDS)
    if "megabytes" in value:
        check.integer(value["megabytes"], "limits.megabytes", code, 16, DEFAULT_MEGABYTES)


def _check_licence(check: _Check, value: Any) -> None:
    code = "PLG-MANIFEST-LICENCE"
    if not check.object(value, "licence", code):
        return
    check.unknown_keys(value, LICENCE_KEYS, "licence")
    check.required(value, {"holder": code, "terms": code, "retain": code}, "licence")
    if "holder" in value:
        check.text(value["holder"], "licence.holder", code, 1, 200)
    if "attribution" in value:
        check.text(value["attribution"], "licence.attribution", code, 1, 40)
    if "terms" in value and value["terms"] is not None:
        check.text(value["terms"], "licence.terms", code, 0, 500)
    if "retain" in value:
        check.choice(value["retain"], "licence.retain", code, RETAINS)


def _decode(source: str | bytes) -> tuple[Any, Problem | None]:
    if isinstance(source, bytes):
        try:
            source = source.decode("utf-8")
        except UnicodeDecodeError as error:
            return None, Problem(
                "PLG-MANIFEST-INVALID-JSON",
                f"plugin.json is not UTF-8 text: byte {error.start} cannot be read",
            )
    try:
        return JSON_DECODER.decode(source), None
    except ValueError as error:
        return None, Problem("PLG-MANIFEST-INVALID-JSON", f"plugin.json is not JSON: {error}")


def _build(doc: Mapping[str, Any]) -> Manifest:
    """The typed Manifest of a document that passed every check."""

    def names(value: Mapping[str, str]) -> Names:
        return MappingProxyType(dict(value))

    series = []
    for item in doc["series"]:
        snapshot = None
        if "snapshot" in item:
            snapshot = Snapshot(
                back=parse_window(item["snapshot"]["back"]),
                ahead=parse_window(item["snapshot"]["ahead"]),
            )
        series.append(
            Series(
                key=item["key"],
                kind=item["kind"],
                cadence=item["cadence"],
                dates=item["dates"],
                name=names(item["name"]),
                unit=item.get("unit"),
                fields=tuple(item.get("fields", ())),
                field_names=MappingProxyType(
                    {key: names(value) for key, value in item.get("fieldNames", {}).items()}
                ),
                change=item.get("change"),
                snapshot=snapshot,
            )
        )
    limits = doc.get("limits", {})
    licence = doc["licence"]
    return Manifest(
        contract=1,
        id=doc["id"],
        name=names(doc["name"]),
        version=doc["version"],
        timezone=doc["timezone"],
        audience=doc["audience"],
        schedule=doc["schedule"],
        backfill="all" if doc["backfill"] == "all" else parse_window(doc["backfill"]),
        sources=tuple(
            Source(
                name=item["name"],
                url=item["url"],
                max_bytes=int(item.get("maxBytes", MAX_SOURCE_BYTES)),
            )
            for item in doc["sources"]
        ),
        series=tuple(series),
        licence=Licence(
            holder=licence["holder"],
            terms=licence["terms"],
            retain=licence["retain"],
            attribution=licence.get("attribution"),
        ),
        links=Links(hosts=tuple(doc["links"]["hosts"])) if "links" in doc else None,
        limits=Limits(
            seconds=int(limits.get("seconds", DEFAULT_SECONDS)),
            megabytes=int(limits.get("megabytes", DEFAULT_MEGABYTES)),
        ),
        schema=doc.get("$schema"),
        raw=copy.deepcopy(dict(doc)),
    )


def parse_manifest(
    source: str | bytes | Mapping[str, Any], *, folder_name: str | None = None
) -> ManifestResult:
    """Check a manifest (the text of plugin.json, its bytes, or the parsed object) against every
    contract 1 rule, reporting every problem in one pass, and give the typed Manifest when none.

    `folder_name`, when given, must equal the id (PLG-FOLDER-ID).
    """
    if isinstance(source, str | bytes):
        doc, problem = _decode(source)
        if problem is not None:
            return ManifestResult(None, [problem])
    else:
        doc = source
    if not isinstance(doc, Mapping):
        return ManifestResult(
            None,
            [
                Problem(
                    "PLG-MANIFEST-NOT-OBJECT",
                    f"plugin.json must be one JSON object, not {_show(doc)}",
                )
            ],
        )
    check = _Check()
    _check_top(check, doc, folder_name)
    if check.problems:
        return ManifestResult(None, check.problems)
    return ManifestResult(_build(doc), [])

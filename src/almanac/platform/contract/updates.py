"""The static checks of an update against the published version (spec "Versioning" rule 4).

An update never removes records, so what stored records mean must not change: a new time zone,
or a series whose `kind`, `unit` or `dates` changed, is refused (add a series with a new key
instead). Removing a series, removing a field or adding a source host is allowed with a warning
to the publisher and the reviewer. Series are matched by key.

Paths point into the candidate manifest (`series[2].unit`, `sources[1].url`); a removed series
has the path `series` and its key in the message.
"""

from __future__ import annotations

from almanac.platform.contract.manifest import Manifest
from almanac.platform.contract.problems import Problem


def _shown(value: object) -> str:
    return "none" if value is None else repr(value)


def compare_manifests(published: Manifest, candidate: Manifest) -> list[Problem]:
    """Every Versioning rule 4 finding of `candidate` as an update of `published`, in order:
    time zone, then series by the candidate's order, removed series, then new source hosts."""
    problems: list[Problem] = []
    if candidate.timezone != published.timezone:
        problems.append(
            Problem(
                "PLG-UPDATE-TIMEZONE",
                f"timezone: the update changes {published.timezone} to {candidate.timezone}",
                path="timezone",
            )
        )
    before = published.series_by_key()
    for index, series in enumerate(candidate.series):
        old = before.get(series.key)
        if old is None:
            continue
        at = f"series[{index}]"
        changed = False
        for code, name in (
            ("PLG-UPDATE-SERIES-KIND", "kind"),
            ("PLG-UPDATE-SERIES-UNIT", "unit"),
            ("PLG-UPDATE-SERIES-DATES", "dates"),
        ):
            was, now = getattr(old, name), getattr(series, name)
            if was != now:
                changed = changed or name == "kind"
                problems.append(
                    Problem(
                        code,
                        f"{at}.{name}: series {series.key} changes {name} from {_shown(was)} "
                        f"to {_shown(now)}",
                        path=f"{at}.{name}",
                    )
                )
        if changed:
            continue
        removed = [f for f in old.fields if f not in series.fields]
        for field in removed:
            problems.append(
                Problem(
                    "PLG-UPDATE-FIELD-REMOVED",
                    f"{at}.fields: series {series.key} no longer has field {field}",
                    path=f"{at}.fields",
                )
            )
    kept = {series.key for series in candidate.series}
    for series in published.series:
        if series.key not in kept:
            problems.append(
                Problem(
                    "PLG-UPDATE-SERIES-REMOVED",
                    f"series: the update removes series {series.key} (its records are kept)",
                    path="series",
                )
            )
    old_hosts = published.source_hosts()
    seen: set[str] = set()
    for index, source in enumerate(candidate.sources):
        if source.host in old_hosts or source.host in seen:
            continue
        seen.add(source.host)
        problems.append(
            Problem(
                "PLG-UPDATE-SOURCE-HOST-ADDED",
                f"sources[{index}].url: the update adds the source host {source.host}",
                path=f"sources[{index}].url",
            )
        )
    return problems

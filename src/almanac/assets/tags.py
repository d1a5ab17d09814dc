"""Run tags and names the assets, sensors and commands share."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import dagster as dg

POOL = "almanac"
"""The one concurrency pool every plug-in asset is in (Running rule 5: one run at a time)."""
KEY_PREFIX = "plugins"
TAG_PLUGIN = "almanac/plugin"
TAG_TRIGGER = "almanac/trigger"
TAG_REQUEST = "almanac/request"
TAG_SCHEDULED_FOR = "almanac/scheduled-for"
TAG_RECORDED = "almanac/recorded"
"""Set on a Dagster run once the run's outcome is kept in the store (a store run id, or
`skipped` when the plug-in was not allowed to run): the run-failure sensor leaves it alone."""
BACKFILL_TAG = "dagster/backfill"
PARTITION_TAG = "dagster/partition"


def asset_key(plugin_id: str) -> dg.AssetKey:
    return dg.AssetKey([KEY_PREFIX, plugin_id])


def plugin_of_run(tags: Mapping[str, str], asset_keys: Sequence[dg.AssetKey] | None) -> str | None:
    """The plug-in a Dagster run is for: its tag, else its one selected plug-in asset."""
    if TAG_PLUGIN in tags:
        return tags[TAG_PLUGIN]
    for key in asset_keys or ():
        path = key.path
        if len(path) == 2 and path[0] == KEY_PREFIX:
            return path[1]
    return None

"""Run tags and names the assets, sensors and commands share, and the one reading of a run's
tags into what the run stands for."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date

import dagster as dg

from almanac.orchestration.due import RunOrder
from almanac.orchestration.pipeline import RunRequestFacts
from almanac.platform.lifecycle import RunTrigger

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
TAG_SHADOW = "almanac/shadow"
"""Set on a plug-in's run when a rollout's shadow version ran beside it (its version): the
run's one write is the current version's (README, Rollouts)."""
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


def order_tags(order: RunOrder) -> dict[str, str]:
    """The tags of the Dagster run the minute sensor asks for: plug-in, trigger, and the
    request or scheduled time it answers."""
    tags = {TAG_PLUGIN: order.plugin_id, TAG_TRIGGER: str(order.trigger)}
    if order.request_id is not None:
        tags[TAG_REQUEST] = str(order.request_id)
    if order.scheduled_for is not None:
        tags[TAG_SCHEDULED_FOR] = order.scheduled_for.isoformat()
    return tags


def request_facts(
    plugin_id: str, partition_key: str, tags: Mapping[str, str], run_id: str | None = None
) -> RunRequestFacts:
    """What the Dagster run `run_id` stands for: a run the minute sensor started carries its
    trigger; a run launched any other way (a backfill from the UI or the command line, a
    partition chosen by hand) is a backfill of its partition's day (DECISIONS 8)."""
    trigger = RunTrigger.BACKFILL
    if TAG_TRIGGER in tags and BACKFILL_TAG not in tags:
        trigger = RunTrigger(tags[TAG_TRIGGER])
    request = tags.get(TAG_REQUEST)
    return RunRequestFacts(
        plugin_id=plugin_id,
        today=date.fromisoformat(partition_key),
        trigger=trigger,
        request_id=int(request) if request else None,
        orchestrator_run=run_id,
    )

"""One partitioned asset per plug-in ever approved (DECISIONS 8), its work for a partition
(`today`), and the IO manager that performs the store's transactional write.

The asset is a thin adapter over `almanac.orchestration.pipeline.RunPipeline`.
"""

import re
from typing import Any

import dagster as dg

from almanac.assets.tags import POOL, TAG_RECORDED, TAG_SHADOW, asset_key, request_facts
from almanac.orchestration.catalog import CatalogEntry, group_name
from almanac.orchestration.pipeline import NotRunnable, PreparedRun, RunFailed, RunPipeline

PIPELINE_RESOURCE = "pipeline"
"""The resource key of the run pipeline: the name of the asset's `pipeline` parameter."""
STORE_IO_MANAGER = "almanac_store"
_TAG_VALUE = re.compile(r"[^A-Za-z0-9_.-]")


def _tag_value(text: str) -> str:
    return _TAG_VALUE.sub("_", text)[:63]


def owner_of(publisher: str) -> str:
    """A Dagster owner for a publisher: a `team:` name (Dagster owners are e-mail addresses or
    teams; a publisher is an organization, not a person)."""
    return f"team:{group_name(publisher)}"


def _mark_recorded(instance: dg.DagsterInstance, run_id: str, value: str) -> None:
    instance.add_run_tags(run_id, {TAG_RECORDED: value})


def plugin_asset(entry: CatalogEntry) -> dg.AssetsDefinition:
    """The asset of one plug-in ever approved: key `plugins/<id>`, grouped by publisher, daily
    partitions in the manifest's zone up to today, in the one `almanac` pool."""
    metadata: dict[str, Any] = {
        "schedule": entry.schedule,
        "timezone": entry.timezone,
        "state": entry.state,
        "version": entry.version,
        "digest": entry.digest,
        "records": entry.records,
        "last run": entry.last_run_outcome or "none yet",
    }
    if entry.last_run_ended:
        metadata["last run ended"] = entry.last_run_ended
    if entry.last_run_reason:
        metadata["last run reason"] = entry.last_run_reason
    plugin_id = entry.id

    @dg.asset(
        key=asset_key(plugin_id),
        group_name=group_name(entry.publisher),
        kinds={"node", *entry.series_kinds},
        tags={
            "almanac/audience": _tag_value(entry.audience),
            "almanac/state": _tag_value(entry.state + ("-taken-down" if entry.taken_down else "")),
        },
        owners=[owner_of(entry.publisher)],
        description=entry.name,
        metadata=metadata,
        partitions_def=dg.DailyPartitionsDefinition(
            start_date=entry.first_day, timezone=entry.timezone, end_offset=1
        ),
        pool=POOL,
        io_manager_key=STORE_IO_MANAGER,
    )
    def _plugin(
        context: dg.AssetExecutionContext, pipeline: dg.ResourceParam[RunPipeline]
    ) -> PreparedRun:
        request = request_facts(
            plugin_id, context.partition_key, context.run.tags, context.run.run_id
        )
        try:
            prepared = pipeline.prepare(request)
        except NotRunnable as exc:
            _mark_recorded(context.instance, context.run.run_id, "skipped")
            raise dg.Failure(description=str(exc), allow_retries=False) from exc
        except RunFailed as exc:
            _mark_recorded(context.instance, context.run.run_id, str(exc.run_id))
            raise dg.Failure(
                description=exc.reason,
                metadata={"store run": exc.run_id},
                allow_retries=False,
            ) from exc
        context.add_output_metadata({"records printed": len(prepared.batch)})
        return prepared

    return _plugin


class StoreWriter(dg.IOManager):
    """Performs the write of a checked batch in one store transaction ("The write")."""

    def __init__(self, pipeline: RunPipeline) -> None:
        self._pipeline = pipeline

    def handle_output(self, context: dg.OutputContext, obj: PreparedRun) -> None:
        instance = context.step_context.instance
        try:
            result = self._pipeline.write(obj)
        except RunFailed as exc:
            _mark_recorded(instance, context.run_id, str(exc.run_id))
            raise dg.Failure(description=exc.reason, metadata={"store run": exc.run_id}) from exc
        _mark_recorded(instance, context.run_id, str(result.run_id))
        metadata: dict[str, Any] = {
            "store run": result.run_id,
            "state": str(result.state),
            **result.counts.as_dict(),
            "held series": [h.series for h in result.held],
        }
        shadow = obj.shadow_outcome
        if shadow is not None:
            # A shadow pair is one run writing once: the tag says a shadow version ran beside
            # it, the metadata what it found; nothing of it is a materialization.
            instance.add_run_tags(context.run_id, {TAG_SHADOW: _tag_value(shadow.version)})
            metadata["shadow version"] = shadow.version
            metadata["shadow outcome"] = "passed" if shadow.shadow.passed else "failed"
            metadata["shadow rollout"] = str(shadow.state)
            metadata["shadow diff"] = shadow.shadow.summary
            if shadow.shadow.reason:
                metadata["shadow reason"] = shadow.shadow.reason
        context.add_output_metadata(metadata)

    def load_input(self, context: dg.InputContext) -> Any:
        raise NotImplementedError(
            "plug-in assets have no downstream assets; records are read from the store"
        )

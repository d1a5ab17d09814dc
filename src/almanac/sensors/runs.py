"""The minute sensor (Running rules 1-5) and the run-failure sensor (DECISIONS 8)."""

from collections.abc import Collection
from datetime import datetime, timedelta

import dagster as dg
from sqlalchemy import Engine

from almanac.assets.dagster_private import IMPLICIT_ASSET_JOB_NAME, get_current_datetime
from almanac.assets.tags import (
    PARTITION_TAG,
    TAG_RECORDED,
    asset_key,
    order_tags,
    plugin_of_run,
    request_facts,
)
from almanac.orchestration.due import plan_runs, take_requests
from almanac.orchestration.pipeline import RunPipeline, RunRequestFacts
from almanac.platform.clock import Clock
from almanac.platform.store.reading import orchestrator_runs_kept

DUE_SENSOR = "almanac_due_runs"
FAILURE_SENSOR = "almanac_failed_runs"
EVALUATION_SECONDS = 60


def evaluation_time() -> datetime:
    """The moment of the sensor's evaluation on Dagster's own clock (the one its daemon and its
    test utilities' `freeze_time` use); the only clock read of the sensor."""
    return get_current_datetime()


def plugins_in_flight(
    instance: dg.DagsterInstance, now: datetime | None = None, engine: Engine | None = None
) -> set[str]:
    """Plug-ins with a Dagster run queued, starting or running (Running rule 5: it waits), and,
    when `now` is given, plug-ins whose run failed in the last `UNRECORDED_WAIT` without its
    outcome kept yet: the run-failure sensor keeps it, and until then the store does not know
    the attempt (a crashed first run would otherwise look never attempted and start again at
    once, not 30 minutes later). With `engine`, a failed run whose outcome the store already
    has (its worker kept it, then died before marking the Dagster run) is settled at once
    rather than waited for (issue 31: a resume after a restart waited 10 minutes)."""
    runs = list(instance.get_runs(dg.RunsFilter(statuses=_ACTIVE)))
    if now is not None:
        ended = instance.get_runs(
            dg.RunsFilter(statuses=_ENDED_BADLY, updated_after=now - UNRECORDED_WAIT)
        )
        unrecorded = [run for run in ended if TAG_RECORDED not in run.tags]
        if engine is not None and unrecorded:
            with engine.connect() as conn:
                kept = orchestrator_runs_kept(conn, [run.run_id for run in unrecorded])
            unrecorded = [run for run in unrecorded if run.run_id not in kept]
        runs += unrecorded
    return {
        plugin
        for run in runs
        if (plugin := plugin_of_run(run.tags, list(run.asset_selection or ()))) is not None
    }


UNRECORDED_WAIT = timedelta(minutes=10)
"""How long the minute sensor waits for the run-failure sensor (every 30 seconds) to keep a
failure before it stops counting the failed run as in flight."""
_ENDED_BADLY = [dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED]
_ACTIVE = [
    dg.DagsterRunStatus.QUEUED,
    dg.DagsterRunStatus.NOT_STARTED,
    dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED,
    dg.DagsterRunStatus.CANCELING,
]


def due_runs_sensor(
    engine: Engine, known: Collection[str], clock: Clock = evaluation_time
) -> dg.SensorDefinition:
    """Each minute: which plug-ins run now (the platform's `plan_runs`), as run requests whose
    run keys keep every scheduled time and every request from running twice."""

    @dg.sensor(
        name=DUE_SENSOR,
        minimum_interval_seconds=EVALUATION_SECONDS,
        default_status=dg.DefaultSensorStatus.RUNNING,
        # The implicit asset job, not a job over a selection of the plug-in assets: their
        # partitions differ (zone, first day), which only the implicit job allows; a job over
        # `plugins/*` fails to load as soon as two plug-ins differ. Each request selects one
        # plug-in's asset and one of its partitions.
        # (None while no plug-in was ever approved: Dagster makes that job only for assets.)
        job_name=IMPLICIT_ASSET_JOB_NAME if known else None,
        description="Starts due plug-in runs: schedule (exact under clock changes), approval, "
        "resume, first run, retry 30 minutes after a failure.",
    )
    def _due(context: dg.SensorEvaluationContext) -> dg.SensorResult:
        now = clock()
        in_flight = plugins_in_flight(context.instance, now, engine)
        with engine.connect() as conn:
            plan = plan_runs(conn, now, in_flight=in_flight, known=known)
        take_requests(engine, plan.taken, now)
        requests = []
        for order in plan.orders:
            requests.append(
                dg.RunRequest(
                    run_key=order.run_key,
                    partition_key=order.today.isoformat(),
                    asset_selection=[asset_key(order.plugin_id)],
                    # No asset check: the plug-ins' checks run in a job of their own, outside
                    # the `almanac` pool (sensors/asset_checks.py), not in the plug-in's run.
                    asset_check_keys=[],
                    tags=order_tags(order),
                )
            )
        return dg.SensorResult(run_requests=requests)

    return _due


def _failure_facts(run: dg.DagsterRun) -> RunRequestFacts | None:
    plugin = plugin_of_run(run.tags, list(run.asset_selection or ()))
    partition = run.tags.get(PARTITION_TAG)
    if plugin is None or partition is None:
        return None
    return request_facts(plugin, partition, run.tags, run.run_id)


def failed_runs_sensor(pipeline: RunPipeline) -> dg.SensorDefinition:
    """A plug-in run that failed outside the asset's own code (a crashed run worker, a Dagster
    error) is kept as a failed run with its reason, so the plug-in shows Failing; a failure
    the asset already kept (tag `almanac/recorded`) is not kept twice."""

    @dg.run_failure_sensor(
        name=FAILURE_SENSOR,
        default_status=dg.DefaultSensorStatus.RUNNING,
        minimum_interval_seconds=EVALUATION_SECONDS // 2,
        monitor_all_code_locations=False,
    )
    def _failed(context: dg.RunFailureSensorContext) -> None:
        run = context.dagster_run
        fresh = context.instance.get_run_by_id(run.run_id) or run
        if TAG_RECORDED in fresh.tags:
            return
        facts = _failure_facts(fresh)
        if facts is None:
            return
        message = context.failure_event.message or "the run failed in the orchestrator"
        record = context.instance.get_run_record_by_id(run.run_id)
        started = None
        if record is not None and record.start_time is not None:
            started = datetime.fromtimestamp(record.start_time, tz=evaluation_time().tzinfo)
        run_id = pipeline.record_failure(
            facts, f"the run stopped outside the fetcher: {message}", started_at=started
        )
        if run_id is not None:
            context.instance.add_run_tags(run.run_id, {TAG_RECORDED: str(run_id)})

    return _failed

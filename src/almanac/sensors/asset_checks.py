"""Dagster's asset checks and the alerts (issue 20) as Dagster definitions: three asset
checks on every plug-in asset (freshness, volume, Held), executed on their own in runs that
select only the checks (never materializing a plug-in, never in the plug-ins' `almanac` pool),
started by a sensor every 15 minutes and soon after each plug-in run; the same run then sends
the alerts due. Thin adapters over `almanac.platform.alerts`."""

import json
from collections.abc import Callable, Collection, Iterator
from datetime import datetime, timedelta

import dagster as dg
from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session, sessionmaker

from almanac.assets.dagster_private import IMPLICIT_ASSET_JOB_NAME
from almanac.assets.tags import asset_key
from almanac.platform.alerts.facts import plugin_facts
from almanac.platform.alerts.rules import CheckName, Severity, evaluate_checks
from almanac.platform.alerts.send import send_alerts
from almanac.platform.clock import Clock
from almanac.platform.mail import Mailer
from almanac.platform.store.engine import writing
from almanac.platform.store.tables import runs
from almanac.sensors.runs import evaluation_time

CHECKS_OP = "plugin_checks"
CHECKS_SENSOR = "almanac_plugin_checks_due"
TAG_AT = "almanac/checks-at"
"""The moment the sensor asked for the checks: the checks' and alerts' `now`."""
TAG_AREA, AREA = "almanac/area", "plugin-checks"
"""The tag of the checks' runs (runs of Dagster's implicit asset job with no asset)."""
EVALUATION_SECONDS = 60
EVERY = timedelta(minutes=15)
"""The checks run at least this often (freshness fails with no run happening)."""
_DESCRIPTIONS = {
    CheckName.FRESHNESS: "Stale when no run succeeded since the second-newest scheduled time "
    "that is at least 30 minutes past (read in the manifest's zone): two scheduled times in "
    "a row, each with its retry, passed without a success.",
    CheckName.VOLUME: "Warns when the newest success printed no records, or under half the "
    "median of the up to 10 successes before it (an empty batch is a success all the same).",
    CheckName.HELD: "Fails while a run is Held, waiting for Accept removals or Keep them.",
}
_SEVERITY = {Severity.WARN: dg.AssetCheckSeverity.WARN, Severity.ERROR: dg.AssetCheckSeverity.ERROR}
_IN_FLIGHT = [
    dg.DagsterRunStatus.QUEUED,
    dg.DagsterRunStatus.NOT_STARTED,
    dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED,
]


def check_specs(plugin_ids: Collection[str]) -> list[dg.AssetCheckSpec]:
    """The three check specs of each plug-in asset (unpartitioned: a check is about the
    plug-in, not one day)."""
    return [
        dg.AssetCheckSpec(str(name), asset=asset_key(plugin_id), description=_DESCRIPTIONS[name])
        for plugin_id in sorted(plugin_ids)
        for name in CheckName
    ]


def plugin_check_definitions(
    engine: Engine,
    plugin_ids: Collection[str],
    mailer: Callable[[], Mailer],
    clock: Clock = evaluation_time,
    base_url: str | None = None,
) -> dg.Definitions:
    """The checks of the plug-ins in the catalog and the sensor that starts their runs;
    nothing while no plug-in was ever approved. `mailer` is made when a run sends alerts."""
    if not plugin_ids:
        return dg.Definitions()

    @dg.multi_asset_check(
        name=CHECKS_OP,
        specs=check_specs(plugin_ids),
        can_subset=True,
        description="Evaluates the plug-ins' checks (freshness, volume, Held) from the store, "
        "then sends the alerts due (at most one a day per plug-in and cause).",
    )
    def plugin_checks(
        context: dg.AssetCheckExecutionContext,
    ) -> Iterator[dg.AssetCheckResult]:
        at = context.run.tags.get(TAG_AT)
        now = datetime.fromisoformat(at) if at else clock()
        selected = context.selected_asset_check_keys
        wanted = {key.asset_key.path[1] for key in selected}
        with engine.connect() as conn:
            every = plugin_facts(conn, wanted)
        for plugin_id in sorted(wanted):
            facts = every.get(plugin_id)
            if facts is None:
                continue
            for outcome in evaluate_checks(facts, now):
                key = dg.AssetCheckKey(asset_key(plugin_id), str(outcome.check))
                if key not in selected:
                    continue
                yield dg.AssetCheckResult(
                    asset_key=key.asset_key,
                    check_name=key.name,
                    passed=outcome.passed,
                    severity=_SEVERITY[outcome.severity],
                    description=outcome.description,
                    metadata={"at": now.isoformat(), **outcome.metadata},
                )
        if at is None:
            # Checks executed in another run (from the UI, or beside a backfill's partition):
            # the alerts are the checks job's.
            return
        sessions: sessionmaker[Session] = sessionmaker(writing(engine), expire_on_commit=False)
        sent = send_alerts(sessions, mailer(), now, base_url=base_url)
        for alert in sent:
            context.log.info(
                f"alert {alert.cause} for {alert.plugin_id} sent to {len(alert.recipients)} "
                f"address(es)"
                + (f", {len(alert.undelivered)} undelivered" if alert.undelivered else "")
            )

    every_check = [
        dg.AssetCheckKey(asset_key(plugin_id), str(name))
        for plugin_id in sorted(plugin_ids)
        for name in CheckName
    ]

    @dg.sensor(
        name=CHECKS_SENSOR,
        # The implicit asset job, asked for the checks alone (no asset): a job of its own over
        # the checks would be resolved again at every load of the definitions (each run
        # worker's), about a second with 1,000 plug-ins on this machine.
        job_name=IMPLICIT_ASSET_JOB_NAME,
        minimum_interval_seconds=EVALUATION_SECONDS,
        default_status=dg.DefaultSensorStatus.RUNNING,
        description="Runs the plug-ins' checks and alerts every 15 minutes, and after each "
        "plug-in run the store kept.",
    )
    def _due(context: dg.SensorEvaluationContext) -> dg.SensorResult | dg.SkipReason:
        now = clock()
        cursor = json.loads(context.cursor) if context.cursor else {}
        with engine.connect() as conn:
            newest_run = conn.execute(select(func.max(runs.c.id))).scalar() or 0
        last_at = datetime.fromisoformat(cursor["at"]) if "at" in cursor else None
        periodic = last_at is None or now - last_at >= EVERY
        after_run = newest_run > int(cursor.get("run", 0))
        if not periodic and not after_run:
            return dg.SkipReason(f"checked at {last_at.isoformat() if last_at else '-'}")
        running = context.instance.get_runs(
            dg.RunsFilter(tags={TAG_AREA: AREA}, statuses=_IN_FLIGHT), limit=1
        )
        if running:
            return dg.SkipReason("the checks are running")
        return dg.SensorResult(
            run_requests=[
                dg.RunRequest(
                    run_key=f"plugin-checks-{now.isoformat()}",
                    asset_selection=[],
                    asset_check_keys=every_check,
                    tags={TAG_AT: now.isoformat(), TAG_AREA: AREA},
                )
            ],
            cursor=json.dumps({"at": now.isoformat(), "run": newest_run}),
        )

    return dg.Definitions(asset_checks=[plugin_checks], sensors=[_due])

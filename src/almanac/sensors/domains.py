"""The domain re-checks ("Organization domain"; "Limits", Domain re-verification; DECISIONS
10): a sensor that asks for a run when some verified domain is due, and the asset that runs
the re-checks, both in the `almanac_publishing` group of their own. Thin adapters over
`almanac.platform.publishing.identity.domains`."""

from collections.abc import Callable
from datetime import datetime
from typing import Any

import dagster as dg
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from almanac.platform.clock import Clock
from almanac.platform.mail import Mailer
from almanac.platform.publishing.identity.domains import due_claims, run_rechecks
from almanac.platform.publishing.identity.proof import DomainProver
from almanac.platform.store.engine import writing
from almanac.sensors.runs import evaluation_time

GROUP = "almanac_publishing"
"""The Dagster group of the re-checks (no publisher's group: those are named after
publishers' names, which never start with `almanac_`)."""
RECHECK_ASSET = dg.AssetKey(["publishing", "domain_rechecks"])
RECHECK_JOB = "almanac_domain_rechecks"
RECHECK_SENSOR = "almanac_domain_rechecks_due"
TAG_AT = "almanac/rechecks-at"
"""The moment the sensor saw the claims due: the re-check's `now`."""
EVALUATION_SECONDS = 15 * 60
_IN_FLIGHT = [
    dg.DagsterRunStatus.QUEUED,
    dg.DagsterRunStatus.NOT_STARTED,
    dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED,
]


def domain_recheck_definitions(
    engine: Engine,
    prover: Callable[[], DomainProver],
    mailer: Callable[[], Mailer],
    clock: Clock = evaluation_time,
) -> dg.Definitions:
    """The re-check asset, its job and the sensor that starts it. `prover` and `mailer` are
    made when a run needs them (a run worker builds its own); `clock` is the sensor's one
    clock read, passed to the run as its moment."""

    @dg.asset(
        key=RECHECK_ASSET,
        group_name=GROUP,
        description="Proves each due domain again by its TXT record or well-known file: every "
        "30 days, daily during the 14 days of grace; a failure starts the grace (owners and "
        "admins e-mailed), a proof restores it, the grace's end makes the domain lapsed.",
    )
    def domain_rechecks(context: dg.AssetExecutionContext) -> dg.MaterializeResult[Any]:
        at = context.run.tags.get(TAG_AT)
        now = datetime.fromisoformat(at) if at else clock()
        sessions: sessionmaker[Session] = sessionmaker(writing(engine), expire_on_commit=False)
        summary = run_rechecks(sessions, prover(), mailer(), now)
        context.log.info(f"domain re-checks at {now.isoformat()}: {summary}")
        return dg.MaterializeResult(
            metadata={
                "at": now.isoformat(),
                "checked": summary.checked,
                "verified": summary.verified,
                "grace started": summary.grace_started,
                "lapsed": summary.lapsed,
                "failed": summary.failed,
            }
        )

    job = dg.define_asset_job(RECHECK_JOB, selection=[RECHECK_ASSET])

    @dg.sensor(
        name=RECHECK_SENSOR,
        job=job,
        minimum_interval_seconds=EVALUATION_SECONDS,
        default_status=dg.DefaultSensorStatus.RUNNING,
        description="Starts the domain re-checks when a verified domain is due (30 days after "
        "its last proof, or daily during its grace).",
    )
    def _due(context: dg.SensorEvaluationContext) -> dg.SensorResult | dg.SkipReason:
        now = clock()
        with Session(engine) as db:
            due = len(due_claims(db, now))
        if not due:
            return dg.SkipReason(f"no domain is due at {now.isoformat()}")
        running = context.instance.get_runs(
            dg.RunsFilter(job_name=RECHECK_JOB, statuses=_IN_FLIGHT), limit=1
        )
        if running:
            return dg.SkipReason("the re-checks are running")
        return dg.SensorResult(
            run_requests=[
                dg.RunRequest(
                    run_key=f"domain-rechecks-{now.isoformat()}", tags={TAG_AT: now.isoformat()}
                )
            ]
        )

    return dg.Definitions(assets=[domain_rechecks], jobs=[job], sensors=[_due])

"""Operating the orchestrator: the Dagster instance's configuration, the run coordinator that
names each run's plug-in, the `almanac` pool's limit (the run slots, one by default), the
deployment hold, and backfills launched from the command line."""

import time
from collections.abc import Callable
from datetime import date, timedelta
from urllib.parse import quote

import dagster as dg

from almanac.assets.dagster_private import (
    PartitionBackfill,
    get_current_timestamp,
    make_new_backfill_id,
)
from almanac.assets.tags import POOL, TAG_PLUGIN, TAG_TRIGGER, asset_key, plugin_of_run
from almanac.platform.lifecycle import RunTrigger
from almanac.platform.store.engine import upgrade_database
from almanac.settings import Settings

DAGSTER_SCHEMA = "dagster"
"""On PostgreSQL Dagster keeps its tables in this schema of the store's own database (its
`runs` table would otherwise meet the store's)."""

_BUSY = [
    dg.DagsterRunStatus.NOT_STARTED,
    dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED,
    dg.DagsterRunStatus.CANCELING,
]


def dagster_postgres_url(database_url: str) -> str | None:
    """The URL dagster-postgres uses for the store's PostgreSQL database (its own schema), or
    None on the embedded SQLite default.

    The driver is named: SQLAlchemy 2.1 reads a bare `postgresql://` as psycopg 3, which binds
    parameters on the server, and dagster-postgres's `NOTIFY run_events, :id` is then a syntax
    error on every event it stores. dagster-postgres is written for psycopg2."""
    if not database_url.startswith("postgresql"):
        return None
    rest = database_url.split("://", 1)[1]
    separator = "&" if "?" in rest else "?"
    options = quote(f"-csearch_path={DAGSTER_SCHEMA}", safe="")
    return f"postgresql+psycopg2://{rest}{separator}options={options}"


RUN_LAUNCHER = ("almanac.run_launcher", "ForkServerRunLauncher")
SENSOR_THREADS = 4
"""Sensors the sensor daemon evaluates at once (a long tick of one delays none of the others)."""
SUBMIT_THREADS = 4
"""Runs the sensor daemon submits at once."""
RUN_COORDINATOR = ("almanac.assets.control", "PluginRunCoordinator")


class PluginRunCoordinator(dg.QueuedRunCoordinator):
    """Dagster's queued run coordinator that tags each run of one plug-in with the plug-in
    (`almanac/plugin`) when it is queued, however it was launched (the minute sensor tags its
    own; a backfill or a materialization from the Dagster UI does not): the queue's limit of
    one running run per plug-in (dagster.yaml) counts every run of it."""

    def submit_run(self, context: dg.SubmitRunContext) -> dg.DagsterRun:
        run = context.dagster_run
        plugin = plugin_of_run(run.tags, list(run.asset_selection or ()))
        if plugin is not None and TAG_PLUGIN not in run.tags:
            self._instance.add_run_tags(run.run_id, {TAG_PLUGIN: plugin})
        return super().submit_run(context)


def dagster_yaml(settings: Settings, run_launcher: tuple[str, str] = RUN_LAUNCHER) -> str:
    """dagster.yaml: queued runs (one running run per plug-in), pools enforced per run (the
    limit itself is kept in the instance, see `set_run_slots`), sensors' runs submitted in
    threads, run workers started by `run_launcher` (module, class), compute logs in files under
    Dagster's home, telemetry off, and the storage beside the store's."""
    lines = [
        "telemetry:",
        "  enabled: false",
        "run_coordinator:",
        f"  module: {RUN_COORDINATOR[0]}",
        f"  class: {RUN_COORDINATOR[1]}",
        # Runs go one at a time by default: the queue daemon looks for the next one each second
        # once the pool frees (Dagster's default is every 5 seconds, up to 5 idle seconds a run).
        "  config:",
        "    dequeue_interval_seconds: 1",
        # With more run slots, never two runs of one plug-in at once (Running rule 5).
        "    tag_concurrency_limits:",
        f"      - key: {TAG_PLUGIN}",
        "        value:",
        "          applyLimitPerUniqueValue: true",
        "        limit: 1",
        # By default each run worker is a fork of a process that imported Dagster and the code
        # location once (`almanac.run_launcher`): a fresh interpreter a run costs seconds.
        "run_launcher:",
        f"  module: {run_launcher[0]}",
        f"  class: {run_launcher[1]}",
        # What a run prints is kept for the UI in files, without Dagster's mirroring
        # processes (`almanac.compute_logs`).
        "compute_logs:",
        "  module: almanac.compute_logs",
        "  class: FileComputeLogManager",
        "  config:",
        f"    base_dir: {str(settings.dagster_home / 'storage')!r}",
        # The minute sensor submits each run it asks for (created, planned by the code server,
        # queued): in threads, one run's waits on the code server and the database overlap
        # another's (issue 33: 300 hourly runs took 157 s to submit one after the other).
        "sensors:",
        "  use_threads: true",
        f"  num_workers: {SENSOR_THREADS}",
        f"  num_submit_workers: {SUBMIT_THREADS}",
        "concurrency:",
        "  pools:",
        "    granularity: run",
        # A run worker that died (a crash, a stop of the service) is marked failed, so the
        # run-failure sensor keeps it and the pool's slot is freed.
        "run_monitoring:",
        "  enabled: true",
        "  poll_interval_seconds: 30",
    ]
    url = dagster_postgres_url(settings.database_url)
    if url is not None:
        # dagster-postgres, each storage keeping its connection (`almanac.dagster_storage`).
        lines += [
            "storage:",
            "  custom:",
            "    module: almanac.dagster_storage",
            "    class: PooledPostgresStorage",
            "    config:",
            f"      postgres_url: {url!r}",
        ]
    return "\n".join(lines) + "\n"


def prepare_dagster_storage(settings: Settings) -> None:
    """Create Dagster's schema in the store's PostgreSQL database when it is missing."""
    if not settings.database_url.startswith("postgresql"):
        return
    import psycopg

    plain = "postgresql://" + settings.database_url.split("://", 1)[1]
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{DAGSTER_SCHEMA}"')


def migrate_dagster(settings: Settings) -> None:
    """Dagster's storage made ready for this Dagster: its schema (`prepare_dagster_storage`),
    the instance's configuration, and Dagster's own migrations (`dagster instance migrate`).
    `almanac migrate`, `almanac up` while the code server loads, and a restore of a backup made
    with an older Dagster."""
    settings.dagster_home.mkdir(parents=True, exist_ok=True)
    prepare_dagster_storage(settings)
    (settings.dagster_home / "dagster.yaml").write_text(dagster_yaml(settings))
    with dg.DagsterInstance.from_config(str(settings.dagster_home)) as instance:
        instance.upgrade()


def set_run_slots(instance: dg.DagsterInstance, slots: int) -> None:
    """How many plug-in runs go at once (Running rule 5: one by default, `ALMANAC_RUN_SLOTS`
    more, never two of one plug-in; 0 holds them all)."""
    instance.event_log_storage.set_concurrency_slots(POOL, slots)


def run_slots(instance: dg.DagsterInstance) -> int | None:
    """The `almanac` pool's limit, or None when none is set."""
    if POOL not in instance.event_log_storage.get_concurrency_keys():
        return None
    return instance.event_log_storage.get_concurrency_info(POOL).slot_count


def busy_runs(instance: dg.DagsterInstance) -> list[dg.DagsterRun]:
    """Runs that left the queue and have not finished."""
    return list(instance.get_runs(dg.RunsFilter(statuses=_BUSY)))


def deploy(
    instance: dg.DagsterInstance,
    settings: Settings,
    *,
    migrate: Callable[[str], None] = upgrade_database,
    wait_seconds: float = 3600.0,
    poll_seconds: float = 2.0,
    say: Callable[[str], None] = print,
) -> None:
    """A deployment (Running rule 5: never beside a run): hold the queue (pool limit 0), wait
    for the running run, apply the store's migrations, let runs go again (limit restored to
    `settings.run_slots`, also when the migration fails).

    When runs are still going after `wait_seconds`, it gives up: TimeoutError naming them,
    nothing migrated, and the limit restored all the same (the old code keeps serving; holding
    the queue with no deployment under way would stop the service). Run it again later."""
    set_run_slots(instance, 0)
    say("runs held: new runs wait in the queue")
    try:
        deadline = time.monotonic() + wait_seconds
        quiet_once = False
        while True:
            busy = busy_runs(instance)
            if not busy and quiet_once:
                break
            if not busy:
                # A queue pass that read the limit just before it became 0 may still launch
                # a run: nothing may be running at two checks a poll apart.
                quiet_once = True
                time.sleep(poll_seconds)
                continue
            quiet_once = False
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(
                    f"gave up: {len(busy)} run(s) still going after {wait_seconds:g} seconds ("
                    + ", ".join(r.run_id for r in busy)
                    + "); nothing was migrated"
                )
            say(f"waiting for {len(busy)} running run(s)")
            time.sleep(min(poll_seconds, left))
        migrate(settings.database_url)
        say("store migrated")
    finally:
        set_run_slots(instance, settings.run_slots)
        say(f"runs go again ({settings.run_slots} at a time)")


def partition_days(first: date, last: date) -> list[str]:
    if last < first:
        raise ValueError(f"--to {last} is before --from {first}")
    return [(first + timedelta(days=n)).isoformat() for n in range((last - first).days + 1)]


def launch_backfill(
    instance: dg.DagsterInstance,
    definitions: dg.Definitions,
    plugin_id: str,
    first: date,
    last: date,
) -> str:
    """A Dagster asset backfill of the plug-in's partitions `first`..`last` (the daemon launches
    one run per day); returns the backfill id. Each run's today is its day (DECISIONS 8)."""
    repository = definitions.get_repository_def()
    key = asset_key(plugin_id)
    graph = repository.asset_graph
    if not graph.has(key):
        raise LookupError(f"plug-in {plugin_id} has no asset: it was never approved")
    partitions = graph.get(key).partitions_def
    assert partitions is not None
    days = partition_days(first, last)
    known = set(partitions.get_partition_keys(dynamic_partitions_store=instance))
    missing = [d for d in days if d not in known]
    if missing:
        raise ValueError(
            f"{plugin_id} has no partition for {missing[0]}: days run from "
            f"{partitions.get_first_partition_key()} to today"
        )
    backfill = PartitionBackfill.from_asset_partitions(
        backfill_id=make_new_backfill_id(),
        asset_graph=graph,
        partition_names=days,
        asset_selection=[key],
        backfill_timestamp=get_current_timestamp(),
        tags={TAG_PLUGIN: plugin_id, TAG_TRIGGER: str(RunTrigger.BACKFILL)},
        dynamic_partitions_store=instance,
        all_partitions=False,
        title=f"{plugin_id} {first} to {last}",
        description=None,
        run_config=None,
    )
    instance.add_backfill(backfill)
    return backfill.backfill_id

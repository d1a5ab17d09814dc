"""A deployment migrates only when nothing has run at two checks a poll apart: a run a queue
pass launched just after the limit went to 0 (it read the old limit) is waited for too."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import dagster as dg

from almanac.assets.control import deploy, run_slots, set_run_slots
from almanac.settings import Settings
from tests.orchestration.harness import write_dagster_home


def test_a_run_launched_just_after_the_hold_is_waited_for(tmp_path: Path) -> None:
    home = write_dagster_home(tmp_path / "dagster")
    settings = Settings(
        home=tmp_path, api_port=0, dagster_port=0, database_url="sqlite://", base_url="x"
    )
    events: list[tuple[str, float]] = []

    with dg.DagsterInstance.from_config(str(home)) as instance:
        set_run_slots(instance, 1)

        def late_queue_pass() -> None:
            # Starts a run after deploy's first (empty) check, ends it a little later.
            time.sleep(0.05)
            run = instance.add_run(
                dg.DagsterRun(job_name="__ASSET_JOB", status=dg.DagsterRunStatus.STARTED)
            )
            events.append(("run started", time.monotonic()))
            time.sleep(0.5)
            # The run ends as its deletion starts: deleting a run's rows takes Dagster a second
            # or more here, and the run counts as going until they are gone.
            events.append(("run ended", time.monotonic()))
            instance.delete_run(run.run_id)

        def migrate(url: str) -> None:
            events.append(("migrated", time.monotonic()))
            assert run_slots(instance) == 0

        late = threading.Thread(target=late_queue_pass)
        late.start()
        try:
            deploy(
                instance,
                settings,
                migrate=migrate,
                wait_seconds=30,
                poll_seconds=0.5,
                say=lambda _: None,
            )
        finally:
            late.join()
        assert [name for name, _ in sorted(events, key=lambda e: e[1])] == [
            "run started",
            "run ended",
            "migrated",
        ]
        assert run_slots(instance) == 1

"""The few names Almanac takes from Dagster's private modules, in one place.

Dagster is pinned to `1.13.*` (pyproject.toml) because of them: each has no public equivalent in
1.13, and a minor upgrade must check each again.
- `IMPLICIT_ASSET_JOB_NAME`: the minute sensor targets Dagster's implicit asset job, the only
  job that may hold assets whose partitions differ (each plug-in's zone and first day).
- `get_current_datetime`, `get_current_timestamp`: Dagster's own clock, the one its daemon and
  its test utilities' `freeze_time` move; the sensor's evaluation moment and a backfill's
  time stamp must agree with it.
- `PartitionBackfill`, `make_new_backfill_id`: `almanac backfill` adds an asset backfill to the
  instance as the UI's launch does, so the backfill daemon runs it; the public API launches
  backfills only through GraphQL.
- `DefinitionsLoadContext`, `DefinitionsLoadType`: a run worker reconstructs the definitions
  (RECONSTRUCTION) where a code server defines them (INITIALIZATION); only a reconstruction for
  a run builds just the run's plug-ins (`almanac.definitions.run_worker_selection`, which also
  reads the run from the `dagster_run` argument of Dagster's run execution on the stack).
- `execute_run_command`, `ExecuteRunArgs`, `LaunchRunContext`, `CheckRunHealthResult`,
  `WorkerStatus`, `ConfigurableClassData`: the run launcher (`almanac.run_launcher`) runs
  `dagster api execute_run` in a forked process; Dagster exports the launcher base classes but
  not the types of their methods, nor the command's body.
- `LocalComputeLogManager`, `CapturedLogContext`, `ComputeIOType`, `IO_TYPE_EXTENSION`,
  `redirect_to_file`, `ensure_file`, `touch_file`: the compute log manager
  (`almanac.compute_logs`) is Dagster's local one with its capture made without the mirroring
  processes; Dagster documents the class but exports it from no public module.
"""

from dagster._cli.api import execute_run_command
from dagster._core.definitions.assets.job.asset_job import IMPLICIT_ASSET_JOB_NAME
from dagster._core.definitions.definitions_load_context import (
    DefinitionsLoadContext,
    DefinitionsLoadType,
)
from dagster._core.execution.backfill import PartitionBackfill
from dagster._core.execution.compute_logs import redirect_to_file
from dagster._core.launcher import CheckRunHealthResult, LaunchRunContext, WorkerStatus
from dagster._core.storage.compute_log_manager import CapturedLogContext, ComputeIOType
from dagster._core.storage.local_compute_log_manager import (
    IO_TYPE_EXTENSION,
    LocalComputeLogManager,
)
from dagster._core.utils import make_new_backfill_id
from dagster._grpc.types import ExecuteRunArgs
from dagster._serdes.config_class import ConfigurableClassData
from dagster._time import get_current_datetime, get_current_timestamp
from dagster._utils import ensure_file, touch_file

__all__ = [
    "IMPLICIT_ASSET_JOB_NAME",
    "IO_TYPE_EXTENSION",
    "CapturedLogContext",
    "CheckRunHealthResult",
    "ComputeIOType",
    "ConfigurableClassData",
    "DefinitionsLoadContext",
    "DefinitionsLoadType",
    "ExecuteRunArgs",
    "LaunchRunContext",
    "LocalComputeLogManager",
    "PartitionBackfill",
    "WorkerStatus",
    "ensure_file",
    "execute_run_command",
    "get_current_datetime",
    "get_current_timestamp",
    "make_new_backfill_id",
    "redirect_to_file",
    "touch_file",
]

"""The compute log manager `almanac up` configures: Dagster's local one, each run worker's
stdout and stderr kept in the files the Dagster UI shows, without a copy to the worker's own
streams (issue 19, run overhead).

Dagster's `LocalComputeLogManager` also mirrors what it captures to the worker's streams, by a
`tail -F` and a Python watcher process for each stream: four processes a run, started at its
first step and stopped at its end, about a fifth of a small run's overhead. What a run prints is
in the UI's logs of the run all the same; it is no longer repeated in the daemon's output.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Self

from almanac.assets.dagster_private import (
    IO_TYPE_EXTENSION,
    CapturedLogContext,
    ComputeIOType,
    ConfigurableClassData,
    LocalComputeLogManager,
    ensure_file,
    redirect_to_file,
    touch_file,
)


class FileComputeLogManager(LocalComputeLogManager):
    """`LocalComputeLogManager` capturing into its files only; see the module."""

    @classmethod
    def from_config_value(
        cls, inst_data: ConfigurableClassData | None, config_value: Mapping[str, Any]
    ) -> Self:
        return cls(inst_data=inst_data, **config_value)

    @contextmanager
    def capture_logs(self, log_key: Sequence[str]) -> Iterator[CapturedLogContext]:
        out = self.get_captured_local_path(log_key, IO_TYPE_EXTENSION[ComputeIOType.STDOUT])
        err = self.get_captured_local_path(log_key, IO_TYPE_EXTENSION[ComputeIOType.STDERR])
        ensure_file(out)
        ensure_file(err)
        with redirect_to_file(sys.stdout, out), redirect_to_file(sys.stderr, err):
            yield CapturedLogContext(log_key)
        # As Dagster's: the file that tells the UI the capture is complete.
        touch_file(self.complete_artifact_path(log_key))  # type: ignore[no-untyped-call]

"""The locked room's limits and the sentences a run fails with when it crosses one.

Specification: "The locked room" rule 4 and "Limits" (120 seconds and 256 MB, or the manifest's
lower `limits`; 32 tasks; 64 MB of output).
"""

from __future__ import annotations

import math
import os
import resource
from dataclasses import dataclass
from typing import Literal

from almanac.platform.contract.manifest import Manifest

DEFAULT_SECONDS = 120
DEFAULT_MEGABYTES = 256
TASKS = 32
OUTPUT_BYTES = 64 * 1024 * 1024
MB = 1024 * 1024

KilledBy = Literal["time", "memory", "output", "tasks"]


@dataclass(frozen=True, slots=True)
class RoomLimits:
    """What one run may use. Tests lower them to stay fast; nothing raises them past the spec."""

    seconds: float = DEFAULT_SECONDS
    megabytes: int = DEFAULT_MEGABYTES
    tasks: int = TASKS
    output_bytes: int = OUTPUT_BYTES

    def __post_init__(self) -> None:
        if not 0 < self.seconds <= DEFAULT_SECONDS:
            raise ValueError(f"seconds must be in (0, {DEFAULT_SECONDS}], got {self.seconds}")
        if not 16 <= self.megabytes <= DEFAULT_MEGABYTES:
            raise ValueError(f"megabytes must be 16 to {DEFAULT_MEGABYTES}, got {self.megabytes}")
        if not 8 <= self.tasks <= TASKS:
            raise ValueError(f"tasks must be 8 to {TASKS}, got {self.tasks}")
        if not 0 < self.output_bytes <= OUTPUT_BYTES:
            raise ValueError(f"output_bytes must be 1 to {OUTPUT_BYTES}, got {self.output_bytes}")

    @classmethod
    def for_manifest(cls, manifest: Manifest) -> RoomLimits:
        """The defaults lowered by the manifest's `limits` (Manifest: Limits, which the contract
        lets only lower them; a manifest without `limits` has the defaults)."""
        return cls(seconds=manifest.limits.seconds, megabytes=manifest.limits.megabytes)

    @property
    def memory_bytes(self) -> int:
        return self.megabytes * MB

    @property
    def heap_megabytes(self) -> int:
        """V8's old-space cap, about half the memory limit, so a heap bomb ends with V8's own
        clear out-of-memory error before the cgroup's OOM killer has to act."""
        return max(8, self.megabytes // 2)

    @property
    def tmpfs_bytes(self) -> int:
        """The temporary folder's size cap. Its pages are also charged to the room's memory
        cgroup, so files plus heap together stay under the memory limit."""
        return self.memory_bytes


def limit_sentence(killed_by: KilledBy, limits: RoomLimits) -> str:
    """The reason a run fails with when it crosses a limit (The write, rule 4)."""
    if killed_by == "time":
        seconds = limits.seconds
        shown = int(seconds) if float(seconds).is_integer() else seconds
        return f"ran past {shown} seconds"
    if killed_by == "memory":
        return f"used more than {limits.megabytes} MB"
    if killed_by == "output":
        return f"printed more than {limits.output_bytes // MB} MB"
    return f"started more than {limits.tasks} tasks"


def rlimits(limits: RoomLimits, *, dedicated_user: bool) -> dict[int, tuple[int, int]]:
    """The resource limits set on bubblewrap's processes before Node starts: the floor under
    the cgroup limits, which hold even on a host without cgroups.

    - RLIMIT_AS is not used: V8 reserves gigabytes of address space it never touches (the
      pointer-compression cage, code range, WebAssembly guards), so an address-space cap breaks
      Node long before it uses memory. RLIMIT_DATA is no memory limit either: measured on Node
      24.19, V8 maps about 650 MB of writable private memory it has not touched (the code range
      among it) and fails to start under 700 MB. It is set to 1 GiB plus the memory limit, a
      ceiling for a host without a memory cgroup; the memory cgroup (which also counts the
      temporary folder's pages) and V8's heap cap are the real memory limit.
    - RLIMIT_NPROC counts every process and thread of the real uid, so it is set only when the
      room runs as its dedicated user (nothing else runs as that uid; runs go one at a time),
      a few above the task limit so that the pids cgroup, which reports the hit, trips first.
    - RLIMIT_CPU backs the wall-clock deadline (SIGXCPU counts as the time limit);
      RLIMIT_CORE 0 so an aborting V8 leaves no core file behind.
    """
    # Node's threads use every core, so CPU time may run ahead of the wall clock: the backstop
    # allows the wall-clock limit on each core.
    cpu = math.ceil(limits.seconds) * (os.cpu_count() or 1) + 2
    data = 1024 * MB + limits.memory_bytes
    values = {
        resource.RLIMIT_CORE: (0, 0),
        resource.RLIMIT_CPU: (cpu, cpu),
        resource.RLIMIT_DATA: (data, data),
        resource.RLIMIT_NOFILE: (1024, 1024),
        resource.RLIMIT_MEMLOCK: (0, 0),
        resource.RLIMIT_MSGQUEUE: (0, 0),
    }
    if dedicated_user:
        values[resource.RLIMIT_NPROC] = (limits.tasks + 4, limits.tasks + 4)
    return values

"""`almanac up`: the Dagster webserver, the Dagster daemon and the API as child processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from almanac.settings import Settings, load_settings

WORKSPACE = Path(__file__).resolve().parents[2] / "workspace.yaml"


def _dagster_yaml(settings: Settings) -> str:
    return (
        "telemetry:\n  enabled: false\n"
        "run_coordinator:\n  module: dagster._core.run_coordinator\n"
        "  class: QueuedRunCoordinator\n"
    )


def run_service(settings: Settings | None = None) -> int:
    """Start every part of the service and wait; Ctrl-C stops them all cleanly."""
    settings = settings or load_settings()
    settings.dagster_home.mkdir(parents=True, exist_ok=True)
    (settings.dagster_home / "dagster.yaml").write_text(_dagster_yaml(settings))
    env = dict(os.environ, DAGSTER_HOME=str(settings.dagster_home))
    bin_dir = Path(sys.executable).parent
    commands = {
        "dagster-webserver": [
            str(bin_dir / "dagster-webserver"),
            "-w",
            str(WORKSPACE),
            "-h",
            "127.0.0.1",
            "-p",
            str(settings.dagster_port),
        ],
        "dagster-daemon": [str(bin_dir / "dagster-daemon"), "run", "-w", str(WORKSPACE)],
    }
    children = {name: subprocess.Popen(cmd, env=env) for name, cmd in commands.items()}
    print(f"Almanac is starting in {settings.home}")
    print(f"  Dagster UI: http://127.0.0.1:{settings.dagster_port}")
    print("Press Ctrl-C to stop.", flush=True)
    try:
        while all(child.poll() is None for child in children.values()):
            time.sleep(0.5)
        failed = [name for name, child in children.items() if child.poll() is not None]
        print(f"almanac: {', '.join(failed)} stopped; stopping the rest", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        for child in children.values():
            if child.poll() is None:
                child.send_signal(signal.SIGINT)
        for child in children.values():
            try:
                child.wait(timeout=20)
            except subprocess.TimeoutExpired:
                child.kill()

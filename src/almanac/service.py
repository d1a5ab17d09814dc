"""`almanac up`: the store migrated, the example plug-ins registered (Pending until a person
approves them), then the code location's code server and the API, Dagster's storage made ready
while they start, and once the code server serves, the Dagster webserver and the Dagster
daemon: child processes kept running by `almanac.supervisor`, and the watch that reloads the
code server when the plug-in catalog changes (`almanac.code_server`); Ctrl-C (or SIGTERM)
stops them all and leaves nothing running.

Past one machine (issue 34) the same parts start by role on the same `ALMANAC_DATABASE_URL`:
`almanac migrate` once, then `almanac up --only api` on each API machine and `almanac up
--only dagster` on the Dagster machine."""

from __future__ import annotations

import gc
import os
import signal
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from almanac.code_server import (
    catalog_watch,
    code_server_command,
    wait_until_served,
)
from almanac.settings import Settings, load_settings
from almanac.supervisor import PARTS_FILE, Supervisor

if TYPE_CHECKING:
    from fastapi import FastAPI

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
CODE_SERVER_START_SECONDS = 600


def api_app() -> FastAPI:
    """The API for uvicorn's `--factory`: settings, store and mail from the environment."""
    from almanac.api.app import create_app
    from almanac.platform.store.engine import make_engine
    from almanac.sandbox.smtp import load_mail_settings, mailer_for

    settings = load_settings()
    engine = make_engine(settings.database_url)
    app = create_app(
        settings,
        clock=lambda: datetime.now(UTC),
        mailer=mailer_for(load_mail_settings(os.environ), engine),
        engine=engine,
    )
    # The loaded modules are some 200,000 objects that live as long as the process; frozen,
    # the collector stops walking them, and a full collection in the middle of a request takes
    # a few ms instead of 100 to 250 (bench_reader_days' p95).
    gc.collect()
    gc.freeze()
    return app


ROLES = ("api", "dagster")
"""What `almanac up --only` starts: the API workers alone, or Dagster's parts alone (the code
server, the webserver, the daemon with its run launcher, and the catalog watch)."""


ROLE_PARTS: dict[str | None, tuple[str, ...]] = {
    None: ("api", "dagster-webserver", "dagster-daemon"),
    "api": ("api",),
    "dagster": ("dagster-webserver", "dagster-daemon"),
}
"""The processes of `commands` each role starts besides its code server (if any): the API with
the code server (it needs neither the code server nor Dagster, so readers are answered while
Dagster's parts start), the webserver and the daemon once the code server serves."""


def role_refusal(settings: Settings, role: str | None) -> str | None:
    """Why `role` cannot start on its own with these settings, or None: the embedded default
    is one SQLite file on one machine, which no part on another machine can reach."""
    if role is None or not settings.database_url.startswith("sqlite"):
        return None
    return (
        f"--only {role}: the embedded default (SQLite, ALMANAC_DATABASE_URL unset) is one file "
        "on this machine, shared by every part of `almanac up`, so no part can run on a machine "
        "of its own; set ALMANAC_DATABASE_URL to a PostgreSQL database to start roles apart"
    )


def migrate(
    settings: Settings, *, examples: Path | None = EXAMPLES
) -> tuple[list[str], list[tuple[str, str]]]:
    """`almanac migrate`, once before any role starts: `migrate_store`, then `migrate_dagster`.
    Returns the example ids registered and the (id, digest) approved now."""
    from almanac.assets.control import migrate_dagster

    registered, approved = migrate_store(settings, examples=examples)
    migrate_dagster(settings)
    return registered, approved


def migrate_store(
    settings: Settings, *, examples: Path | None = EXAMPLES
) -> tuple[list[str], list[tuple[str, str]]]:
    """What the API and the code server need: folders, the store's migrations, and the example
    plug-ins (registered, and approved by digest on a fresh store so they show in the Dagster
    UI and run on their own; on PostgreSQL as on the embedded default). Returns the example
    ids registered and the (id, digest) approved now."""
    from almanac.orchestration.folders import approve_first_versions, register_examples
    from almanac.platform.store.engine import make_engine, upgrade_database

    settings.home.mkdir(parents=True, exist_ok=True)
    settings.dagster_home.mkdir(parents=True, exist_ok=True)
    upgrade_database(settings.database_url)
    registered: list[str] = []
    approved: list[tuple[str, str]] = []
    if examples is not None and examples.is_dir():
        engine = make_engine(settings.database_url)
        try:
            now = datetime.now(UTC)
            registered, refused = register_examples(engine, examples, now=now)
            for reason in refused:
                print(f"  example refused: {reason}", file=sys.stderr)
            approved = approve_first_versions(engine, registered, now=now)
        finally:
            engine.dispose()
    return registered, approved


def prepare_dagster(settings: Settings) -> None:
    """What Dagster's parts need on their machine: its configuration and workspace under
    `ALMANAC_HOME/dagster`, and the pool's limit (`ALMANAC_RUN_SLOTS`)."""
    import dagster as dg

    from almanac.assets.control import dagster_yaml, set_run_slots
    from almanac.code_server import workspace_yaml

    settings.dagster_home.mkdir(parents=True, exist_ok=True)
    (settings.dagster_home / "dagster.yaml").write_text(dagster_yaml(settings))
    workspace(settings).write_text(workspace_yaml(settings))
    with dg.DagsterInstance.from_config(str(settings.dagster_home)) as instance:
        set_run_slots(instance, settings.run_slots)


def prepare(
    settings: Settings, *, examples: Path | None = EXAMPLES
) -> tuple[list[str], list[tuple[str, str]]]:
    """Everything before `almanac up` starts every part: `migrate`, then `prepare_dagster`.
    Returns what `migrate` returns."""
    registered, approved = migrate(settings, examples=examples)
    prepare_dagster(settings)
    return registered, approved


def say_examples(registered: list[str], approved: list[tuple[str, str]]) -> None:
    """What `migrate_store` did with the example plug-ins, for the operator."""
    if registered:
        print(f"  example plug-ins: {', '.join(registered)}")
    for plugin_id, digest in approved:
        print(f"  approved at first start: {plugin_id} {digest}")


def unmigrated(settings: Settings) -> str | None:
    """Why a role may not start on this store yet (its migrations not applied), or None."""
    from almanac.platform.store.engine import unapplied_migrations

    missing = unapplied_migrations(settings.database_url)
    if not missing:
        return None
    return (
        f"the store has not been migrated to this almanac's schema (missing {', '.join(missing)})"
        ": run `almanac migrate` once first (or start the role with --migrate)"
    )


def workspace(settings: Settings) -> Path:
    """The webserver's and the daemon's workspace: the code server `almanac up` starts."""
    return settings.dagster_home / "workspace.yaml"


def commands(settings: Settings) -> dict[str, list[str]]:
    """The processes besides the code server (`ROLE_PARTS` says which a role starts, and
    when)."""
    bin_dir = Path(sys.executable).parent
    return {
        "dagster-webserver": [
            str(bin_dir / "dagster-webserver"),
            "-w",
            str(workspace(settings)),
            "-h",
            settings.host,
            "-p",
            str(settings.dagster_port),
        ],
        "dagster-daemon": [
            str(bin_dir / "dagster-daemon"),
            "run",
            "-w",
            str(workspace(settings)),
        ],
        "api": [
            sys.executable,
            "-m",
            "uvicorn",
            "almanac.service:api_app",
            "--factory",
            "--host",
            settings.host,
            "--port",
            str(settings.api_port),
            *(["--workers", str(settings.api_workers)] if settings.api_workers > 1 else []),
        ],
    }


def _print_error(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class _Stop(Exception):
    pass


def _raise_stop(signum: int, frame: FrameType | None) -> None:
    raise _Stop


def _announce(settings: Settings, role: str | None) -> None:
    if role in (None, "dagster"):
        print(f"  Dagster UI: http://{settings.host}:{settings.dagster_port}")
    if role in (None, "api"):
        workers = f" ({settings.api_workers} workers)" if settings.api_workers > 1 else ""
        print(f"  API:        http://{settings.host}:{settings.api_port}{workers}")
    print("Press Ctrl-C to stop.", flush=True)


def _store_migrated(settings: Settings, migrating: bool) -> bool:
    """`almanac up` migrates the store (Dagster's storage follows while the code server loads);
    a role migrates only when asked, else refuses an unmigrated store. True when the parts may
    start."""
    if not migrating:
        why = unmigrated(settings)
        if why is not None:
            print(f"almanac: {why}", file=sys.stderr)
        return why is None
    say_examples(*migrate_store(settings))
    return True


def run_service(
    settings: Settings | None = None, role: str | None = None, *, migrate_first: bool = False
) -> int:
    """Start every part of the service (or those of `role`, one of `ROLES`) and wait; Ctrl-C
    or SIGTERM stops them all cleanly."""
    settings = settings or load_settings()
    what = "Almanac" if role is None else f"Almanac's {role} role"
    print(f"{what} is starting in {settings.home}", flush=True)
    migrating = role is None or migrate_first
    if not _store_migrated(settings, migrating):
        return 1
    settings.home.mkdir(parents=True, exist_ok=True)
    dagster = role in (None, "dagster")
    env = dict(
        os.environ,
        DAGSTER_HOME=str(settings.dagster_home),
        ALMANAC_HOME=str(settings.home),
        ALMANAC_DATABASE_URL=settings.database_url,
    )
    env.pop("ALMANAC_DEFINITIONS_SNAPSHOT", None)
    previous = {s: signal.signal(s, _raise_stop) for s in (signal.SIGINT, signal.SIGTERM)}
    parts = Supervisor(env, settings.home / PARTS_FILE, _print_error)
    later = {name: c for name, c in commands(settings).items() if name in ROLE_PARTS[role]}
    api = later.pop("api", None)
    parts.expect([*(["code-server"] if dagster else []), *ROLE_PARTS[role]])
    watch = catalog_watch(settings) if dagster else None
    try:
        if watch is not None:
            # Read before the code server's first load, so no change after that load is missed.
            watch.start()
            code_server = parts.start("code-server", code_server_command(settings))
        if api is not None:
            parts.start("api", api)
        if watch is not None:
            # Dagster's storage for the webserver and the daemon, while the code server loads.
            if migrating:
                from almanac.assets.control import migrate_dagster

                migrate_dagster(settings)
            prepare_dagster(settings)
            why = wait_until_served(
                settings,
                lambda: code_server.poll() is None,
                time.monotonic() + CODE_SERVER_START_SECONDS,
            )
            if why is not None:
                print(f"almanac: {why}; stopping", file=sys.stderr)
                return 1
        for name, command in later.items():
            parts.start(name, command)
        _announce(settings, role)
        while (why := parts.poll(time.monotonic())) is None:
            time.sleep(0.5)
        print(f"almanac: {why}; stopping the rest", file=sys.stderr)
        return 1
    except _Stop:
        print("almanac: stopping", flush=True)
        return 0
    finally:
        for s in (signal.SIGINT, signal.SIGTERM):
            signal.signal(s, signal.SIG_IGN)
        if watch is not None:
            watch.stop()
        parts.stop_all()
        for s, handler in previous.items():
            signal.signal(s, handler)

"""Process settings read once from the environment at the edge, never deep in the domain."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Settings:
    home: Path
    api_port: int
    dagster_port: int
    database_url: str
    base_url: str
    run_slots: int = 1
    """How many plug-in runs may go at once (the `almanac` pool's limit; Running rule 5 asks
    for one; a bigger host may allow more)."""

    @property
    def dagster_home(self) -> Path:
        return self.home / "dagster"


def load_settings(environ: dict[str, str] | None = None) -> Settings:
    """Settings from `ALMANAC_HOME`, `ALMANAC_PORT`, `ALMANAC_DAGSTER_PORT`,
    `ALMANAC_DATABASE_URL`, `ALMANAC_BASE_URL` and `ALMANAC_RUN_SLOTS`, with the embedded
    defaults."""
    env = os.environ if environ is None else environ
    home = Path(env.get("ALMANAC_HOME") or Path.home() / ".almanac").resolve()
    api_port = int(env.get("ALMANAC_PORT", "8000"))
    return Settings(
        home=home,
        api_port=api_port,
        dagster_port=int(env.get("ALMANAC_DAGSTER_PORT", "3000")),
        database_url=env.get("ALMANAC_DATABASE_URL") or f"sqlite:///{home / 'almanac.db'}",
        base_url=env.get("ALMANAC_BASE_URL") or f"http://127.0.0.1:{api_port}",
        run_slots=int(env.get("ALMANAC_RUN_SLOTS", "1")),
    )

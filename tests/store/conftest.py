"""Store tests run on PostgreSQL and on SQLite, each schema made by the migrations."""

from __future__ import annotations

import itertools
import shutil
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from sqlalchemy import Engine

from almanac.platform.contract.manifest import Series, Snapshot
from almanac.platform.contract.windows import parse_window
from almanac.platform.lifecycle import RunTrigger
from almanac.platform.store import moves
from almanac.platform.store.engine import make_engine, upgrade_database, write_transaction
from almanac.platform.store.plugins import plugin_status
from almanac.platform.store.versions import register_version
from almanac.platform.store.write import RunFacts, WriteResult, record_failed_run, write_run

REPO_ROOT = Path(__file__).resolve().parents[2]
T0 = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)
TODAY = date(2026, 11, 2)


@pytest.fixture(scope="session")
def migrated_postgres(postgres_url: str) -> str:
    upgrade_database(postgres_url)
    return postgres_url


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("template") / "almanac.db"
    upgrade_database(f"sqlite:///{path}")
    return path


@pytest.fixture(params=["postgresql", "sqlite"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgresql":
        return request.getfixturevalue("migrated_postgres")
    path = tmp_path / "almanac.db"
    shutil.copy(request.getfixturevalue("sqlite_template"), path)
    return f"sqlite:///{path}"


@pytest.fixture
def engine(db_url: str) -> Iterator[Engine]:
    engine = make_engine(db_url)
    yield engine
    engine.dispose()


def series_of(key: str, kind: str, snapshot: tuple[str, str] | None = None) -> Series:
    snap = Snapshot(parse_window(snapshot[0]), parse_window(snapshot[1])) if snapshot else None
    return Series(
        key=key,
        kind=kind,
        cadence="irregular",
        dates="observation",
        name={"en": key},
        fields=("rate",) if kind == "value" else (),
        snapshot=snap,
    )


def value(day: str, rate: float, series: str = "rate", **extra: Any) -> dict[str, Any]:
    return {"kind": "value", "series": series, "date": day, "fields": {"rate": rate}, **extra}


def event(day: str, ident: str, state: str = "scheduled", series: str = "ev", **extra: Any):
    return {"kind": "event", "series": series, "date": day, "id": ident, "state": state, **extra}


def item(day: str, ident: str, title: str = "t", series: str = "news") -> dict[str, Any]:
    return {
        "kind": "item",
        "series": series,
        "date": day,
        "id": ident,
        "title": title,
        "url": f"https://example.org/{ident}",
    }


@dataclass
class Plug:
    """One plug-in in the store under test, with a clock that moves a minute per action."""

    engine: Engine
    series: Sequence[Series]
    id: str = field(default_factory=lambda: f"p{uuid.uuid4().hex[:12]}")
    retain: str = "yes"
    clock: itertools.count = field(default_factory=itertools.count)
    version_id: int = 0
    digest: str = ""

    def now(self) -> datetime:
        return T0 + timedelta(minutes=next(self.clock))

    @property
    def manifest(self) -> SimpleNamespace:
        return SimpleNamespace(series=tuple(self.series))

    def manifest_doc(self, version: str) -> dict[str, Any]:
        return {"id": self.id, "version": version, "licence": {"retain": self.retain}}

    def register(self, digest: str, version: str = "1.0.0", origin: str = "upload") -> int:
        with write_transaction(self.engine) as conn:
            return register_version(
                conn,
                manifest=self.manifest_doc(version),
                digest=digest,
                files={"fetch.mjs": digest.encode(), "plugin.json": b"{}"},
                origin=origin,
                by="dev@example.org",
                now=self.now(),
            )

    def approve(self, digest_shown: str | None = None) -> int:
        with write_transaction(self.engine) as conn:
            status = plugin_status(conn, self.id)
            request = moves.approve(
                conn,
                self.id,
                digest_shown=digest_shown or status.current_digest,
                by="host@example.org",
                now=self.now(),
            )
        with self.engine.connect() as conn:
            status = plugin_status(conn, self.id)
        self.version_id, self.digest = status.approved_version_id, status.approved_digest
        return request

    def ready(self) -> Plug:
        self.register("d1")
        self.approve()
        return self

    def facts(self, today: date = TODAY, trigger: RunTrigger = RunTrigger.SCHEDULE) -> RunFacts:
        start = self.now()
        return RunFacts(today=today, trigger=trigger, started_at=start, now=self.now())

    def write(
        self,
        batch: Sequence[dict[str, Any]],
        today: date = TODAY,
        trigger: RunTrigger = RunTrigger.SCHEDULE,
        orchestrator_run: str | None = None,
        **kwargs: Any,
    ) -> WriteResult:
        return write_run(
            self.engine,
            plugin_id=self.id,
            version_id=self.version_id,
            digest=self.digest,
            manifest=self.manifest,  # type: ignore[arg-type]
            run=replace(self.facts(today, trigger), orchestrator_run=orchestrator_run),
            batch=batch,
            **kwargs,
        )

    def fail(self, reason: str = "boom", trigger: RunTrigger = RunTrigger.SCHEDULE) -> int:
        return record_failed_run(
            self.engine,
            plugin_id=self.id,
            version_id=self.version_id,
            digest=self.digest,
            run=self.facts(TODAY, trigger),
            reason=reason,
        )

    def state(self) -> str:
        with self.engine.connect() as conn:
            return str(plugin_status(conn, self.id).state)


@pytest.fixture
def plug(engine: Engine) -> Plug:
    """An approved plug-in with a value series `rate` (no window), an event series `ev` and an
    item series `news`."""
    return Plug(
        engine, [series_of("rate", "value"), series_of("ev", "event"), series_of("news", "item")]
    ).ready()

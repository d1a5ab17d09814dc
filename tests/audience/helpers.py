"""Putting plug-ins and their records in the store for audience and reader API tests: the
store's own functions (register, approve, the write of a checked batch), never raw rows."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, text, update

from almanac.platform.contract.digest import covered_files, digest_of_files
from almanac.platform.contract.manifest import Manifest, parse_manifest
from almanac.platform.contract.records import check_batch
from almanac.platform.lifecycle import RunTrigger
from almanac.platform.store import moves
from almanac.platform.store.engine import write_transaction
from almanac.platform.store.plugins import plugin_status
from almanac.platform.store.tables import plugins
from almanac.platform.store.versions import register_version
from almanac.platform.store.write import RunFacts, record_failed_run, write_run
from tests.conftest import REPO

EXAMPLES = REPO / "examples"
# Rows of the audience tables reference accounts and organizations, which the API tests empty
# before each test; these go first. Plug-ins, versions and records stay for the session.
AUDIENCE_TABLES = (
    "reports",
    "reader_shown_preferences",
    "organization_shown_defaults",
    "plugin_reader_people",
    "plugin_reader_organizations",
)


def empty_audience_tables(engine: Engine) -> None:
    with engine.begin() as conn:
        for table in AUDIENCE_TABLES:
            conn.execute(text(f"DELETE FROM {table}"))
        conn.execute(text("UPDATE plugins SET publisher_organization_id = NULL"))


def fresh_id(prefix: str = "r") -> str:
    """Plug-in ids are never reused, and the session's tests share one database."""
    return f"{prefix}{uuid.uuid4().hex[:12]}"


class StoredPlugin:
    """One plug-in registered in the store, with a clock that moves a minute per action."""

    def __init__(self, engine: Engine, manifest_doc: Mapping[str, Any], start: datetime) -> None:
        self.engine = engine
        self.doc = dict(manifest_doc)
        self.id = self.doc["id"]
        self.moment = start
        self.files: dict[str, bytes] = {}
        self.version_id = 0
        self.digest = ""

    def now(self) -> datetime:
        self.moment += timedelta(minutes=1)
        return self.moment

    @property
    def manifest(self) -> Manifest:
        result = parse_manifest(self.doc, folder_name=self.id)
        assert result.manifest is not None, [p.message for p in result.problems]
        return result.manifest

    def register(self, files: Mapping[str, bytes] | None = None) -> StoredPlugin:
        self.files = dict(files or {"fetch.mjs": b"// prints the records\n"})
        self.files["plugin.json"] = json.dumps(self.doc, ensure_ascii=False).encode()
        with write_transaction(self.engine) as conn:
            register_version(
                conn,
                manifest=self.doc,
                digest=digest_of_files(self.files),
                files=self.files,
                origin="folder",
                by="host@example.org",
                now=self.now(),
            )
        return self

    def approve(self) -> StoredPlugin:
        with write_transaction(self.engine) as conn:
            status = plugin_status(conn, self.id)
            moves.approve(
                conn, self.id, digest_shown=status.current_digest, by="host@example.org",
                now=self.now(),
            )  # fmt: skip
            status = plugin_status(conn, self.id)
        self.version_id, self.digest = status.approved_version_id, status.approved_digest
        return self

    def facts(self, today: date) -> RunFacts:
        start = self.now()
        return RunFacts(today=today, trigger=RunTrigger.SCHEDULE, started_at=start, now=self.now())

    def write(
        self, records: Iterable[Mapping[str, Any]], today: date, run: RunFacts | None = None
    ) -> None:
        """A successful run printing these records, checked by the contract first; `run` the
        run's own facts (when it started and ended, why) instead of the next two minutes'."""
        lines = [json.dumps(r, ensure_ascii=False) for r in records]
        batch = check_batch(lines, self.manifest, today)
        assert batch.ok, [p.message for p in batch.problems]
        write_run(
            self.engine,
            plugin_id=self.id,
            version_id=self.version_id,
            digest=self.digest,
            manifest=self.manifest,
            run=run or self.facts(today),
            batch=batch.records,
        )

    def fail(self, today: date, run: RunFacts | None = None) -> None:
        record_failed_run(
            self.engine,
            plugin_id=self.id,
            version_id=self.version_id,
            digest=self.digest,
            run=run or self.facts(today),
            reason="could not download rates: HTTP 503",
        )

    def pause(self) -> None:
        with write_transaction(self.engine) as conn:
            moves.pause(conn, self.id, by="host@example.org", now=self.now())

    def remove(self) -> None:
        with write_transaction(self.engine) as conn:
            moves.remove(conn, self.id, by="host@example.org", now=self.now())

    def new_version(self) -> None:
        """A changed covered file: the plug-in waits in Pending for the new version."""
        self.doc["version"] = "9.9.9"
        self.register({**self.files, "fetch.mjs": self.files["fetch.mjs"] + b"// new\n"})

    def update(self, version: str, **changes: Any) -> None:
        """A new version with these manifest changes (and a changed fetcher), approved by its
        digest at the host: the next write is its run."""
        self.doc.update(version=version, **changes)
        fetch = self.files["fetch.mjs"] + f"// {version}\n".encode()
        self.register({**self.files, "fetch.mjs": fetch})
        self.approve()

    def take_down(self, message: str) -> None:
        with write_transaction(self.engine) as conn:
            moves.set_taken_down(conn, self.id, True, by="host@example.org", now=self.now())
            conn.execute(
                update(plugins).where(plugins.c.id == self.id).values(takedown_message=message)
            )

    def publish_as(self, organization_id: int) -> None:
        with write_transaction(self.engine) as conn:
            conn.execute(
                update(plugins)
                .where(plugins.c.id == self.id)
                .values(publisher_organization_id=organization_id)
            )


def run_today(records: Sequence[Mapping[str, Any]], reader_today: str) -> date:
    """A run's today late enough for every record but scheduled events (Batch rules)."""
    dates = [r["date"] for r in records if r.get("state") != "scheduled"]
    return date.fromisoformat(max([reader_today, *dates]))


def store_case_records(plugin: StoredPlugin, records: Sequence[Mapping[str, Any]], today: str):
    """Store a conformance case's records: a record carrying `movedTo` is written first on its
    old date, and a later run prints the same id on the new date, so the store marks the move
    itself ("Event record")."""
    plain = [{k: v for k, v in r.items() if k != "movedTo"} for r in records]
    moved = {(r["series"], r["id"]) for r in records if r.get("movedTo")}
    first = [
        r
        for r, original in zip(plain, records, strict=True)
        if (r["series"], r.get("id")) not in moved or original.get("movedTo")
    ]
    later = [
        r
        for r, original in zip(plain, records, strict=True)
        if (r["series"], r.get("id")) in moved and not original.get("movedTo")
    ]
    day = run_today(plain, today)
    if first:
        plugin.write(first, day)
    if later:
        plugin.write(later, day)


def example_plugin(engine: Engine, name: str, start: datetime, **changes: Any) -> StoredPlugin:
    """An examples/<name> folder registered under a fresh id (its covered files, its manifest
    with `changes`), approved."""
    folder = EXAMPLES / name
    doc = json.loads((folder / "plugin.json").read_text(encoding="utf-8"))
    doc.update(id=fresh_id(name[:8] + "-"), **changes)
    files = {p: (folder / p).read_bytes() for p in covered_files(folder) if p != "plugin.json"}
    return StoredPlugin(engine, doc, start).register(files).approve()


def example_records(name: str) -> tuple[list[dict[str, Any]], date]:
    """The example's fixture records and the fixture's today."""
    folder = Path(EXAMPLES / name / "fixtures")
    lines = (folder / "records.jsonl").read_text(encoding="utf-8").splitlines()
    context = json.loads((folder / "context.json").read_text(encoding="utf-8"))
    return [json.loads(line) for line in lines if line], date.fromisoformat(context["today"])


T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)

"""`almanac backup` and `almanac restore` (issue 31, item 7), run as an operator runs them: the
real command in a child process.

- A backup taken while a run's write of 100,000 records is inside its transaction (the store's
  own `write_run`, held at its last step, its pages already in the WAL) restores to a store
  equal, table by table and row by row, to the store before that run; one taken after the
  commit, to the store after it; Dagster's runs, events and pool limit come back with them.
- The real `almanac up` on a restored data folder serves the reader the same days
  (`inside_backup_up.py`, in a network namespace of its own as `test_up.py` runs the service).
- Refused with the reason and status 2, nothing written: a data folder that has a store
  (naming `--force`, which replaces it), a file that is no backup or a damaged one, a store
  newer than this code's migrations, a Dagster newer than this one, PostgreSQL (naming
  pg_dump and pg_restore); a store at an older revision is migrated after restore.
- The README's pg_dump and pg_restore commands, run as written against a database made by the
  store's migrations and Dagster's schema, give a new database whose tables equal the old.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import secrets
import sqlite3
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import dagster as dg
import psycopg
from alembic import command
from sqlalchemy import make_url
from sqlalchemy.orm import Session

from almanac.assets.control import DAGSTER_SCHEMA, run_slots
from almanac.platform import accounts
from almanac.platform.accounts import Passwords
from almanac.platform.accounts.passwords import Argon2Parameters
from almanac.platform.accounts.staff import grant_staff_role
from almanac.platform.lifecycle import RunTrigger
from almanac.platform.store.engine import alembic_config, make_engine, writing
from almanac.platform.store.write import RunFacts, write_run
from almanac.service import prepare
from almanac.settings import Settings, load_settings
from tests.api.sqlite_writer import approved, batch_manifest, value_batch
from tests.audience.helpers import StoredPlugin
from tests.service.namespace import fresh_database, run_module_in_namespace
from tests.service.up import REPO, almanac

HERE = Path(__file__).resolve().parent
T0 = datetime(2026, 11, 2, 12, tzinfo=UTC)
TODAY = T0.date()
PLUGIN = "backup-rates"
RECORDS = 100_000
"""The big run's batch: its write spills pages into the WAL long before it commits."""
FIRST_RUN = 2_000
"""The run before it; the big run revises each of these records and adds the rest."""
EMAIL = "operator@example.org"
PASSWORD = "a long pass phrase for the operator"


def _newest_revision() -> str:
    from alembic.script import ScriptDirectory

    from almanac.platform.store.engine import alembic_config

    [head] = ScriptDirectory.from_config(alembic_config("sqlite://")).get_heads()
    return str(head)


NEWEST = _newest_revision()
"""The store's newest migration: what a restore migrates an older backup to."""


def ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def refused(done: subprocess.CompletedProcess[str]) -> str:
    """The refusal's message: status 2, one line of reason, no traceback."""
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    return done.stderr


def store_tables(path: Path) -> dict[str, tuple[int, str]]:
    """Every table of a SQLite store: its row count and a digest of its rows in rowid order."""
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        names = [
            row[0]
            for row in db.execute(
                "SELECT name FROM sqlite_schema WHERE type = 'table' "
                "AND name NOT LIKE 'sqlite_%' ORDER BY name"
            )
        ]
        tables = {}
        for name in names:
            digest, count = hashlib.sha256(), 0
            for row in db.execute(f'SELECT * FROM "{name}" ORDER BY rowid'):
                digest.update(repr(row).encode())
                count += 1
            tables[name] = (count, digest.hexdigest())
    return tables


def write_lock_free(path: Path) -> bool:
    """Whether another writer could take the store's write lock now."""
    with closing(sqlite3.connect(path, timeout=0, isolation_level=None)) as db:
        try:
            db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            assert "locked" in str(exc), exc
            return False
        db.execute("ROLLBACK")
        return True


@dataclass
class Home:
    settings: Settings
    run_id: str
    """The Dagster run recorded before the backup."""

    @property
    def store(self) -> Path:
        return self.settings.home / "almanac.db"


def filled_home(home: Path) -> Home:
    """A data folder as `almanac up` leaves it (no examples), with an approved plug-in and its
    first run, an operator's account, and a Dagster run with an event."""
    settings = load_settings({"ALMANAC_HOME": str(home)})
    prepare(settings, examples=None)
    engine = make_engine(settings.database_url)
    try:
        StoredPlugin(engine, batch_manifest(PLUGIN), T0).register().approve()
        code, manifest = approved(engine, PLUGIN)
        write_run(
            engine,
            plugin_id=PLUGIN,
            version_id=code.version_id,
            digest=code.digest,
            manifest=manifest,
            run=RunFacts(today=TODAY, trigger=RunTrigger.SCHEDULE, started_at=T0, now=T0),
            batch=value_batch(manifest, FIRST_RUN, TODAY, variant=0),
        )
        with Session(writing(engine)) as db:
            made = accounts.sign_up(db, EMAIL, PASSWORD, Passwords(Argon2Parameters.fast()), T0)
            accounts.verify_email(db, made.verification_token, T0)
            grant_staff_role(db, EMAIL, "operator", T0)
            db.commit()
    finally:
        engine.dispose()
    with dg.DagsterInstance.from_config(str(settings.dagster_home)) as instance:
        run = instance.add_run(dg.DagsterRun(job_name="__ASSET_JOB"))
        instance.report_engine_event("recorded before the backup", run)
    return Home(settings, run.run_id)


@contextmanager
def big_run_held(home: Home, release: Path) -> Iterator[subprocess.Popen[str]]:
    """The big run's write (another process, the store's `write_run`) held inside its
    transaction at its last step before the commit; it commits once `release` exists."""
    writer = subprocess.Popen(
        [
            sys.executable, "-m", "tests.api.sqlite_writer", "batch", str(home.store), PLUGIN,
            "--records", str(RECORDS), "--today", TODAY.isoformat(), "--variant", "1",
            "--hold-at", "state", "--release-file", str(release),
        ],
        cwd=REPO, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert writer.stdout is not None
    try:
        for expected in ("ready", "inside"):
            line = writer.stdout.readline()
            assert line and json.loads(line)["event"] == expected, (expected, line)
        yield writer
    finally:
        release.touch()
        if writer.poll() is None:
            writer.wait(timeout=300)


def dagster_facts(dagster_home: Path) -> tuple[list[str], list[str], int | None]:
    """The runs of a Dagster home, the messages of each's events, and the `almanac` pool's
    limit (Dagster's defaults read its SQLite files where `almanac up` keeps them)."""
    with dg.DagsterInstance.from_config(str(dagster_home)) as instance:
        runs = [run.run_id for run in instance.get_runs()]
        messages = [event.message for run_id in runs for event in instance.all_logs(run_id)]
        return runs, messages, run_slots(instance)


def test_a_backup_taken_inside_a_runs_write_restores_the_store_as_it_was_before_the_run(
    tmp_path: Path,
) -> None:
    home = filled_home(tmp_path / "home")
    before = store_tables(home.store)
    during, after_file = tmp_path / "during.tar.gz", tmp_path / "after.tar.gz"

    with big_run_held(home, tmp_path / "release") as writer:
        # The write is in its transaction: it holds the write lock and its pages are in the WAL.
        assert not write_lock_free(home.store)
        wal = Path(f"{home.store}-wal")
        assert wal.stat().st_size > 4_000_000, "the write's pages are in the WAL, uncommitted"
        said = ok(almanac("backup", str(during), home=home.settings.home))
        assert f"backup written to {during}" in said and NEWEST in said, said
        assert not write_lock_free(home.store), "the backup was taken inside the write"
    assert writer.stdout is not None
    committed = json.loads(writer.stdout.readline())
    assert committed["event"] == "commit", committed
    assert committed["counts"]["new"] == RECORDS - FIRST_RUN
    assert committed["counts"]["revised"] == FIRST_RUN
    assert writer.wait(60) == 0
    after = store_tables(home.store)
    assert after["records"][0] == before["records"][0] + RECORDS - FIRST_RUN
    # The first run's records were revised: their earlier contents are kept as revisions.
    assert (before["revisions"][0], after["revisions"][0]) == (0, FIRST_RUN)
    ok(almanac("backup", str(after_file), home=home.settings.home))

    for backup, expected in ((during, before), (after_file, after)):
        restored = tmp_path / f"restored-{backup.name.split('.')[0]}"
        said = ok(almanac("restore", str(backup), home=restored))
        assert f"restored into {restored}" in said and "almanac up" in said, said
        tables = store_tables(restored / "almanac.db")
        # Equal, table by table and row by row: the records and their revisions, the runs,
        # the accounts and staff roles, the plug-in, its versions and approval moves.
        assert tables == expected, {
            name: (tables.get(name), expected[name])
            for name in expected
            if tables.get(name) != expected[name]
        }
        for name in ("records", "runs", "accounts", "staff_roles", "plugin_moves"):
            assert tables[name][0] > 0, name
        runs, messages, slots = dagster_facts(restored / "dagster")
        assert runs == [home.run_id]
        assert "recorded before the backup" in messages
        assert slots == home.settings.run_slots
    assert before != after


def test_almanac_up_on_a_restored_home_serves_the_same_reader_days() -> None:
    done = run_module_in_namespace(HERE / "inside_backup_up.py", {}, timeout=1200)
    assert done.returncode == 0, done.stdout[-20000:] + done.stderr[-5000:]


# -- refusals ---------------------------------------------------------------------------------


def test_restore_refuses_a_home_that_has_a_store_unless_forced(tmp_path: Path) -> None:
    first = filled_home(tmp_path / "first")
    backup = tmp_path / "first.tar.gz"
    ok(almanac("backup", str(backup), home=first.settings.home))
    # Another data folder, with a store and Dagster's storage of its own.
    other = tmp_path / "other"
    prepare(load_settings({"ALMANAC_HOME": str(other)}), examples=None)
    before = store_tables(other / "almanac.db")

    said = refused(almanac("restore", str(backup), home=other))
    assert f"{other} already has a store" in said, said
    assert "--force" in said and "fresh data folder" in said, said
    assert store_tables(other / "almanac.db") == before, "nothing was written"

    ok(almanac("restore", "--force", str(backup), home=other))
    assert store_tables(other / "almanac.db") == store_tables(first.store)
    runs, _, _ = dagster_facts(other / "dagster")
    assert runs == [first.run_id]

    # A backup file is not overwritten either, unless forced.
    said = refused(almanac("backup", str(backup), home=first.settings.home))
    assert f"{backup} exists" in said and "--force" in said, said
    ok(almanac("backup", "--force", str(backup), home=first.settings.home))


def rewritten(
    backup: Path,
    target: Path,
    *,
    manifest: dict[str, Any] | None = None,
    store_sql: str | None = None,
    flip_byte: bool = False,
) -> Path:
    """A copy of `backup` with its manifest changed, its store changed by `store_sql` (with
    the manifest's size and digest kept true), or one byte of its store flipped (and not)."""
    with tarfile.open(backup, "r:gz") as archive:
        members = {m.name: archive.extractfile(m).read() for m in archive}  # type: ignore[union-attr]
    doc = json.loads(members["almanac-backup.json"])
    doc.update(manifest or {})
    store = members["store/almanac.db"]
    if store_sql is not None:
        path = target.with_suffix(".db")
        path.write_bytes(store)
        with closing(sqlite3.connect(path, isolation_level=None)) as db:
            db.execute(store_sql)
        store = path.read_bytes()
        for entry in doc["files"]:
            if entry["path"] == "store/almanac.db":
                entry.update(size=len(store), sha256=hashlib.sha256(store).hexdigest())
    if flip_byte:
        store = store[:5000] + bytes([store[5000] ^ 0xFF]) + store[5001:]
    members.update({"almanac-backup.json": json.dumps(doc).encode(), "store/almanac.db": store})
    with tarfile.open(target, "w:gz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return target


def test_restore_refuses_a_file_that_is_no_backup_or_is_newer_than_this_code(
    tmp_path: Path,
) -> None:
    first = filled_home(tmp_path / "first")
    backup = tmp_path / "first.tar.gz"
    ok(almanac("backup", str(backup), home=first.settings.home))
    target = tmp_path / "fresh"

    text = tmp_path / "notes.txt"
    text.write_text("not a backup\n")
    said = refused(almanac("restore", str(text), home=target))
    assert f"{text} is not an almanac backup" in said, said
    other_tar = tmp_path / "other.tar.gz"
    with tarfile.open(other_tar, "w:gz") as archive:
        archive.add(text, arcname="notes.txt")
    said = refused(almanac("restore", str(other_tar), home=target))
    assert f"{other_tar} is not an almanac backup: it starts with no almanac-backup.json" in said
    said = refused(almanac("restore", str(tmp_path / "missing.tar.gz"), home=target))
    assert "is no file" in said, said
    damaged = rewritten(backup, tmp_path / "damaged.tar.gz", flip_byte=True)
    said = refused(almanac("restore", str(damaged), home=target))
    assert f"{damaged} is damaged: store/almanac.db is not the file it lists" in said, said

    newer = rewritten(
        backup,
        tmp_path / "newer.tar.gz",
        manifest={"store_revisions": ["9999_future"], "almanac_version": "9.0.0"},
        store_sql="UPDATE alembic_version SET version_num = '9999_future'",
    )
    said = refused(almanac("restore", str(newer), home=target))
    assert "holds a store at revision 9999_future, newer than this almanac's migrations" in said
    assert f"the newest here: {NEWEST}" in said and "almanac 9.0.0" in said, said
    newer_dagster = rewritten(
        backup, tmp_path / "dagster.tar.gz", manifest={"dagster_version": "99.0"}
    )
    said = refused(almanac("restore", str(newer_dagster), home=target))
    assert "was made with Dagster 99.0, newer than this almanac's Dagster" in said, said
    assert not target.exists() or not any(target.rglob("*.db")), "nothing was restored"


def test_a_store_or_dagster_storage_made_by_older_code_is_migrated_after_restore(
    tmp_path: Path,
) -> None:
    home = tmp_path / "old"
    home.mkdir()
    url = f"sqlite:///{home / 'almanac.db'}"
    engine = make_engine(url)
    try:
        with engine.begin() as connection:
            config = alembic_config(url)
            config.attributes["connection"] = connection
            command.upgrade(config, "0012_alerts")
    finally:
        engine.dispose()
    backup = tmp_path / "old.tar.gz"
    assert "revision 0012_alerts" in ok(almanac("backup", str(backup), home=home))

    restored = tmp_path / "restored"
    said = ok(almanac("restore", str(backup), home=restored))
    assert "the store was migrated to this almanac's newest revision" in said, said
    with closing(sqlite3.connect(restored / "almanac.db")) as db:
        assert db.execute("SELECT version_num FROM alembic_version").fetchall() == [(NEWEST,)]
        assert db.execute("SELECT count(*) FROM agent_tokens").fetchone() == (0,)

    # Made with an older Dagster: Dagster's own migration runs on its storage after restore.
    filled = filled_home(tmp_path / "filled")
    ok(almanac("backup", str(tmp_path / "filled.tar.gz"), home=filled.settings.home))
    older = rewritten(
        tmp_path / "filled.tar.gz", tmp_path / "older.tar.gz", manifest={"dagster_version": "1.0.0"}
    )
    said = ok(almanac("restore", str(older), home=tmp_path / "from-older"))
    assert "Dagster's storage was migrated to this almanac's Dagster" in said, said
    runs, messages, _ = dagster_facts(tmp_path / "from-older" / "dagster")
    assert runs == [filled.run_id] and "recorded before the backup" in messages


def test_backup_refuses_a_home_without_a_store(tmp_path: Path) -> None:
    said = refused(almanac("backup", str(tmp_path / "b.tar.gz"), home=tmp_path / "empty"))
    assert f"there is no store at {tmp_path / 'empty' / 'almanac.db'}" in said, said
    assert not (tmp_path / "b.tar.gz").exists()


def test_on_postgresql_backup_and_restore_refuse_and_name_pg_dump_and_pg_restore(
    tmp_path: Path,
) -> None:
    url = "postgresql+psycopg://almanac:s3cret-pw@db.example.org/almanac"
    said = refused(almanac("backup", str(tmp_path / "b.tar.gz"), home=tmp_path, database_url=url))
    assert "the store is on PostgreSQL, at postgresql+psycopg://almanac:***@db.example.org" in said
    assert "pg_dump --format=custom --file=almanac.dump" in said, said
    assert 'README, "Backup and restore"' in said and "s3cret-pw" not in said, said
    said = refused(almanac("restore", str(tmp_path / "b.tar.gz"), home=tmp_path, database_url=url))
    assert "pg_restore --no-owner --single-transaction" in said and "almanac up" in said, said
    assert not (tmp_path / "b.tar.gz").exists()


# -- PostgreSQL: the README's commands -----------------------------------------------------


def readme_commands() -> list[str]:
    """The shell blocks of the README's "Backup and restore" section that run pg_dump and
    pg_restore, as written."""
    readme = (REPO / "README.md").read_text()
    section = readme.split("## Backup and restore", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.DOTALL)
    chosen = [b for b in blocks if "pg_dump " in b or "pg_restore " in b]
    assert len(chosen) == 2, chosen
    return chosen


def postgres_tables(plain_url: str) -> dict[str, tuple[int, str]]:
    """Every table of the store's schema and of Dagster's: its row count and a digest of its
    rows; and every sequence's last value (what the next row's id follows)."""
    found: dict[str, tuple[int, str]] = {}
    with psycopg.connect(plain_url) as conn:
        tables = conn.execute(
            "SELECT table_schema, table_name FROM information_schema.tables "
            "WHERE table_schema IN ('public', %s) AND table_type = 'BASE TABLE' "
            "ORDER BY 1, 2",
            (DAGSTER_SCHEMA,),
        ).fetchall()
        for schema, name in tables:
            count, digest = conn.execute(
                f"SELECT count(*), md5(coalesce(string_agg(t::text, E'\\n' ORDER BY t::text), '')) "
                f'FROM "{schema}"."{name}" t'
            ).fetchone()  # type: ignore[misc]
            found[f"{schema}.{name}"] = (count, digest)
        for schema, name, last in conn.execute(
            "SELECT schemaname, sequencename, last_value FROM pg_sequences "
            "WHERE schemaname IN ('public', %s)",
            (DAGSTER_SCHEMA,),
        ):
            found[f"{schema}.{name} (sequence)"] = (last or 0, "")
    return found


def test_the_readmes_postgresql_commands_copy_the_store_and_dagsters_schema(
    postgres_server_url: str, tmp_path: Path
) -> None:
    server = make_url(postgres_server_url)
    old, new = f"almanac_backup_{secrets.token_hex(4)}", f"almanac_restored_{secrets.token_hex(4)}"
    with fresh_database(postgres_server_url, old), fresh_database(postgres_server_url, new):
        url = server.set(database=old).render_as_string(hide_password=False)
        settings = load_settings(
            {"ALMANAC_HOME": str(tmp_path / "home"), "ALMANAC_DATABASE_URL": url}
        )
        # The store's migrations, the examples registered and approved, Dagster's schema.
        prepare(settings)
        engine = make_engine(url)
        try:
            with Session(writing(engine)) as db:
                made = accounts.sign_up(db, EMAIL, PASSWORD, Passwords(Argon2Parameters.fast()), T0)
                accounts.verify_email(db, made.verification_token, T0)
                grant_staff_role(db, EMAIL, "operator", T0)
                db.commit()
        finally:
            engine.dispose()
        with dg.DagsterInstance.from_config(str(settings.dagster_home)) as instance:
            run = instance.add_run(dg.DagsterRun(job_name="__ASSET_JOB"))
            instance.report_engine_event("recorded before pg_dump", run)
        old_plain = server.set(drivername="postgresql", database=old).render_as_string(False)
        new_plain = server.set(drivername="postgresql", database=new).render_as_string(False)
        original = postgres_tables(old_plain)
        assert original["public.plugins"][0] > 0 and original["public.accounts"][0] == 1
        assert original[f"{DAGSTER_SCHEMA}.runs"][0] == 1
        assert original[f"{DAGSTER_SCHEMA}.event_logs"][0] >= 1

        env = {**os.environ, "ALMANAC_DATABASE_URL": url, "RESTORED_PG": new_plain}
        for block in readme_commands():
            done = subprocess.run(
                ["bash", "-euo", "pipefail", "-c", block],
                cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
            )  # fmt: skip
            assert done.returncode == 0, block + done.stdout + done.stderr
        assert postgres_tables(new_plain) == original

        # What to run after: `almanac up` on the new database migrates it and finds its own.
        restored_url = server.set(database=new).render_as_string(hide_password=False)
        again = load_settings(
            {"ALMANAC_HOME": str(tmp_path / "restored"), "ALMANAC_DATABASE_URL": restored_url}
        )
        registered, approved_now = prepare(again)
        assert registered and approved_now == [], "the examples were approved already"
        with dg.DagsterInstance.from_config(str(again.dagster_home)) as instance:
            assert [r.run_id for r in instance.get_runs()] == [run.run_id]
            messages = [e.message for e in instance.all_logs(run.run_id)]
            assert "recorded before pg_dump" in messages
            assert run_slots(instance) == again.run_slots

"""`almanac backup` and `almanac restore`: the embedded default's store and Dagster's own storage
(SQLite files in WAL mode) copied into one file while the service runs, and put back into a
fresh data folder.

Each database is copied by SQLite's online backup API inside a read transaction, so a copy holds
exactly what was committed when that transaction began: never part of a write in progress (a
run's write holds the write lock for seconds, and its pages may already be in the WAL before it
commits). The read transactions of the store and of Dagster's run, event index and schedule
databases are all begun before the first copy, so they stand at nearly one moment; each run's
own event log (`history/runs/<run id>.db`, written only by that run) is copied after them. In WAL
mode a reader never waits for a writer and a writer never waits for a reader: the service keeps
running and writing meanwhile.

On PostgreSQL the store and Dagster's schema are one database, which pg_dump copies at one
moment: both commands refuse there and name it (README, "Backup and restore").
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import shutil
import sqlite3
import tarfile
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, closing, contextmanager
from dataclasses import dataclass
from datetime import datetime
from importlib.metadata import version
from pathlib import Path
from urllib.parse import quote

from alembic.script import ScriptDirectory
from alembic.util import CommandError
from packaging.version import InvalidVersion, Version
from sqlalchemy import make_url

from almanac.platform.store.engine import alembic_config, upgrade_database
from almanac.settings import Settings
from almanac.staff_cli import store_name

FORMAT = "almanac-backup"
FORMAT_VERSION = 1
MANIFEST = "almanac-backup.json"
"""The backup's first member: what it holds, when it was made and by which versions."""
STORE_MEMBER = "store/almanac.db"
DAGSTER_MEMBERS = "dagster/"
PINNED = ("history/runs.db", "history/runs/index.db", "schedules/schedules.db")
"""Dagster's databases shared by all runs (relative to its home), copied at the store's moment."""
README_SECTION = 'README, "Backup and restore"'
_COPY_CHUNK = 1 << 20


class BackupError(ValueError):
    """A backup or restore refused; the message says why and what to do instead."""


@dataclass(frozen=True, slots=True)
class BackedUpFile:
    path: str
    """The member's name in the archive: `store/almanac.db` or `dagster/<path in its home>`."""
    size: int
    sha256: str


@dataclass(frozen=True, slots=True)
class BackupManifest:
    created_at: datetime
    almanac_version: str
    dagster_version: str
    store_revisions: tuple[str, ...]
    """The store's Alembic revisions (`alembic_version`) when it was copied."""
    files: tuple[BackedUpFile, ...]

    def to_json(self) -> bytes:
        doc = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "created_at": self.created_at.isoformat(),
            "almanac_version": self.almanac_version,
            "dagster_version": self.dagster_version,
            "store_revisions": list(self.store_revisions),
            "files": [{"path": f.path, "size": f.size, "sha256": f.sha256} for f in self.files],
        }
        return json.dumps(doc, indent=2).encode() + b"\n"

    @classmethod
    def from_json(cls, data: bytes, source: Path) -> BackupManifest:
        """The manifest of the backup `source`; BackupError when it is not one this code reads."""
        try:
            doc = json.loads(data)
            if doc.get("format") != FORMAT:
                raise ValueError(f"its {MANIFEST} is not an almanac backup's")
            if doc.get("format_version") != FORMAT_VERSION:
                raise ValueError(
                    f"its format version {doc.get('format_version')!r} is not {FORMAT_VERSION}, "
                    "the one this almanac reads"
                )
            files = tuple(
                BackedUpFile(str(f["path"]), int(f["size"]), str(f["sha256"])) for f in doc["files"]
            )
            manifest = cls(
                created_at=datetime.fromisoformat(doc["created_at"]),
                almanac_version=str(doc["almanac_version"]),
                dagster_version=str(doc["dagster_version"]),
                store_revisions=tuple(str(r) for r in doc["store_revisions"]),
                files=files,
            )
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise BackupError(f"{source} is not an almanac backup: {exc}") from None
        paths = [f.path for f in files]
        if paths.count(STORE_MEMBER) != 1 or not all(map(_member_name_ok, paths)):
            raise BackupError(f"{source} is not an almanac backup: its list of files is not one")
        return manifest


def _member_name_ok(path: str) -> bool:
    """A name restore may write: the store, or a `.db` file inside Dagster's folder."""
    if path == STORE_MEMBER:
        return True
    parts = path.split("/")
    return (
        parts[0] == DAGSTER_MEMBERS.rstrip("/")
        and path.endswith(".db")
        and len(parts) > 1
        and not any(part in ("", ".", "..") for part in parts)
    )


# -- where the databases are ---------------------------------------------------------------------


def store_file(settings: Settings, command: str, environ: Mapping[str, str] = os.environ) -> Path:
    """The store's SQLite file. On PostgreSQL, BackupError naming the PostgreSQL way."""
    url = make_url(settings.database_url)
    if url.get_backend_name() == "postgresql":
        plain = url.set(drivername="postgresql").render_as_string(hide_password=True)
        if command == "backup":
            way = (
                f"pg_dump --format=custom --file=almanac.dump '{plain}' copies the store and "
                "Dagster's schema `dagster` at one moment, while the service runs"
            )
        else:
            way = (
                "make a new database (createdb), load the dump into it with pg_restore "
                "--no-owner --single-transaction --dbname=<the new database> almanac.dump, point "
                "ALMANAC_DATABASE_URL at it and run almanac up, which migrates it"
            )
        raise BackupError(
            f"the store is on PostgreSQL, at {store_name(settings.database_url, environ)}; "
            f"almanac {command} works on the embedded default's SQLite files only. Use "
            f"PostgreSQL's own tools: {way} ({README_SECTION})"
        )
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        raise BackupError(
            f"almanac {command} works on the embedded default's SQLite file; "
            f"{store_name(settings.database_url, environ)} is none"
        )
    return Path(url.database).resolve()


def dagster_databases(dagster_home: Path) -> list[Path]:
    """Dagster's SQLite databases under its home (paths relative to it): on the embedded
    default its run storage `history/runs.db`, its event log (`history/runs/index.db` and one
    `history/runs/<run id>.db` per run) and its schedule storage `schedules/schedules.db`.
    Compute logs (`storage/`) are text files, not databases, and are not in a backup."""
    if not dagster_home.is_dir():
        return []
    return sorted(p.relative_to(dagster_home) for p in dagster_home.rglob("*.db") if p.is_file())


def _revisions(connection: sqlite3.Connection) -> tuple[str, ...]:
    try:
        rows = connection.execute("SELECT version_num FROM alembic_version").fetchall()
    except sqlite3.DatabaseError:
        return ()
    return tuple(sorted(str(row[0]) for row in rows))


# -- backup ----------------------------------------------------------------------------------------


def _open_source(path: Path) -> sqlite3.Connection:
    # mode=rw: never creates a file that vanished; autocommit, so BEGIN below is the only one.
    return sqlite3.connect(
        f"file:{quote(str(path))}?mode=rw", uri=True, isolation_level=None, timeout=60
    )


def _pin(connection: sqlite3.Connection) -> None:
    """Begin a read transaction and read, so the connection's snapshot is taken now: the online
    backup of this connection then copies that snapshot (it uses a read transaction already
    open on its source)."""
    connection.execute("BEGIN")
    connection.execute("SELECT count(*) FROM sqlite_schema").fetchone()


def _copy(source: sqlite3.Connection, target: Path) -> None:
    # The copy is written whole into its file (no -wal beside it) and keeps the source's WAL
    # mode, which the service's processes expect of their databases.
    with closing(sqlite3.connect(target, isolation_level=None)) as copy:
        source.backup(copy)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        while chunk := file.read(_COPY_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def take_backup(
    settings: Settings,
    target: Path,
    *,
    now: datetime,
    force: bool = False,
    environ: Mapping[str, str] = os.environ,
) -> BackupManifest:
    """Copy the store and Dagster's storage into `target` (a gzip'd tar: `almanac-backup.json`
    first, then the SQLite copies), while the service may run; `now` is the backup's time.
    BackupError when there is nothing to back up, the store is on PostgreSQL, or `target`
    exists (unless `force`)."""
    store = store_file(settings, "backup", environ)
    if not store.is_file():
        raise BackupError(
            f"there is no store at {store} ({store_name(settings.database_url, environ)}): "
            "nothing to back up"
        )
    target = target.absolute()
    if target.is_dir():
        raise BackupError(f"{target} is a folder: name the backup file to write")
    if target.exists() and not force:
        raise BackupError(f"{target} exists: name another file, or give --force to replace it")
    if not target.parent.is_dir():
        raise BackupError(f"{target.parent} is no folder: the backup's folder must exist")
    dagster = dagster_databases(settings.dagster_home)
    pinned = [p for p in dagster if p.as_posix() in PINNED]
    later = [p for p in dagster if p.as_posix() not in PINNED]
    with tempfile.TemporaryDirectory(prefix=".almanac-backup-", dir=target.parent) as work:
        folder = Path(work)
        copies: list[tuple[str, Path]] = []
        with ExitStack() as stack:
            sources = [(STORE_MEMBER, _open_source(store))]
            sources += [
                (DAGSTER_MEMBERS + p.as_posix(), _open_source(settings.dagster_home / p))
                for p in pinned
            ]
            for _, connection in sources:
                stack.callback(connection.close)
            for _, connection in sources:
                _pin(connection)
            revisions = _revisions(sources[0][1])
            if not revisions:
                raise BackupError(
                    f"the store at {store} has no schema yet (no Alembic revision): "
                    "run `almanac up` once; there is nothing to back up"
                )
            for member, connection in sources:
                copies.append((member, _copy_into(folder, member, connection)))
        for relative in later:
            member = DAGSTER_MEMBERS + relative.as_posix()
            path = settings.dagster_home / relative
            if not path.exists():
                continue  # a run's log removed since it was listed (a deleted run)
            with closing(_open_source(path)) as connection:
                copies.append((member, _copy_into(folder, member, connection)))
        manifest = BackupManifest(
            created_at=now,
            almanac_version=version("almanac"),
            dagster_version=version("dagster"),
            store_revisions=revisions,
            files=tuple(BackedUpFile(m, p.stat().st_size, _sha256(p)) for m, p in copies),
        )
        partial = folder / "backup.tar.gz"
        _write_archive(partial, manifest, copies)
        # It holds every account's password hash and the mail's links: for its owner only.
        partial.chmod(0o600)
        os.replace(partial, target)
    return manifest


def _copy_into(folder: Path, member: str, source: sqlite3.Connection) -> Path:
    path = folder / "files" / member
    path.parent.mkdir(parents=True, exist_ok=True)
    _copy(source, path)
    return path


def _write_archive(path: Path, manifest: BackupManifest, copies: list[tuple[str, Path]]) -> None:
    # Level 6, gzip's own default: SQLite pages of text shrink several times.
    with tarfile.open(path, "w:gz", compresslevel=6) as archive:
        data = manifest.to_json()
        info = tarfile.TarInfo(MANIFEST)
        info.size = len(data)
        info.mtime = int(manifest.created_at.timestamp())
        info.mode = 0o600
        archive.addfile(info, io.BytesIO(data))
        for member, copy in copies:
            info = tarfile.TarInfo(member)
            info.size = copy.stat().st_size
            info.mtime = int(manifest.created_at.timestamp())
            info.mode = 0o600
            with copy.open("rb") as file:
                archive.addfile(info, file)


# -- restore ---------------------------------------------------------------------------------------


@contextmanager
def _open_backup(source: Path) -> Iterator[tuple[tarfile.TarFile, BackupManifest]]:
    if not source.is_file():
        raise BackupError(f"{source} is no file: name the file `almanac backup` wrote")
    try:
        archive = tarfile.open(source, "r:gz")  # noqa: SIM115 (closed by the `with` below)
    except (tarfile.TarError, gzip.BadGzipFile, EOFError, OSError):
        raise BackupError(
            f"{source} is not an almanac backup (not the gzip'd tar `almanac backup` writes)"
        ) from None
    with archive:
        yield archive, BackupManifest.from_json(_manifest_bytes(archive, source), source)


def _manifest_bytes(archive: tarfile.TarFile, source: Path) -> bytes:
    """The archive's first member, which must be the manifest."""
    try:
        first = archive.next()
        reader = archive.extractfile(first) if first is not None and first.isfile() else None
        if first is not None and first.name == MANIFEST and reader is not None:
            return reader.read()
    except (tarfile.TarError, EOFError, OSError):
        pass
    raise BackupError(f"{source} is not an almanac backup: it starts with no {MANIFEST}")


def read_backup(source: Path) -> BackupManifest:
    """What the backup `source` holds (its manifest); BackupError when it is none."""
    with _open_backup(source) as (_, manifest):
        return manifest


def check_revisions(manifest: BackupManifest, source: Path, url: str) -> bool:
    """Whether the backup's store is older than this code's migrations (then restore migrates
    it); BackupError when one of its revisions is unknown to this code: made by a newer almanac,
    whose schema this code would not understand."""
    script = ScriptDirectory.from_config(alembic_config(url))
    heads = tuple(sorted(script.get_heads()))
    for revision in manifest.store_revisions:
        try:
            known = script.get_revision(revision)
        except CommandError:
            known = None
        if known is None:
            raise BackupError(
                f"{source} holds a store at revision {revision}, newer than this almanac's "
                f"migrations (the newest here: {', '.join(heads)}; the backup was made by almanac "
                f"{manifest.almanac_version}): restore it with that almanac or a newer one"
            )
    return manifest.store_revisions != heads


def _release(text: str) -> tuple[int, ...]:
    """A package's PEP 440 version (Dagster's) as its release numbers; () when it is none.
    Not a plug-in's version, whose rule is the contract's `version_key`."""
    try:
        return Version(text).release
    except InvalidVersion:
        return ()


def _has_store(store: Path, dagster_home: Path) -> list[Path]:
    """What of a store is already in the data folder: the store's file, Dagster's databases."""
    found = [store] if store.exists() else []
    return found + [dagster_home / p for p in dagster_databases(dagster_home)]


def _remove_databases(paths: list[Path]) -> None:
    for path in paths:
        for extra in ("", "-wal", "-shm", "-journal"):
            Path(f"{path}{extra}").unlink(missing_ok=True)


@dataclass(frozen=True, slots=True)
class Restored:
    manifest: BackupManifest
    store: Path
    store_migrated: bool
    """The backup's store was at an older revision and was migrated to this code's."""
    dagster_migrated: bool
    """The backup was made with an older Dagster, whose storage was migrated to this one's."""


def restore_backup(
    settings: Settings,
    source: Path,
    *,
    force: bool = False,
    environ: Mapping[str, str] = os.environ,
) -> Restored:
    """Put the backup `source` into the data folder of `settings` (the store's file and Dagster's
    databases), then migrate what is older than this code. BackupError, before anything is
    written, when the store is on PostgreSQL, the file is no backup or holds a store or Dagster
    storage newer than this code, or the folder already has a store (unless `force`, which
    replaces it; the service must not be running on it)."""
    store = store_file(settings, "restore", environ)
    with _open_backup(source) as (archive, manifest):
        older = check_revisions(manifest, source, settings.database_url)
        ours = version("dagster")
        if _release(manifest.dagster_version) > _release(ours):
            raise BackupError(
                f"{source} was made with Dagster {manifest.dagster_version}, newer than this "
                f"almanac's Dagster {ours}: its storage may not be readable here; restore it with "
                "that almanac or a newer one"
            )
        present = _has_store(store, settings.dagster_home)
        if present and not force:
            raise BackupError(
                f"{settings.home} already has a store ({present[0]}): restore into a fresh data "
                "folder (ALMANAC_HOME), or give --force to replace it (stop the service on it "
                "first)"
            )
        settings.home.mkdir(parents=True, exist_ok=True)
        store.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=".almanac-restore-", dir=settings.home) as work:
            staged = _extract(archive, manifest, Path(work), source)
            _check_staged_store(staged[STORE_MEMBER], manifest, source)
            _remove_databases(present)
            for member, path in staged.items():
                if member == STORE_MEMBER:
                    place = store
                else:
                    place = settings.dagster_home / member.removeprefix(DAGSTER_MEMBERS)
                place.parent.mkdir(parents=True, exist_ok=True)
                _remove_databases([place])
                # A move, not a rename: ALMANAC_DATABASE_URL may put the store on another disk.
                shutil.move(path, place)
    if older:
        upgrade_database(settings.database_url)
    dagster_older = _release(manifest.dagster_version) < _release(ours)
    if dagster_older:
        from almanac.assets.control import migrate_dagster

        migrate_dagster(settings)
    return Restored(manifest, store, older, dagster_older)


def _extract(
    archive: tarfile.TarFile, manifest: BackupManifest, folder: Path, source: Path
) -> dict[str, Path]:
    """Each file the manifest lists, written under `folder` and checked against its size and
    SHA-256 (nothing else of the archive is read)."""
    expected = {f.path: f for f in manifest.files}
    staged: dict[str, Path] = {}
    for info in archive:
        entry = expected.get(info.name)
        if entry is None or info.name in staged or not info.isfile():
            continue
        reader = archive.extractfile(info)
        if reader is None:
            continue
        path = folder / f"{len(staged)}.db"
        digest = hashlib.sha256()
        with path.open("wb") as out:
            while chunk := reader.read(_COPY_CHUNK):
                digest.update(chunk)
                out.write(chunk)
        if path.stat().st_size != entry.size or digest.hexdigest() != entry.sha256:
            raise BackupError(f"{source} is damaged: {info.name} is not the file it lists")
        staged[info.name] = path
    missing = sorted(set(expected) - set(staged))
    if missing:
        raise BackupError(f"{source} is damaged: it lacks {', '.join(missing)}")
    return staged


def _check_staged_store(path: Path, manifest: BackupManifest, source: Path) -> None:
    with closing(sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True)) as copy:
        try:
            checked = copy.execute("PRAGMA quick_check").fetchone()
        except sqlite3.DatabaseError as exc:
            raise BackupError(f"{source} is damaged: its store is no database ({exc})") from None
        if checked != ("ok",):
            raise BackupError(f"{source} is damaged: its store fails SQLite's check ({checked})")
        if _revisions(copy) != manifest.store_revisions:
            raise BackupError(f"{source} is damaged: its store is not at the revision it lists")


def describe(manifest: BackupManifest) -> str:
    """One line about a backup for the operator."""
    logs = DAGSTER_MEMBERS + "history/runs/"
    runs = [
        f for f in manifest.files if f.path.startswith(logs) and not f.path.endswith("/index.db")
    ]
    size = sum(f.size for f in manifest.files)
    return (
        f"the store at revision {', '.join(manifest.store_revisions)} and Dagster's storage "
        f"({len(manifest.files) - 1} databases, the event logs of {len(runs)} runs): "
        f"{size / 1e6:.1f} MB of SQLite, made {manifest.created_at.isoformat()} by almanac "
        f"{manifest.almanac_version} with Dagster {manifest.dagster_version}"
    )

"""Registering a plug-in folder as one of the service's own plug-ins (the examples that
`almanac up` shows on a fresh machine). A plug-in of the service's own release stops until
approved ("States and transitions"): registering never approves."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from sqlalchemy import Engine

from almanac.platform.contract.digest import folder_digest
from almanac.platform.contract.manifest import parse_manifest
from almanac.platform.store.engine import write_transaction
from almanac.platform.store.plugins import register_version

SERVICE_ORIGIN_BY = "almanac"


class FolderRefused(ValueError):
    """The folder is not a plug-in that passes the contract; the message names why."""


def register_folder(engine: Engine, folder: Path, *, now: datetime) -> tuple[str, str]:
    """Keep the folder's covered files and manifest as a version of the service's own; returns
    (plug-in id, digest). Registering the same files again changes nothing."""
    digest = folder_digest(folder)
    if digest.digest is None or digest.problems:
        problem = digest.problems[0].message if digest.problems else "no digest"
        raise FolderRefused(f"{folder}: {problem}")
    files = {path: (folder / path).read_bytes() for path in digest.files}
    parsed = parse_manifest(files.get("plugin.json", b""), folder_name=folder.name)
    if parsed.manifest is None:
        raise FolderRefused(f"{folder}/plugin.json: {parsed.problems[0].message}")
    with write_transaction(engine) as conn:
        register_version(
            conn,
            manifest=dict(parsed.manifest.raw),
            digest=digest.digest,
            files=files,
            origin="folder",
            by=SERVICE_ORIGIN_BY,
            now=now,
        )
    return parsed.manifest.id, digest.digest


def register_examples(engine: Engine, examples: Path, *, now: datetime) -> list[str]:
    """Register every example plug-in folder under `examples`; returns their ids."""
    ids = []
    for folder in sorted(p for p in examples.iterdir() if (p / "plugin.json").is_file()):
        plugin_id, _ = register_folder(engine, folder, now=now)
        ids.append(plugin_id)
    return ids

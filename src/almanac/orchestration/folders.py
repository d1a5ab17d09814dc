"""Registering a plug-in folder as one of the service's own plug-ins (the examples that
`almanac up` shows on a fresh machine). A plug-in of the service's own release stops until
approved ("States and transitions"): registering never approves; `approve_first_versions` is
the one approval `almanac up` makes, for the examples it registers on a fresh store."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from sqlalchemy import Engine

from almanac.platform.contract.pack import CodeRefused, check_folder
from almanac.platform.hosting import (
    VersionKept,
    VersionNotGreater,
    VersionReused,
    register_code,
)
from almanac.platform.store import moves
from almanac.platform.store.engine import write_transaction
from almanac.platform.store.plugins import plugin_status
from almanac.platform.store.versions import plugin_versions

SERVICE_ORIGIN_BY = "almanac"
FIRST_START_APPROVER = "almanac up (the operator starting a fresh service)"


class FolderRefused(ValueError):
    """The folder is not a plug-in that passes the contract; the message names why."""


def register_folder(engine: Engine, folder: Path, *, now: datetime) -> tuple[str, str]:
    """Keep the folder's covered files and manifest as a version of the service's own; returns
    (plug-in id, digest). Registering the same files again changes nothing."""
    try:
        code = check_folder(folder)
        with write_transaction(engine) as conn:
            register_code(conn, code, origin="folder", by=SERVICE_ORIGIN_BY, now=now)
    except CodeRefused as refused:
        first = refused.problems[0]
        where = f"/{first.path}" if first.path else ""
        raise FolderRefused(f"{folder}{where}: {first.message}") from None
    except (
        VersionReused,
        VersionNotGreater,
        VersionKept,
        moves.LocalNotApprovable,
    ) as refused:
        raise FolderRefused(f"{folder}/plugin.json: {refused}") from None
    return code.manifest.id, code.digest


def register_examples(
    engine: Engine, examples: Path, *, now: datetime
) -> tuple[list[str], list[str]]:
    """Register every example plug-in folder under `examples`; returns the ids registered and,
    for each folder refused, why (one refused example does not keep the others out)."""
    ids: list[str] = []
    refused: list[str] = []
    for folder in sorted(p for p in examples.iterdir() if (p / "plugin.json").is_file()):
        try:
            plugin_id, _ = register_folder(engine, folder, now=now)
        except FolderRefused as refusal:
            refused.append(str(refusal))
            continue
        ids.append(plugin_id)
    return ids, refused


def approve_first_versions(
    engine: Engine, plugin_ids: list[str], *, now: datetime
) -> list[tuple[str, str]]:
    """Approve, by its digest, each of these plug-ins that has never been approved and holds
    only its first version: the operator who starts a fresh service with its own examples
    approves them by doing so. A later version stays Pending until a person approves it.
    Returns (plug-in id, digest) of each approval."""
    approved = []
    for plugin_id in plugin_ids:
        with write_transaction(engine) as conn:
            status = plugin_status(conn, plugin_id)
            if status.approved_version_id is not None or status.current_digest is None:
                continue
            if len(plugin_versions(conn, plugin_id)) != 1:
                continue
            moves.approve(
                conn,
                plugin_id,
                digest_shown=status.current_digest,
                by=FIRST_START_APPROVER,
                now=now,
            )
            approved.append((plugin_id, status.current_digest))
    return approved

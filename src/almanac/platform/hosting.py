"""What the host pages do beyond single store moves: registering checked code as a version
(with the update rules of "Versioning" 4 against the approved version), and the static checks
shown on a version page. Free of any web framework; every function takes a connection inside a
transaction and, when it writes, who and when."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, select

from almanac.platform.accounts.tables import organizations
from almanac.platform.contract.manifest import Manifest, parse_manifest
from almanac.platform.contract.pack import CodeRefused, PluginCode
from almanac.platform.contract.problems import Problem
from almanac.platform.contract.rules import version_key
from almanac.platform.contract.updates import compare_manifests
from almanac.platform.errors import Conflict, Invalid
from almanac.platform.lifecycle import State
from almanac.platform.store import moves
from almanac.platform.store.plugins import plugin_status
from almanac.platform.store.tables import plugins, versions
from almanac.platform.store.versions import register_version, version_detail


class UnknownOrganization(Invalid):
    """No organization has the id given as publisher: the input names none."""


class IdTaken(Conflict):
    """Another publisher has the id."""

    code = "PLG-ID-TAKEN"


class VersionReused(Conflict):
    """The same version number with different code."""

    code = "PLG-VERSION-REUSED"


class VersionNotGreater(Conflict):
    """New code whose version does not exceed every version kept."""

    code = "PLG-VERSION-NOT-GREATER"


class VersionKept(Conflict):
    """The code of a kept version other than the current one: it comes back only by the
    host's explicit roll back, never by registering it again."""

    code = "PLG-VERSION-KEPT"


def check_version_number(conn: Connection, plugin_id: str, version: str, digest: str) -> None:
    """ "Versioning" rule 3: the same version with different code is refused, and new code must
    carry a version greater than every version of the plug-in kept so far. The current
    version's code again is the same version and passes; the code of another kept version is
    refused (VersionKept), since making it current again would stop the version running now."""
    kept = conn.execute(
        select(versions.c.version, versions.c.digest).where(versions.c.plugin_id == plugin_id)
    ).all()
    if not kept:
        return
    same = next((number for number, known in kept if known == digest), None)
    if same is not None:
        current = conn.execute(
            select(versions.c.version, versions.c.digest)
            .join(plugins, plugins.c.current_version_id == versions.c.id)
            .where(plugins.c.id == plugin_id)
        ).first()
        if current is None or current.digest == digest:
            return
        raise VersionKept(
            f"this code is version {same} of {plugin_id!r}, kept already ({digest}); the "
            f"current version is {current.version} ({current.digest}), and registering "
            f"{same} again would stop it. To run {same} again, roll back to it at the host "
            "with a reason; to change the code, give it a version greater than every kept one"
        )
    if any(number == version for number, _ in kept):
        raise VersionReused(
            f"version {version} of {plugin_id!r} is kept with different code; "
            "raise the version for every change of the code"
        )
    newest = max((number for number, _ in kept), key=version_key)
    if version_key(version) <= version_key(newest):
        raise VersionNotGreater(
            f"version {version} of {plugin_id!r} does not exceed {newest}, the newest version kept"
        )


@dataclass(frozen=True, slots=True)
class Registered:
    """The version kept, the plug-in's state after it arrived, and the warnings of its checks."""

    plugin_id: str
    version_id: int
    version: str
    digest: str
    state: State
    warnings: list[Problem]


def _manifest_of(conn: Connection, version_id: int) -> Manifest | None:
    raw = conn.execute(select(versions.c.manifest).where(versions.c.id == version_id)).scalar_one()
    return parse_manifest(raw).manifest


def update_findings(conn: Connection, plugin_id: str, candidate: Manifest) -> list[Problem]:
    """Versioning rule 4: the candidate as an update of the plug-in's approved version (nothing
    when none was approved). Errors refuse the update; warnings go to the person approving."""
    approved_id = conn.execute(
        select(plugins.c.approved_version_id).where(plugins.c.id == plugin_id)
    ).scalar()
    if approved_id is None:
        return []
    published = _manifest_of(conn, approved_id)
    return [] if published is None else compare_manifests(published, candidate)


def register_code(
    conn: Connection,
    code: PluginCode,
    *,
    origin: str,
    by: str,
    now: datetime,
    publisher_organization_id: int | None = None,
) -> Registered:
    """Keep checked code as a version of its plug-in ("States and transitions": a new digest
    moves it to Pending; nothing runs until approved). Refused with CodeRefused when the update
    rules of "Versioning" 4 refuse it, VersionReused, VersionNotGreater or VersionKept
    ("Versioning" 3), LocalNotApprovable for audience `local` (never approvable, so it would
    only stop the version running now), IdTaken when another publisher has the id,
    UnknownOrganization for an unknown publisher. A refusal changes nothing."""
    plugin_id = code.manifest.id
    if code.manifest.audience == "local":
        raise moves.LocalNotApprovable(
            f"version {code.manifest.version} of {plugin_id!r} has audience 'local': it runs on "
            "its developer's machine only and the server never approves it, so it is not "
            "registered; nothing changed"
        )
    existing = conn.execute(
        select(plugins.c.publisher_organization_id).where(plugins.c.id == plugin_id)
    ).first()
    if publisher_organization_id is not None:
        known = conn.execute(
            select(organizations.c.id).where(organizations.c.id == publisher_organization_id)
        ).first()
        if known is None:
            raise UnknownOrganization(f"no organization has the id {publisher_organization_id}")
        held_by = existing[0] if existing is not None else None
        if held_by is not None and held_by != publisher_organization_id:
            raise IdTaken(f"another publisher has the id {plugin_id!r}")
    check_version_number(conn, plugin_id, code.manifest.version, code.digest)
    findings = update_findings(conn, plugin_id, code.manifest) if existing is not None else []
    if any(p.severity == "error" for p in findings):
        raise CodeRefused(findings)
    version_id = register_version(
        conn,
        manifest=dict(code.manifest.raw),
        digest=code.digest,
        files=code.files,
        origin=origin,
        by=by,
        now=now,
    )
    if publisher_organization_id is not None:
        moves.set_publisher(conn, plugin_id, publisher_organization_id, by=by, now=now)
    status = plugin_status(conn, plugin_id)
    return Registered(
        plugin_id=plugin_id,
        version_id=version_id,
        version=code.manifest.version,
        digest=code.digest,
        state=status.state,
        warnings=[*code.warnings, *findings],
    )


@dataclass(frozen=True, slots=True)
class VersionChecks:
    """The checks a version page shows: the manifest's findings, the update findings (Versioning
    rule 4) and the approved version they were judged against (None when none was approved)."""

    manifest: list[Problem]
    update: list[Problem]
    against_version_id: int | None


def version_checks(conn: Connection, plugin_id: str, version_id: int) -> VersionChecks:
    """The checks a version page shows: the manifest findings under today's contract, and the
    update findings against the approved version (none for the approved version itself)."""
    detail = version_detail(conn, plugin_id, version_id)
    parsed = parse_manifest(detail.manifest)
    approved_id = plugin_status(conn, plugin_id).approved_version_id
    updates: list[Problem] = []
    if parsed.manifest is not None and approved_id not in (None, version_id):
        updates = update_findings(conn, plugin_id, parsed.manifest)
    return VersionChecks(manifest=parsed.problems, update=updates, against_version_id=approved_id)

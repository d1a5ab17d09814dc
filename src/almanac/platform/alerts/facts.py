"""The stored facts the asset checks and alerts read (`rules.PluginFacts`), for every plug-in
ever approved, in a few statements whatever the number of plug-ins. Backfill runs are left out
(DECISIONS 8: they never change Approved/Failing)."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, func, select

from almanac.platform.alerts.rules import (
    VOLUME_HISTORY,
    HeldFact,
    PluginFacts,
    RunFact,
)
from almanac.platform.lifecycle import RunTrigger, State
from almanac.platform.store.tables import held_series, plugins, run_sources, runs, versions

_PRINTED = runs.c.new + runs.c.revised + runs.c.unchanged + runs.c.returned
"""The records a run printed: each printed record is new, revised, unchanged or returns
("Stored-record behaviour"); a moved event is printed as its new date."""


def _name(manifest: dict[str, Any]) -> str:
    names = manifest.get("name")
    if isinstance(names, dict):
        return str(names.get("en") or next(iter(names.values()), ""))
    return str(names or "")


def plugin_facts(
    conn: Connection, plugin_ids: Collection[str] | None = None
) -> dict[str, PluginFacts]:
    """The facts of every plug-in ever approved (or only of `plugin_ids`), by id."""
    query = (
        select(
            plugins.c.id,
            plugins.c.state,
            plugins.c.taken_down,
            plugins.c.publisher_organization_id,
            versions.c.manifest,
        )
        .outerjoin(versions, versions.c.id == plugins.c.approved_version_id)
        .where(plugins.c.ever_approved.is_(True))
        .order_by(plugins.c.id)
    )
    if plugin_ids is not None:
        query = query.where(plugins.c.id.in_(list(plugin_ids)))
    rows = conn.execute(query).all()
    ids = [row.id for row in rows]
    if not ids:
        return {}
    own = runs.c.plugin_id.in_(ids) & (runs.c.trigger != str(RunTrigger.BACKFILL))

    held: dict[str, list[HeldFact]] = {}
    for h in conn.execute(
        select(held_series)
        .where(held_series.c.plugin_id.in_(ids))
        .order_by(held_series.c.plugin_id, held_series.c.series)
    ):
        held.setdefault(h.plugin_id, []).append(
            HeldFact(h.series, len(h.record_ids), tuple(h.first_dates))
        )

    ranked = (
        select(
            runs.c.id,
            runs.c.plugin_id,
            runs.c.started_at,
            runs.c.ended_at,
            runs.c.outcome,
            runs.c.reason,
            _PRINTED.label("printed"),
            func.row_number()
            .over(partition_by=(runs.c.plugin_id, runs.c.outcome), order_by=runs.c.id.desc())
            .label("rank"),
            func.max(runs.c.id).over(partition_by=runs.c.plugin_id).label("newest"),
        )
        .where(own)
        .subquery()
    )
    kept = conn.execute(
        select(ranked)
        .where(
            ((ranked.c.outcome == "success") & (ranked.c.rank <= VOLUME_HISTORY + 1))
            | (ranked.c.id == ranked.c.newest)
        )
        .order_by(ranked.c.plugin_id, ranked.c.id.desc())
    ).all()
    last_ids = [r.id for r in kept if r.id == r.newest]
    sources: dict[int, list[tuple[str, str]]] = {}
    if last_ids:
        for s in conn.execute(
            select(run_sources.c.run_id, run_sources.c.name, run_sources.c.final_url)
            .where(run_sources.c.run_id.in_(last_ids))
            .order_by(run_sources.c.run_id, run_sources.c.position)
        ):
            sources.setdefault(s.run_id, []).append((s.name, s.final_url))

    successes: dict[str, list[RunFact]] = {}
    last: dict[str, RunFact] = {}
    for r in kept:
        fact = RunFact(
            id=r.id,
            started_at=r.started_at,
            ended_at=r.ended_at,
            outcome=r.outcome,
            reason=r.reason,
            printed=int(r.printed),
            sources=tuple(sources.get(r.id, ())),
        )
        if r.id == r.newest:
            last[r.plugin_id] = fact
        if r.outcome == "success" and r.rank <= VOLUME_HISTORY + 1:
            successes.setdefault(r.plugin_id, []).append(fact)

    first_attempt: dict[str, datetime] = {
        plugin_id: at
        for plugin_id, at in conn.execute(
            select(runs.c.plugin_id, func.min(runs.c.started_at))
            .where(own)
            .group_by(runs.c.plugin_id)
        )
    }
    last_success = (
        select(runs.c.plugin_id, func.max(runs.c.id).label("id"))
        .where(own, runs.c.outcome == "success")
        .group_by(runs.c.plugin_id)
        .subquery()
    )
    failing_since: dict[str, datetime] = {
        plugin_id: at
        for plugin_id, at in conn.execute(
            select(runs.c.plugin_id, func.min(runs.c.started_at))
            .outerjoin(last_success, last_success.c.plugin_id == runs.c.plugin_id)
            .where(
                own,
                runs.c.outcome == "failure",
                (last_success.c.id.is_(None)) | (runs.c.id > last_success.c.id),
            )
            .group_by(runs.c.plugin_id)
        )
    }

    found: dict[str, PluginFacts] = {}
    for row in rows:
        manifest: dict[str, Any] = row.manifest or {}
        state = State(row.state)
        found[row.id] = PluginFacts(
            plugin_id=row.id,
            name=_name(manifest) or row.id,
            state=state,
            schedule=manifest.get("schedule"),
            timezone=manifest.get("timezone"),
            taken_down=bool(row.taken_down),
            held=tuple(held.get(row.id, ())),
            publisher_organization_id=row.publisher_organization_id,
            successes=tuple(successes.get(row.id, ())),
            last_run=last.get(row.id),
            first_attempt=first_attempt.get(row.id),
            failing_since=failing_since.get(row.id) if state is State.FAILING else None,
            sources=tuple(
                (str(s.get("name")), str(s.get("url"))) for s in manifest.get("sources", [])
            ),
        )
    return found

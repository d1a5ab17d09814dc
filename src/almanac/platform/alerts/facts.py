"""The stored facts the asset checks and alerts read (`rules.PluginFacts`), for every plug-in ever
approved, in a few statements whatever the number of plug-ins. Backfill runs are left out
(DECISIONS 8: they never change Approved/Failing).

`plugin_facts` reads in stages, each over every plug-in asked for at once: the plug-ins
(`_ever_approved`), their Held series (`_held`), their recent runs (`_recent_runs`), when they
first ran (`_first_attempts`) and since when they fail (`_failing_since`); `_facts` then puts
one plug-in's facts together.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Connection, Row, func, select

from almanac.platform.alerts.rules import (
    VOLUME_HISTORY,
    HeldFact,
    PluginFacts,
    RunFact,
)
from almanac.platform.contract.names import pick_name
from almanac.platform.lifecycle import RunTrigger, State
from almanac.platform.store.tables import held_series, plugins, run_sources, runs, versions

_PRINTED = runs.c.new + runs.c.revised + runs.c.unchanged + runs.c.returned
"""The records a run printed: each printed record is new, revised, unchanged or returns
("Stored-record behaviour"); a moved event is printed as its new date."""


@dataclass(frozen=True, slots=True)
class _Runs:
    """What the runs of the plug-ins say, by plug-in id: the newest successes (newest first)
    and the newest run, when the first run started, and when the failures after the last
    success began."""

    successes: Mapping[str, list[RunFact]]
    last: Mapping[str, RunFact]
    first_attempt: Mapping[str, datetime]
    failing_since: Mapping[str, datetime]


def plugin_facts(
    conn: Connection, plugin_ids: Collection[str] | None = None
) -> dict[str, PluginFacts]:
    """The facts of every plug-in ever approved (or only of `plugin_ids`), by id."""
    rows = _ever_approved(conn, plugin_ids)
    ids = [row.id for row in rows]
    if not ids:
        return {}
    own = runs.c.plugin_id.in_(ids) & (runs.c.trigger != str(RunTrigger.BACKFILL))
    held = _held(conn, ids)
    successes, last = _recent_runs(conn, own)
    ran = _Runs(successes, last, _first_attempts(conn, own), _failing_since(conn, own))
    return {row.id: _facts(row, held.get(row.id, []), ran) for row in rows}


def _ever_approved(conn: Connection, plugin_ids: Collection[str] | None) -> list[Row[Any]]:
    """The plug-ins ever approved (or those of `plugin_ids`), by id, with their approved
    manifest."""
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
    return list(conn.execute(query))


def _held(conn: Connection, ids: list[str]) -> dict[str, list[HeldFact]]:
    """The Held series of each plug-in, by series key."""
    held: dict[str, list[HeldFact]] = {}
    for h in conn.execute(
        select(held_series)
        .where(held_series.c.plugin_id.in_(ids))
        .order_by(held_series.c.plugin_id, held_series.c.series)
    ):
        held.setdefault(h.plugin_id, []).append(
            HeldFact(h.series, len(h.record_ids), tuple(h.first_dates))
        )
    return held


def _recent_runs(
    conn: Connection, own: ColumnElement[bool]
) -> tuple[dict[str, list[RunFact]], dict[str, RunFact]]:
    """Each plug-in's newest successes (up to `VOLUME_HISTORY` + 1, newest first) and its newest
    run, with the sources the newest run downloaded."""
    kept = _ranked_runs(conn, own)
    sources = _sources_of(conn, [r.id for r in kept if r.id == r.newest])
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
    return successes, last


def _ranked_runs(conn: Connection, own: ColumnElement[bool]) -> list[Row[Any]]:
    """The runs `_recent_runs` keeps, each with its rank among the plug-in's runs of the same
    outcome and the plug-in's newest run id; ranked in the database, so only these are read."""
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
    query = (
        select(ranked)
        .where(
            ((ranked.c.outcome == "success") & (ranked.c.rank <= VOLUME_HISTORY + 1))
            | (ranked.c.id == ranked.c.newest)
        )
        .order_by(ranked.c.plugin_id, ranked.c.id.desc())
    )
    return list(conn.execute(query))


def _sources_of(conn: Connection, run_ids: list[int]) -> dict[int, list[tuple[str, str]]]:
    """The sources each run downloaded (name, final URL), in declared order."""
    sources: dict[int, list[tuple[str, str]]] = {}
    if run_ids:
        for s in conn.execute(
            select(run_sources.c.run_id, run_sources.c.name, run_sources.c.final_url)
            .where(run_sources.c.run_id.in_(run_ids))
            .order_by(run_sources.c.run_id, run_sources.c.position)
        ):
            sources.setdefault(s.run_id, []).append((s.name, s.final_url))
    return sources


def _first_attempts(conn: Connection, own: ColumnElement[bool]) -> dict[str, datetime]:
    """When each plug-in's first run started."""
    query = select(runs.c.plugin_id, func.min(runs.c.started_at)).where(own)
    return {plugin_id: at for plugin_id, at in conn.execute(query.group_by(runs.c.plugin_id))}


def _failing_since(conn: Connection, own: ColumnElement[bool]) -> dict[str, datetime]:
    """When the first failed run after each plug-in's last success started (its first run,
    when none succeeded); no entry for a plug-in whose last run succeeded."""
    last_success = (
        select(runs.c.plugin_id, func.max(runs.c.id).label("id"))
        .where(own, runs.c.outcome == "success")
        .group_by(runs.c.plugin_id)
        .subquery()
    )
    query = (
        select(runs.c.plugin_id, func.min(runs.c.started_at))
        .outerjoin(last_success, last_success.c.plugin_id == runs.c.plugin_id)
        .where(
            own,
            runs.c.outcome == "failure",
            (last_success.c.id.is_(None)) | (runs.c.id > last_success.c.id),
        )
        .group_by(runs.c.plugin_id)
    )
    return {plugin_id: at for plugin_id, at in conn.execute(query)}


def _facts(row: Row[Any], held: list[HeldFact], ran: _Runs) -> PluginFacts:
    """One plug-in's facts. The few manifest fields are read from the stored manifest, not
    checked whole again: the checks read every plug-in ever approved, each time they run."""
    manifest: dict[str, Any] = row.manifest or {}
    state = State(row.state)
    return PluginFacts(
        plugin_id=row.id,
        name=pick_name(manifest.get("name"), "en") or row.id,
        state=state,
        schedule=manifest.get("schedule"),
        timezone=manifest.get("timezone"),
        taken_down=bool(row.taken_down),
        held=tuple(held),
        publisher_organization_id=row.publisher_organization_id,
        successes=tuple(ran.successes.get(row.id, ())),
        last_run=ran.last.get(row.id),
        first_attempt=ran.first_attempt.get(row.id),
        failing_since=ran.failing_since.get(row.id) if state is State.FAILING else None,
        sources=tuple((str(s.get("name")), str(s.get("url"))) for s in manifest.get("sources", [])),
    )

"""One run of a plug-in, framework-free: hash the approved code again, build the run context
from the store, download the sources, run the locked room, check the batch; then the write.

The Dagster asset calls `prepare` and its IO manager calls `write`; a failure anywhere is kept
by `record_failure` as a failed run with its reason ("The write" rule 4): nothing is written and
the plug-in shows Failing (a backfill changes no state, DECISIONS 8).
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from datetime import time as wall_time
from pathlib import Path
from typing import Any, NoReturn, Protocol
from zoneinfo import ZoneInfo

from sqlalchemy import Engine
from sqlalchemy.orm import Session

from almanac.orchestration.due import RUNNABLE
from almanac.platform.clock import Clock
from almanac.platform.contract.context import build_run_context, today_in_zone
from almanac.platform.contract.digest import digest_of_files
from almanac.platform.contract.manifest import Manifest, parse_manifest
from almanac.platform.contract.records import check_batch
from almanac.platform.lifecycle import RunTrigger
from almanac.platform.mail import Mailer, send_all
from almanac.platform.publishing.publication.rollouts import (
    ShadowCode,
    ShadowOutcome,
    record_shadow_run,
    shadow_code,
    shadows_run,
)
from almanac.platform.store.plugins import UnknownPlugin, plugin_status
from almanac.platform.store.reading import series_state
from almanac.platform.store.versions import ApprovedCode, approved_code
from almanac.platform.store.write import (
    RunFacts,
    SourceFacts,
    WriteResult,
    record_failed_run,
    short_reason,
    write_run,
)
from almanac.sandbox.download import DownloadError, Downloads, Source
from almanac.sandbox.limits import RoomLimits
from almanac.sandbox.room import RoomRefused, RoomResult

log = logging.getLogger(__name__)


class Downloader(Protocol):
    def download(self, sources: Sequence[Source], *, today: date, work_dir: Path) -> Downloads: ...


class Room(Protocol):
    def run(
        self,
        plugin_files: Mapping[str, bytes],
        sources: Mapping[str, Path],
        context: Mapping[str, Any],
        limits: RoomLimits | None = None,
    ) -> RoomResult: ...


class NotRunnable(Exception):
    """The plug-in may not run now (Pending, Paused, Removed, taken down, or never approved);
    nothing ran and no run is recorded."""


class RunFailed(Exception):
    """The run failed and was recorded as a failed run with `reason`; nothing was written."""

    def __init__(self, reason: str, run_id: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.run_id = run_id


@dataclass(frozen=True, slots=True)
class RunRequestFacts:
    """What the orchestrator tells a run: the plug-in, its partition day, why it runs and the
    request it answers. `trigger` BACKFILL marks a re-run of a past (or chosen) day.
    `orchestrator_run`: the orchestrator's id of the run (Dagster's run id), kept with the
    store's run so that the run is recorded once whatever fails after (issue 31)."""

    plugin_id: str
    today: date
    trigger: RunTrigger
    request_id: int | None = None
    orchestrator_run: str | None = None


@dataclass(slots=True)
class PreparedRun:
    """A checked batch waiting for the write, with the facts the write keeps."""

    plugin_id: str
    version_id: int
    digest: str
    manifest: Manifest
    facts: RunFacts
    batch: list[dict[str, Any]]
    timings: dict[str, float] = field(default_factory=dict)
    shadow: ShadowAttempt | None = None
    """The shadow version's run on the same downloads, when a rollout is shadowing."""
    shadow_outcome: ShadowOutcome | None = None
    """What keeping the shadow run changed, once the batch is written."""


@dataclass(frozen=True, slots=True)
class ShadowAttempt:
    """The shadow version's run: its checked records, or why it failed; its time."""

    rollout_id: int
    batch: list[dict[str, Any]] | None
    failure: str | None
    seconds: float


def context_moment(today: date, zone: str, now: datetime) -> datetime:
    """The run context's `now` for a run of day `today`: the real moment when `today` is the
    real today in the zone, else noon of that day on the zone's clock (a backfill of a past
    day sees that day as its today; DECISIONS 8)."""
    if today_in_zone(now, zone) == today:
        return now
    return datetime.combine(today, wall_time(12), ZoneInfo(zone)).astimezone(UTC)


class RunPipeline:
    """Runs plug-ins against one store with one downloader and one locked room."""

    def __init__(
        self,
        engine: Engine,
        *,
        downloader: Downloader,
        room: Room,
        clock: Clock = lambda: datetime.now(UTC),
        work_dir: Path | None = None,
        mailer: Mailer | None = None,
        base_url: str,
    ) -> None:
        self.engine = engine
        self.mailer = mailer
        self.base_url = base_url
        self.downloader = downloader
        self.room = room
        self.clock = clock
        self.work_dir = work_dir

    def _approved(self, plugin_id: str) -> ApprovedCode:
        """The approved code of a plug-in that may run now; NotRunnable (nothing recorded) when
        it may not."""
        with self.engine.connect() as conn:
            try:
                status = plugin_status(conn, plugin_id)
            except UnknownPlugin as exc:
                raise NotRunnable(str(exc)) from exc
            if status.taken_down:
                raise NotRunnable(f"plug-in {plugin_id} is taken down; it does not run")
            if status.state not in RUNNABLE:
                raise NotRunnable(f"plug-in {plugin_id} is {status.state}; it does not run")
            return approved_code(conn, plugin_id)

    def prepare(self, request: RunRequestFacts) -> PreparedRun:
        """Everything before the write: check the code, download, run the room, check the batch.
        Raises NotRunnable (nothing recorded) or RunFailed (recorded as a failed run with its
        reason)."""
        started = self.clock()
        timings: dict[str, float] = {"start": time.perf_counter()}
        code = self._approved(request.plugin_id)
        facts = RunFacts(
            today=request.today,
            trigger=request.trigger,
            started_at=started,
            now=started,
            request_id=request.request_id,
            orchestrator_run=request.orchestrator_run,
        )
        manifest = self._checked_manifest(code, facts)
        if request.today > today_in_zone(started, manifest.timezone):
            raise NotRunnable(
                f"{request.today} is after today in {manifest.timezone}; a day runs once it came"
            )
        context = self._run_context(manifest, request.today, started)
        facts = replace(facts, backfill=bool(context["backfill"]))
        shadow = (
            self._shadow_code(manifest.id)
            if shadows_run(facts.trigger, backfill=facts.backfill)
            else None
        )
        work = Path(tempfile.mkdtemp(prefix="almanac-run-", dir=self.work_dir))
        try:
            downloads = self._download(code, facts, manifest, request.today, work)
            facts = replace(facts, sources=_source_facts(downloads))
            timings["room_start"] = time.perf_counter()
            result = self._run_room(code, facts, manifest, downloads, context)
            timings["room_end"] = time.perf_counter()
            facts = replace(facts, node_version=result.node_version, layers=result.layers)
            batch = self._checked_batch(code, facts, manifest, result, request.today)
            timings["checked"] = time.perf_counter()
            attempt = None
            if shadow is not None:
                attempt = self._shadow(shadow, downloads, request.today, started, work)
                timings["shadow"] = attempt.seconds
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return PreparedRun(
            plugin_id=manifest.id,
            version_id=code.version_id,
            digest=code.digest,
            manifest=manifest,
            facts=facts,
            batch=batch,
            timings=timings,
            shadow=attempt,
        )

    def _shadow_code(self, plugin_id: str) -> ShadowCode | None:
        with Session(self.engine) as db:
            return shadow_code(db, plugin_id)

    def _shadow(
        self,
        code: ShadowCode,
        downloads: Downloads,
        today: date,
        started: datetime,
        work: Path,
    ) -> ShadowAttempt:
        """The shadow half of a shadow pair (README, Rollouts): the new version in the locked
        room on the files the current version's run downloaded (a source it alone declares is
        downloaded beside them), its batch checked against its own manifest. It writes nothing;
        a failure is its outcome, never the run's."""
        began = time.perf_counter()

        def failed(reason: str) -> ShadowAttempt:
            return ShadowAttempt(code.rollout_id, None, reason, time.perf_counter() - began)

        try:
            sources = self._shadow_sources(code.manifest, downloads, today, work)
            context = self._run_context(code.manifest, today, started)
            result = self.room.run(
                code.files, sources, context, RoomLimits.for_manifest(code.manifest)
            )
        except DownloadError as exc:
            return failed(exc.reason)
        except RoomRefused as exc:
            return failed(f"the locked room refused to run: {exc}")
        if not result.ok:
            return failed(result.reason or f"the fetcher exited with code {result.exit_code}")
        checked = check_batch(result.lines(), code.manifest, today)
        if not checked.ok:
            return failed(checked.reason() or "the batch breaks a rule")
        return ShadowAttempt(code.rollout_id, checked.records, None, time.perf_counter() - began)

    def _shadow_sources(
        self, manifest: Manifest, downloads: Downloads, today: date, work: Path
    ) -> dict[str, Path]:
        """The shadow version's sources by name: the same downloaded file where it declares the
        same name and address as the current version, else its own download."""
        have = {(s.name, s.url): s.path for s in downloads.sources}
        paths: dict[str, Path] = {}
        extra: list[Source] = []
        for source in manifest.sources:
            found = have.get((source.name, source.url))
            if found is None:
                extra.append(Source(source.name, source.url, source.max_bytes))
            else:
                paths[source.name] = found
        if extra:
            own = work / "shadow"
            own.mkdir()
            more = self.downloader.download(extra, today=today, work_dir=own)
            paths.update({s.name: s.path for s in more.sources})
        return paths

    def _checked_manifest(self, code: ApprovedCode, facts: RunFacts) -> Manifest:
        """The approved manifest, once the stored files hash to the approved digest again ("What
        the service does" 4: only the approved digest runs) and it still passes; else RunFailed."""
        found = digest_of_files(code.files)
        if found != code.digest:
            self.fail(
                code,
                facts,
                f"the approved code no longer matches its digest: the stored files hash to "
                f"{found}, approved was {code.digest}; nothing ran",
            )
        parsed = parse_manifest(code.manifest)
        if parsed.manifest is None:
            problem = parsed.problems[0]
            self.fail(code, facts, f"the approved manifest no longer passes: {problem.message}")
        return parsed.manifest

    def _run_context(self, manifest: Manifest, today: date, started: datetime) -> dict[str, Any]:
        """The run context of day `today` ("Run context"), its series state read from the
        store."""
        moment = context_moment(today, manifest.timezone, started)
        with self.engine.connect() as conn:
            state = series_state(conn, manifest.id, [s.key for s in manifest.series], today)
        return build_run_context(
            manifest,
            now=moment,
            series_state={k: (v.last, v.count) for k, v in state.items()},
        )

    def _download(
        self, code: ApprovedCode, facts: RunFacts, manifest: Manifest, today: date, work: Path
    ) -> Downloads:
        """The declared sources downloaded into `work`; when one fails the run fails with the
        download's reason ("Source download rules" 7)."""
        try:
            return self.downloader.download(
                [Source(s.name, s.url, s.max_bytes) for s in manifest.sources],
                today=today,
                work_dir=work,
            )
        except DownloadError as exc:
            self.fail(code, facts, exc.reason)

    def _run_room(
        self,
        code: ApprovedCode,
        facts: RunFacts,
        manifest: Manifest,
        downloads: Downloads,
        context: Mapping[str, Any],
    ) -> RoomResult:
        """The fetcher run once in the locked room on the downloads; RunFailed when the room
        refuses to run it."""
        try:
            return self.room.run(
                code.files,
                {s.name: s.path for s in downloads.sources},
                context,
                RoomLimits.for_manifest(manifest),
            )
        except RoomRefused as exc:
            self.fail(code, facts, f"the locked room refused to run: {exc}")

    def _checked_batch(
        self,
        code: ApprovedCode,
        facts: RunFacts,
        manifest: Manifest,
        result: RoomResult,
        today: date,
    ) -> list[dict[str, Any]]:
        """The fetcher's records, once it exited cleanly and every line passes the approved
        manifest ("The write" rules 1 and 4); else RunFailed with the reason."""
        if not result.ok:
            self.fail(
                code, facts, result.reason or f"the fetcher exited with code {result.exit_code}"
            )
        checked = check_batch(result.lines(), manifest, today)
        if not checked.ok:
            self.fail(code, facts, checked.reason() or "the batch breaks a rule")
        return checked.records

    def write(self, prepared: PreparedRun) -> WriteResult:
        """The write ("The write" rules 1-3, 5): one transaction. A refusal or error is kept as
        a failed run (RunFailed)."""
        facts = replace(prepared.facts, now=self.clock())
        try:
            result = write_run(
                self.engine,
                plugin_id=prepared.plugin_id,
                version_id=prepared.version_id,
                digest=prepared.digest,
                manifest=prepared.manifest,
                run=facts,
                batch=prepared.batch,
            )
        except Exception as exc:
            reason = f"the write was refused: {exc}"
            run_id = self._record(
                prepared.plugin_id, prepared.version_id, prepared.digest, facts, reason
            )
            raise RunFailed(short_reason(reason), run_id) from exc
        prepared.timings["written"] = time.perf_counter()
        if prepared.shadow is not None:
            prepared.shadow_outcome = self._record_shadow(prepared, result.run_id, facts.now)
        return result

    def _record_shadow(
        self, prepared: PreparedRun, run_id: int, now: datetime
    ) -> ShadowOutcome | None:
        """Keep the shadow run beside the written run `run_id` (compared with what it has just
        written) and send the hold's mail (linking the rollout under `base_url`).

        A failure to keep it is logged and the run goes on as a success. The current version's
        batch is already committed in its own transaction and is what readers get, whatever the
        shadow did: failing the run would send the 30-minute retry after a run that succeeded
        and mark the plug-in Failing for a fault of the rollout's bookkeeping, and undoing the
        write is not possible nor wanted. Nothing is lost either: no shadow run is kept, so the
        rollout's count does not move and the next scheduled run shadows again; the log line
        names the run for the operators."""
        attempt = prepared.shadow
        assert attempt is not None
        try:
            with Session(self.engine) as db:
                outcome = record_shadow_run(
                    db,
                    attempt.rollout_id,
                    run_id=run_id,
                    today=prepared.facts.today,
                    batch=attempt.batch,
                    failure=attempt.failure,
                    seconds=attempt.seconds,
                    now=now,
                    base_url=self.base_url,
                )
                db.commit()
        except Exception:
            log.exception("the shadow run beside run %s was not kept", run_id)
            return None
        if self.mailer is not None:
            send_all(self.mailer, outcome.mails, now)
        return outcome

    def run(self, request: RunRequestFacts) -> WriteResult:
        """`prepare` then `write`, for callers without an orchestrator (tests, benchmarks)."""
        return self.write(self.prepare(request))

    def fail(self, code: ApprovedCode, facts: RunFacts, reason: str) -> NoReturn:
        """Keep a failed run with `reason` and raise RunFailed."""
        facts = replace(facts, now=self.clock())
        run_id = self._record(code.plugin_id, code.version_id, code.digest, facts, reason)
        raise RunFailed(short_reason(reason), run_id)

    def _record(
        self, plugin_id: str, version_id: int, digest: str, facts: RunFacts, reason: str
    ) -> int:
        return record_failed_run(
            self.engine,
            plugin_id=plugin_id,
            version_id=version_id,
            digest=digest,
            run=facts,
            reason=reason,
        )

    def record_failure(
        self,
        request: RunRequestFacts,
        reason: str,
        *,
        started_at: datetime | None = None,
    ) -> int | None:
        """Keep a run that failed outside the pipeline (a crashed worker, an orchestrator error)
        as a failed run of the approved version; None when the plug-in has no approved
        version. When the store already has the run's outcome (the worker wrote its batch or
        its failure and died before telling the orchestrator), that run's id, and nothing is
        kept again (`record_failed_run`)."""
        with self.engine.connect() as conn:
            try:
                code = approved_code(conn, request.plugin_id)
            except UnknownPlugin:
                return None
        now = self.clock()
        facts = RunFacts(
            today=request.today,
            trigger=request.trigger,
            started_at=started_at or now,
            now=now,
            request_id=request.request_id,
            orchestrator_run=request.orchestrator_run,
        )
        return self._record(request.plugin_id, code.version_id, code.digest, facts, reason)


def _source_facts(downloads: Downloads) -> tuple[SourceFacts, ...]:
    """The downloads as kept with the run ("The write" rule 2)."""
    return tuple(
        SourceFacts(s.name, s.url, s.bytes, s.sha256, s.fetched_at) for s in downloads.sources
    )

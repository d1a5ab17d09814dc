"""What a shadow pair adds to a run (README, Rollouts): the UK example's scheduled run through
the run pipeline (download over TLS from a loopback server with a test CA, the real locked room,
the store's write on PostgreSQL), alone and with an update shadowing it (the same downloads, the
update in the room, its batch checked, the record diff against what was just written, the
shadow run kept), interleaved round by round in the same run of the benchmark.

The update is 1.1.0 of tests/publishing/test_rollouts.py (Northern Ireland dropped, Christmas
Day retitled). Its review is stood in for by an approval row (the review is tested in
tests/publishing); each round starts a rollout of 5 runs and stops it after its one shadow run.

    ALMANAC_TEST_DATABASE_URL=postgresql+psycopg://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python tests/benchmarks/bench_shadow_pair.py [rounds]

It ends with one JSON line.
"""

from __future__ import annotations

import io
import json
import statistics
import sys
import time
import zipfile
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from sqlalchemy.orm import Session  # noqa: E402

from almanac.orchestration.pipeline import RunPipeline, RunRequestFacts  # noqa: E402
from almanac.platform.accounts import Argon2Parameters, Passwords  # noqa: E402
from almanac.platform.lifecycle import RunTrigger  # noqa: E402
from almanac.platform.publishing.models import (  # noqa: E402
    PortalUpload,
    ReviewDecision,
    UploadState,
    Verdict,
)
from almanac.platform.publishing.publication.publication import (  # noqa: E402
    publish_approved,
    start_rollout,
)
from almanac.platform.publishing.publication.rollout_states import end_under_way  # noqa: E402
from almanac.platform.publishing.uploads import uploads  # noqa: E402
from almanac.platform.publishing.uploads.review_information import (  # noqa: E402
    reviewed_digest,
)
from almanac.sandbox.room import LockedRoom  # noqa: E402
from almanac.sandbox.tool_imports import import_problems  # noqa: E402
from tests.api.test_host import UK  # noqa: E402
from tests.orchestration.conftest import fresh_postgres_engine  # noqa: E402
from tests.orchestration.harness import FrozenClock, SourceServer  # noqa: E402
from tests.publishing.helpers import Org, organization  # noqa: E402
from tests.publishing.test_rollouts import retitled, update  # noqa: E402
from tests.publishing.test_submission import files_with  # noqa: E402
from tests.publishing.test_upload_checks import HOSTS, serve_uk  # noqa: E402

T0 = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)


def zipped(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, content in sorted(files.items()):
            archive.writestr(zipfile.ZipInfo(f"{UK}/{path}", (1980, 1, 1, 0, 0, 0)), content)
    return buffer.getvalue()


def approved_upload(db: Session, org: Org, files: dict[str, bytes]) -> PortalUpload:
    """An upload with a reviewer's approval of exactly its content (a stand-in for the desk)."""
    answer = uploads.upload(
        db, org.id, org.owner, uploads.examine(zipped(files), import_problems), T0
    )
    row = db.get(PortalUpload, answer.upload.id)
    assert row is not None
    row.state = UploadState.APPROVED
    db.add(
        ReviewDecision(
            upload_id=row.id,
            decision=Verdict.APPROVE,
            reason="benchmark",
            note="",
            reviewer_id=org.admin.id,
            reviewer=org.admin.email,
            reviewed=reviewed_digest(db, row),
            decided_at=T0,
        )
    )
    db.flush()
    return row


def main(rounds: int = 7) -> None:
    clock = FrozenClock(T0)
    with fresh_postgres_engine("benchshadow") as engine, SourceServer(HOSTS) as server:
        serve_uk(server)
        with Session(engine, expire_on_commit=False) as db:
            org = organization(db, Passwords(Argon2Parameters.fast()), T0, "bench")
            current = approved_upload(db, org, files_with())
            publish_approved(db, current, org.owner.email, T0)
            fetch = files_with()["fetch.mjs"].decode()
            candidate = approved_upload(
                db, org, update("1.1.0", retitled(fetch), drop_ireland=True)
            )
            db.commit()
        pipeline = RunPipeline(
            engine,
            downloader=server.downloader(clock),
            room=LockedRoom(),
            clock=clock,
            base_url="https://almanac.test",
        )
        request = RunRequestFacts(UK, T0.date(), RunTrigger.SCHEDULE)
        pipeline.run(request)  # the first write, and the caches warm

        def timed(shadowing: bool) -> tuple[float, float]:
            if shadowing:
                with Session(engine) as db:
                    start_rollout(
                        db, db.get(PortalUpload, candidate.id), 5, org.owner.email, clock()
                    )
                    db.commit()
            prepared = pipeline.prepare(request)
            began = prepared.timings["start"]
            pipeline.write(prepared)
            total = time.perf_counter() - began
            if shadowing:
                assert prepared.shadow_outcome is not None and prepared.shadow_outcome.shadow.passed
                with Session(engine) as db:
                    end_under_way(db, UK, reason="benchmark round", by="bench", now=clock())
                    db.commit()
            return total * 1000, prepared.timings.get("shadow", 0.0) * 1000

        alone: list[float] = []
        paired: list[float] = []
        shadow_only: list[float] = []
        for _ in range(rounds):
            alone.append(timed(False)[0])
            total, shadow = timed(True)
            paired.append(total)
            shadow_only.append(shadow)
    without = statistics.median(alone)
    with_shadow = statistics.median(paired)
    result = {
        "rounds": rounds,
        "run_ms": round(without, 1),
        "run_with_shadow_ms": round(with_shadow, 1),
        "extra_ms": round(with_shadow - without, 1),
        "ratio": round(with_shadow / without, 2),
        "shadow_room_and_check_ms": round(statistics.median(shadow_only), 1),
    }
    print(f"a run of {UK} alone:           {without:8.1f} ms (median of {rounds})")
    print(f"the same run with its shadow:  {with_shadow:8.1f} ms")
    print(f"the shadow pair adds:          {with_shadow - without:8.1f} ms ({result['ratio']}x)")
    print(f"  of which the update's room run and checks: {result['shadow_room_and_check_ms']} ms")
    print(json.dumps(result))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 7)

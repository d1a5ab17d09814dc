"""Curve: the store readers browse against the listings in it (issue 33). One database; the
listings are published through the portal's own domain functions, one after another up to each
size: the UK bank holidays example under a fresh id (`uk-<n>`, its listing's tagline naming the
number), uploaded by its organization (`uploads.examine`, `uploads.upload`: the static
checks), attested and submitted, approved at the review desk and published
(`publication.publish`). As in the publishing tests, the organization's domain claim is marked
verified directly and the locked-room checks are marked passed (`room_checks_done`): each is
tested elsewhere, and a room run per listing would take hours at 10,000; the imports rule's
Node judge is stood in by one that finds nothing (the example imports nothing). Ten listings an
organization, each with a domain of its own. The API (one uvicorn worker) answers, wrk one
connection, once the planner has statistics (`ANALYZE`, as autovacuum keeps them):
- the store (`GET /api/v1/store/plugins`, no words): its first page (50 listings);
- a search whose words match one listing (`?q=listing-<n>`);
- one plug-in's store page (`GET /api/v1/store/plugins/uk-1`).
Goal: p95 under 50 ms at 10,000 listings. Prints the API worker's resident memory.

Run: ALMANAC_TEST_DATABASE_URL=postgresql+psycopg://postgres@127.0.0.1:5432/postgres \
     .venv/bin/python tests/benchmarks/bench_store_listings.py [--quick] [--sizes 10,1000] \
     [--keep almanac_bench_store_kept]
Sizes 10, 1,000, 10,000 (--quick: 10 and 300). Needs `wrk`. With `--keep NAME` the listings
stay in that database and a later run goes on from those already published (publishing
10,000 takes about half an hour), after migrating it to the checkout's schema.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
from sqlalchemy import Engine, func, select, update
from sqlalchemy.orm import Session

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from almanac.platform import accounts
from almanac.platform.accounts import Argon2Parameters, Passwords
from almanac.platform.accounts.models import Account, InvitationRequest, InvitationStatus
from almanac.platform.contract.problems import Problem
from almanac.platform.publishing.identity import agreement, domains, invitations
from almanac.platform.publishing.models import (
    Attestation,
    CheckStatus,
    DomainClaim,
    DomainState,
    PortalUpload,
    UploadCheck,
    UploadState,
    Verdict,
)
from almanac.platform.publishing.publication import publication
from almanac.platform.publishing.publication.storefront import STORE_PAGE_SIZE
from almanac.platform.publishing.review import desk, submission
from almanac.platform.publishing.uploads import uploads
from almanac.platform.store.engine import make_engine, upgrade_database
from almanac.platform.store.models import StoreListing
from tests.api.test_host import UK, folder_files, zip_of
from tests.benchmarks.bench_reader_records import reader_cookie
from tests.benchmarks.sweep import (
    analyze,
    api_server,
    arguments,
    emit,
    scratch_database,
    table,
    wrk,
)

GOAL_MS = 50.0
PER_ORGANIZATION = 10
PASSWORDS = Passwords(Argon2Parameters.fast())
T0 = datetime(2026, 10, 2, 9, tzinfo=UTC)  # the Developer Agreement's version 1 in effect


def _domain(organization: int) -> str:
    """Each organization's own domain (a domain proves one publisher)."""
    return f"bank{organization}.example.org"


def no_import_problems(folder: str, files: Mapping[str, bytes]) -> list[Problem]:
    return []


class Portal:
    """Publishes the UK example as `uk-<n>` through the portal's domain functions."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.files = folder_files(UK)
        self.published = 0
        self.clock = T0
        self.org_id = 0
        self.owner: accounts.Account | None = None
        with Session(engine, expire_on_commit=False) as db:
            self.published = db.scalar(select(func.count()).select_from(StoreListing)) or 0
            if self.published:
                self._go_on(db)
                return
            self.reviewer = self._person(db, "reviewer@service.example")
            accounts.grant_staff_role(db, self.reviewer.email, "reviewer", self.now())
            db.commit()

    def _go_on(self, db: Session) -> None:
        """Resume in a kept database: its reviewer, its clock, its last organization."""
        assert self.published % PER_ORGANIZATION == 0, "a kept store holds whole organizations"
        reviewer = db.scalar(select(Account).where(Account.email == "reviewer@service.example"))
        assert reviewer is not None
        self.reviewer = reviewer
        last = db.scalar(select(func.max(StoreListing.published_at)))
        assert last is not None
        self.clock = last + timedelta(minutes=1)

    def now(self) -> datetime:
        self.clock += timedelta(minutes=1)
        return self.clock

    def _person(self, db: Session, email: str) -> accounts.Account:
        made = accounts.sign_up(db, email, "correct horse battery", PASSWORDS, self.clock)
        accounts.verify_email(db, made.verification_token, self.clock)
        return made.account

    def _organization(self, db: Session) -> None:
        """A new organization allowed to submit: its domain verified, invited, the agreement
        accepted (as the publishing tests' `may_submit`)."""
        n = self.published // PER_ORGANIZATION
        owner = self._person(db, f"owner{n}@bank{n}.example")
        org = accounts.create_organization(db, owner, f"Bank {n}", self.now())
        domains.name_domain(db, org.id, owner, _domain(n), self.now())
        db.execute(
            update(DomainClaim)
            .where(DomainClaim.organization_id == org.id, DomainClaim.ended_at.is_(None))
            .values(state=DomainState.VERIFIED, verified_at=self.clock, last_proved_at=self.clock)
        )
        request = InvitationRequest(
            email=f"asker{n}@example.org", email_key=f"asker{n}@example.org",
            organization=f"Bank {n}", domain=_domain(n), note="holidays",
            status=InvitationStatus.OPEN, created_at=self.clock,
        )  # fmt: skip
        db.add(request)
        db.flush()
        invitations.invite(db, request.id, owner, self.now(), "http://127.0.0.1")
        agreement.accept(db, org.id, owner, 1, self.now())
        self.org_id, self.owner = org.id, owner

    def _archive(self, n: int) -> bytes:
        plugin_id = f"uk-{n}"
        files = dict(self.files)
        doc = json.loads(files["plugin.json"])
        doc["id"] = plugin_id
        files["plugin.json"] = json.dumps(doc, indent=2).encode()
        listing = json.loads(files["listing.json"])
        listing["plugin"] = plugin_id
        listing["tagline"] = {"en": f"Bank holidays, listing-{n}"}
        listing["publisher"] = {"domain": _domain(n // PER_ORGANIZATION)}
        files["listing.json"] = json.dumps(listing).encode()
        return zip_of(files, top=plugin_id)

    def publish_one(self) -> None:
        n = self.published
        examined = uploads.examine(self._archive(n), no_import_problems)
        with Session(self.engine, expire_on_commit=False) as db:
            if n % PER_ORGANIZATION == 0:
                self._organization(db)
            assert self.owner is not None
            made = uploads.upload(db, self.org_id, self.owner, examined, self.now())
            upload_id = made.upload.id
            db.execute(  # the publishing tests' `room_checks_done`
                update(UploadCheck)
                .where(UploadCheck.upload_id == upload_id, UploadCheck.status == CheckStatus.QUEUED)
                .values(status=CheckStatus.PASSED)
            )
            db.execute(
                update(PortalUpload)
                .where(PortalUpload.id == upload_id, PortalUpload.state == UploadState.CHECKING)
                .values(state=UploadState.CHECKED)
            )
            submission.attest(db, self.org_id, self.owner, upload_id, list(Attestation), self.now())
            submission.submit(db, self.org_id, self.owner, upload_id, self.now())
            reviewed = desk.reviewed_version(db, self.reviewer, upload_id)
            desk.decide(
                db, self.reviewer, upload_id, Verdict.APPROVE, reason="looks right", note="",
                reviewed=reviewed.reviewed, now=self.now(),
            )  # fmt: skip
            publication.publish(db, self.org_id, self.owner, upload_id, self.now())
            db.commit()
        self.published += 1


def main() -> None:
    args = arguments(__doc__ or "", [10, 1_000, 10_000], [10, 300])
    rows = []
    points = []
    with scratch_database("store", args.store, args.keep) as url:
        upgrade_database(url)
        engine = make_engine(url)
        portal = Portal(engine)
        for size in args.sizes:
            start = time.perf_counter()
            while portal.published < size:
                portal.publish_one()
            made = time.perf_counter() - start
            analyze(url)
            cookie = reader_cookie(engine, [])
            with api_server(url) as api:
                store = f"{api.base}/api/v1/store/plugins"
                targets = {
                    "store": store,
                    "search": f"{store}?q=listing-{size // 2}",
                    "page": f"{store}/uk-1",
                }
                headers = {"Cookie": f"almanac_session={cookie}"}
                answered = {}
                with httpx.Client(cookies={"almanac_session": cookie}, timeout=120) as client:
                    for key, target in targets.items():
                        for _ in range(3):  # warm-up
                            answer = client.get(target)
                            assert answer.status_code == 200, answer.text[:300]
                        answered[key] = answer
                shown = min(size, STORE_PAGE_SIZE)
                assert len(answered["store"].json()) == shown, len(answered["store"].json())
                assert len(answered["search"].json()) == 1
                found = {key: wrk(t, seconds=args.seconds, headers=headers)
                         for key, t in targets.items()}  # fmt: skip
                rss = api.rss_mb()
            point: dict[str, float | int] = {"listings": size, "api_rss_mb": rss}
            for key, latency in found.items():
                point[f"{key}_p50_ms"] = latency.p50_ms
                point[f"{key}_p95_ms"] = latency.p95_ms
                point[f"{key}_bytes"] = len(answered[key].content)
            points.append(point)
            rows.append(
                [size, found["store"].p50_ms, found["store"].p95_ms, len(answered["store"].content),
                 found["search"].p50_ms, found["search"].p95_ms, found["page"].p50_ms,
                 found["page"].p95_ms, rss]
            )  # fmt: skip
            print(f"  {size:,} listings (published in {made:.0f} s): store p95 "
                  f"{found['store'].p95_ms:.1f} ms, search p95 {found['search'].p95_ms:.1f} ms, "
                  f"page p95 {found['page'].p95_ms:.1f} ms", flush=True)  # fmt: skip
        engine.dispose()
    print(f"\nthe store vs listings in it, {args.store}, wrk 1 connection {args.seconds} s")
    table(
        ["listings", "store p50", "store p95", "store bytes", "search p50", "search p95",
         "page p50", "page p95", "API RSS MiB"],
        rows,
    )  # fmt: skip
    last = points[-1]
    for key in ("store", "search", "page"):
        p95 = float(last[f"{key}_p95_ms"])
        print(f"{key} p95 at {last['listings']:,} listings: {p95:.1f} ms (goal under "
              f"{GOAL_MS:g} ms: {'met' if p95 < GOAL_MS else 'MISSED'})")  # fmt: skip
    emit(
        f"store_listings_{args.store}",
        args,
        {"store": args.store, "x": "listings", "points": points, "goal_ms": GOAL_MS},
    )


if __name__ == "__main__":
    main()

"""Uploads in the portal over HTTP, on the live app with real PostgreSQL: the static checks in
the upload's answer, every refusal code with nothing stored, quotas at their edge, the same
bytes twice, listing-only versions, the update rules of "Versioning" 4, list, show, re-run and
withdraw, and an organization's uploads invisible to anyone outside it."""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from almanac.platform import hosting
from almanac.platform.contract.pack import check_pack
from almanac.platform.publishing.identity import ids
from almanac.platform.publishing.models import (
    CheckStatus,
    PluginIdBinding,
    PortalUpload,
    UploadCheck,
    UploadState,
)
from almanac.platform.store import moves
from almanac.platform.store.engine import make_engine, write_transaction
from almanac.platform.store.plugins import plugin_status
from tests.api.conftest import Api, assert_problem, live_api
from tests.api.test_host import REFUSED_ZIPS, UK, empty_plugin_tables, folder_files, zip_of

V1 = "/api/v1"


@dataclass
class Publisher:
    api: Api
    owner: httpx.Client
    org: int

    @property
    def uploads(self) -> str:
        return f"{V1}/portal/organizations/{self.org}/uploads"

    def send(self, data: bytes, client: httpx.Client | None = None) -> httpx.Response:
        return (client or self.owner).post(
            self.uploads, content=data, headers={"content-type": "application/zip"}
        )

    def stored(self) -> int:
        with Session(self.api.engine) as db:
            return db.scalar(select(func.count()).select_from(PortalUpload)) or 0

    def bound(self) -> int:
        with Session(self.api.engine) as db:
            return db.scalar(select(func.count()).select_from(PluginIdBinding)) or 0


def new_org(api: Api, email: str, name: str) -> tuple[httpx.Client, int]:
    client = api.signed_in(email)
    made = client.post(f"{V1}/organizations", json={"name": name})
    assert made.status_code == 201, made.text
    return client, int(made.json()["id"])


@pytest.fixture
def publisher(api: Api) -> Iterator[Publisher]:
    empty_plugin_tables(api.engine)
    owner, org = new_org(api, "owner@bank.example", "Bank")
    try:
        yield Publisher(api, owner, org)
    finally:
        empty_plugin_tables(api.engine)


def uk_files(**manifest: Any) -> dict[str, bytes]:
    files = folder_files(UK)
    if manifest:
        doc = json.loads(files["plugin.json"])
        doc.update(manifest)
        files["plugin.json"] = json.dumps(doc, indent=2).encode()
    return files


def uk(**manifest: Any) -> bytes:
    return zip_of(uk_files(**manifest))


def checks_of(body: dict) -> dict[str, dict]:
    return {c["name"]: c for c in body["checks"]}


def codes(findings: list[dict]) -> list[str]:
    return [f["code"] for f in findings]


def test_an_upload_answers_its_static_checks_and_is_listed_and_shown(publisher: Publisher):
    made = publisher.send(uk())
    assert made.status_code == 201, made.text
    body = made.json()
    assert body["plugin_id"] == UK and body["version"] == "1.0.0"
    assert body["state"] == "checking" and body["uploaded_by"] == "owner@bank.example"
    assert body["agent_name"] is None and body["listing_only"] is False
    checks = checks_of(body)
    static = ["manifest", "folder", "imports", "listing", "review"]
    room = ["fixtures", "cases", "examples", "sources", "links"]
    assert list(checks) == [*static, *room]
    assert all(checks[name]["status"] == "passed" for name in static), checks
    assert all(checks[name]["finished_at"] for name in static)
    # The locked-room checks wait for their Dagster run (test_upload_checks.py), each with a
    # deadline; the web request never runs them.
    assert [checks[n]["status"] for n in room] == ["queued"] * 5
    assert all(checks[n]["deadline_at"] > body["uploaded_at"] for n in room)
    assert body["record_diff"] is None
    assert not body["checks_final"] and not body["checks_passed"]
    listed = publisher.owner.get(publisher.uploads)
    assert [u["id"] for u in listed.json()] == [body["id"]]
    shown = publisher.owner.get(f"{publisher.uploads}/{body['id']}")
    assert shown.status_code == 200 and shown.json() == body
    # The first upload binds the id to the organization.
    ids_answer = publisher.owner.get(f"{V1}/portal/organizations/{publisher.org}/ids").json()
    assert [(i["id"], i["kind"]) for i in ids_answer] == [(UK, "upload")]


def test_uploads_are_invisible_outside_the_organization(publisher: Publisher):
    made = publisher.send(uk()).json()
    outsider, other_org = new_org(publisher.api, "someone@else.example", "Else")
    assert_problem(outsider.get(publisher.uploads), 404, "NOT-FOUND")
    assert_problem(outsider.get(f"{publisher.uploads}/{made['id']}"), 404, "NOT-FOUND")
    assert_problem(publisher.send(uk(), outsider), 404, "NOT-FOUND")
    assert_problem(outsider.post(f"{publisher.uploads}/{made['id']}/withdraw"), 404, "NOT-FOUND")
    # Another organization's upload id under one's own organization is unknown too.
    mine = f"{V1}/portal/organizations/{other_org}/uploads/{made['id']}"
    assert_problem(outsider.get(mine), 404, "NOT-FOUND")


def test_a_member_reads_but_only_owners_and_admins_upload(publisher: Publisher):
    api = publisher.api
    member = api.signed_in("member@bank.example")
    admin = api.signed_in("admin@bank.example")
    for email, role in (("member@bank.example", "member"), ("admin@bank.example", "admin")):
        added = publisher.owner.post(
            f"{V1}/organizations/{publisher.org}/members", json={"email": email, "role": role}
        )
        assert added.status_code == 201, added.text
    assert_problem(publisher.send(uk(), member), 403, "FORBIDDEN")
    made = publisher.send(uk(), admin)
    assert made.status_code == 201 and made.json()["uploaded_by"] == "admin@bank.example"
    assert member.get(publisher.uploads).status_code == 200
    assert_problem(
        member.post(f"{publisher.uploads}/{made.json()['id']}/withdraw"), 403, "FORBIDDEN"
    )


def _private() -> bytes:
    return uk(audience="private")


def _no_terms() -> bytes:
    doc = json.loads(folder_files(UK)["plugin.json"])
    doc["licence"]["terms"] = None
    return uk(licence=doc["licence"])


def _blank_terms() -> bytes:
    doc = json.loads(folder_files(UK)["plugin.json"])
    doc["licence"]["terms"] = "  "
    return uk(licence=doc["licence"])


def _fetch(source: bytes) -> bytes:
    files = folder_files(UK)
    files["fetch.mjs"] = source + files["fetch.mjs"]
    return zip_of(files)


PORTAL_REFUSALS = {
    **{code: (422, make) for code, make in REFUSED_ZIPS.items()},
    "PLG-STORE-AUDIENCE": (422, _private),
    "PLG-LICENCE-TERMS-MISSING": (422, _no_terms),
    "PLG-SCHEDULE-TOO-FREQUENT": (422, lambda: uk(schedule="*/30 * * * *")),
    "PLG-IMPORT-PACKAGE": (422, lambda: _fetch(b'import _ from "lodash";\n')),
    "PLG-IMPORT-OUTSIDE": (422, lambda: _fetch(b'import "../elsewhere.mjs";\n')),
    "PLG-ZIP-TOO-LARGE": (413, lambda: b"PK\x03\x04" + bytes(8 * 1024 * 1024 - 3)),
}


def test_every_refusal_is_a_problem_through_the_route_and_stores_nothing(publisher: Publisher):
    for code, (status, make) in sorted(PORTAL_REFUSALS.items()):
        refused = publisher.send(make())
        body = assert_problem(refused, status, code)
        if status == 422:
            assert code in codes(body["findings"]), code
            assert all(f["docs"].endswith(f"/docs/problems/{f['code']}") for f in body["findings"])
    blank = assert_problem(publisher.send(_blank_terms()), 422, "PLG-LICENCE-TERMS-MISSING")
    assert "licence.terms" in blank["detail"]
    noise = random.Random(7).randbytes(530_000).hex().encode()
    big_code = zip_of({**folder_files(UK), "big.mjs": b"// " + noise + b"\n"})
    body = assert_problem(publisher.send(big_code), 422, "PLG-ZIP-UNCOMPRESSED-TOO-LARGE")
    assert "digest-covered code" in body["detail"]
    wrong_type = publisher.owner.post(
        publisher.uploads, content=uk(), headers={"content-type": "application/json"}
    )
    assert_problem(wrong_type, 415, "REQUEST-MEDIA-TYPE")
    assert publisher.stored() == 0 and publisher.bound() == 0
    assert publisher.owner.get(publisher.uploads).json() == []


def test_an_id_another_publisher_holds_or_a_retired_id_is_refused(publisher: Publisher):
    other, _ = new_org(publisher.api, "rival@other.example", "Rival")
    assert publisher.send(uk()).status_code == 201
    rival = Publisher(publisher.api, other, _)
    assert_problem(rival.send(uk()), 409, "PLG-ID-TAKEN")
    with Session(publisher.api.engine) as db:
        ids.retire_id(db, UK, "host@example.org", publisher.api.clock())
        db.commit()
    body = assert_problem(publisher.send(uk(version="1.0.1")), 409, "PLG-ID-RETIRED")
    assert "never used again" in body["detail"]
    assert publisher.stored() == 1


def test_the_same_bytes_twice_are_one_version(publisher: Publisher):
    first = publisher.send(uk())
    again = publisher.send(uk())
    assert first.status_code == 201 and again.status_code == 200
    assert again.json() == first.json()
    assert publisher.stored() == 1


def test_the_same_code_with_a_new_listing_is_a_listing_only_version(publisher: Publisher):
    first = publisher.send(uk()).json()
    files = folder_files(UK)
    listing = json.loads(files["listing.json"])
    listing["tagline"]["en"] = "UK bank holidays, by nation"
    files["listing.json"] = json.dumps(listing).encode()
    second = publisher.send(zip_of(files))
    assert second.status_code == 201, second.text
    body = second.json()
    assert body["id"] != first["id"] and body["digest"] == first["digest"]
    assert body["listing_only"] and body["code_upload_id"] == first["id"]
    assert not body["code_published"]
    assert publisher.stored() == 2


def test_the_same_version_with_other_code_is_refused(publisher: Publisher):
    assert publisher.send(uk()).status_code == 201
    files = folder_files(UK)
    files["fetch.mjs"] += b"// another line\n"
    body = assert_problem(publisher.send(zip_of(files)), 409, "PLG-VERSION-REUSED")
    assert "1.0.0" in body["detail"]
    doc = json.loads(files["plugin.json"])
    doc["version"] = "1.0.1"
    files["plugin.json"] = json.dumps(doc).encode()
    assert publisher.send(zip_of(files)).status_code == 201
    assert publisher.stored() == 2


def publish_at_host(publisher: Publisher, files: dict[str, bytes]) -> None:
    """The plug-in's version published: registered at the host for the organization and
    approved by its digest."""
    code = check_pack(zip_of(files))
    now = publisher.api.clock()
    with write_transaction(publisher.api.engine) as conn:
        hosting.register_code(
            conn, code, origin="upload", by="host@example.org", now=now,
            publisher_organization_id=publisher.org,
        )  # fmt: skip
        status = plugin_status(conn, code.manifest.id)
        moves.approve(
            conn, code.manifest.id, digest_shown=status.current_digest, by="host@example.org",
            now=now,
        )  # fmt: skip


def test_a_new_version_must_exceed_every_published_one(publisher: Publisher):
    publish_at_host(publisher, uk_files(version="1.2.0"))
    changed = uk_files(version="1.1.0")
    changed["fetch.mjs"] += b"// changed\n"
    assert_problem(publisher.send(zip_of(changed)), 409, "PLG-VERSION-NOT-GREATER")
    changed = uk_files(version="1.2.0")
    changed["fetch.mjs"] += b"// changed\n"
    assert_problem(publisher.send(zip_of(changed)), 409, "PLG-VERSION-REUSED")
    assert publisher.stored() == 0
    # The published code with a new listing: listing-only, its code approval standing.
    files = uk_files(version="1.2.0")
    listing = json.loads(files["listing.json"])
    listing["keywords"] = ["bank holidays"]
    files["listing.json"] = json.dumps(listing).encode()
    same_code = publisher.send(zip_of(files))
    assert same_code.status_code == 201, same_code.text
    assert same_code.json()["listing_only"] and same_code.json()["code_published"]
    assert publisher.send(uk(version="1.3.0")).status_code == 201


def test_update_rules_refuse_or_warn_against_the_published_version(publisher: Publisher):
    publish_at_host(publisher, uk_files())
    for code, changes in (
        ("PLG-UPDATE-TIMEZONE", {"timezone": "Europe/Dublin"}),
        ("PLG-UPDATE-SERIES-DATES", "dates"),
        ("PLG-UPDATE-SERIES-KIND", "kind"),
    ):
        doc = json.loads(folder_files(UK)["plugin.json"])
        doc["version"] = "1.1.0"
        if changes == "dates":
            doc["series"][0]["dates"] = "publication"
        elif changes == "kind":
            doc["series"][0]["kind"] = "item"
        else:
            doc.update(changes)
        refused = publisher.send(uk(**doc))
        body = assert_problem(refused, 422, code)
        assert code in codes(body["findings"])
    assert publisher.stored() == 0
    doc = json.loads(folder_files(UK)["plugin.json"])
    doc["version"] = "1.1.0"
    doc["series"] = doc["series"][:2]
    doc["sources"].append(
        {"name": "extra", "url": "https://data.example.org/extra.json", "maxBytes": 1024}
    )
    files = uk_files(**doc)
    files["fixtures/sources/extra"] = b"{}"
    made = publisher.send(zip_of(files))
    assert made.status_code == 201, made.text
    body = made.json()
    update_check = checks_of(body)["updates"]
    assert update_check["status"] == "passed"
    assert codes(update_check["findings"]) == [
        "PLG-UPDATE-SERIES-REMOVED",
        "PLG-UPDATE-SOURCE-HOST-ADDED",
    ]
    assert {"PLG-UPDATE-SERIES-REMOVED", "PLG-UPDATE-SOURCE-HOST-ADDED"} <= set(
        codes(body["warnings"])
    )
    shown = publisher.owner.get(f"{publisher.uploads}/{body['id']}").json()
    assert shown["warnings"] == body["warnings"]


def test_a_bad_listing_or_review_fails_its_check_but_is_stored(publisher: Publisher):
    files = folder_files(UK)
    listing = json.loads(files["listing.json"])
    listing["links"]["privacy"] = "http://example.org/privacy"
    files["listing.json"] = json.dumps(listing).encode()
    review = json.loads(files["review.json"])
    review["examples"][0].pop("expect")
    review["surprise"] = True
    files["review.json"] = json.dumps(review).encode()
    made = publisher.send(zip_of(files))
    assert made.status_code == 201, made.text
    checks = checks_of(made.json())
    assert checks["listing"]["status"] == "failed"
    assert "PLG-LISTING-LINK" in codes(checks["listing"]["findings"])
    assert checks["review"]["status"] == "failed"
    assert set(codes(checks["review"]["findings"])) == {"PLG-REVIEW-INVALID"}
    messages = " ".join(f["message"] for f in checks["review"]["findings"])
    assert "examples[0].expect" in messages and "surprise" in messages
    assert not made.json()["checks_passed"] and not made.json()["checks_final"]
    not_json = zip_of({**folder_files(UK), "review.json": b"{not json"})
    answer = publisher.send(not_json).json()
    assert codes(checks_of(answer)["review"]["findings"]) == ["PLG-REVIEW-INVALID"]


def _version(n: int) -> bytes:
    return uk(version=f"1.0.{n}")


def room_checks_done(publisher: Publisher) -> None:
    """Stands in for the locked-room checks' runs (tested in test_upload_checks.py): every
    queued check passed, so the quota of versions being checked is not what these tests meet."""
    with Session(publisher.api.engine) as db:
        db.execute(
            update(UploadCheck)
            .where(UploadCheck.status == CheckStatus.QUEUED)
            .values(status=CheckStatus.PASSED)
        )
        db.execute(
            update(PortalUpload)
            .where(PortalUpload.state == UploadState.CHECKING)
            .values(state=UploadState.CHECKED)
        )
        db.commit()


def test_twenty_uploads_a_day_then_429_and_nothing_stored(publisher: Publisher):
    for n in range(20):
        assert publisher.send(_version(n)).status_code == 201, n
        room_checks_done(publisher)
    body = assert_problem(publisher.send(_version(20)), 429, "PLG-QUOTA-UPLOADS")
    assert "20" in body["detail"]
    assert publisher.stored() == 20
    # The same bytes again answer the version uploaded before, quota or not.
    assert publisher.send(_version(3)).status_code == 200
    # A withdrawn upload still counts today.
    first = publisher.owner.get(publisher.uploads).json()[-1]
    assert publisher.owner.post(f"{publisher.uploads}/{first['id']}/withdraw").status_code == 200
    assert_problem(publisher.send(_version(20)), 429, "PLG-QUOTA-UPLOADS")
    # The next UTC day the quota starts again.
    now = publisher.api.clock()
    publisher.api.clock.advance(timedelta(days=1) - timedelta(hours=now.hour, minutes=now.minute))
    publisher.api.clock.advance(timedelta(seconds=1))
    assert publisher.send(_version(20)).status_code == 201
    assert publisher.stored() == 21


def test_three_versions_being_checked_at_once_then_429(publisher: Publisher):
    made = [publisher.send(_version(n)).json() for n in range(3)]
    assert [m["state"] for m in made] == ["checking"] * 3
    body = assert_problem(publisher.send(_version(3)), 429, "PLG-QUOTA-CHECKING")
    assert "3 versions" in body["detail"]
    assert publisher.stored() == 3
    # Being checked already: a re-run is a state conflict, not a second queue.
    rerun = publisher.owner.post(f"{publisher.uploads}/{made[0]['id']}/checks")
    assert_problem(rerun, 409, "STATE-CONFLICT")
    # Withdrawing one makes room (its queued checks end, failed).
    withdrawn = publisher.owner.post(f"{publisher.uploads}/{made[0]['id']}/withdraw").json()
    room = ("fixtures", "cases", "examples", "sources", "links")
    assert {c["status"] for c in withdrawn["checks"] if c["name"] in room} == {"failed"}
    assert withdrawn["checks_final"]
    assert publisher.send(_version(3)).status_code == 201
    assert_problem(publisher.send(_version(4)), 429, "PLG-QUOTA-CHECKING")
    # Checks that end free their place.
    room_checks_done(publisher)
    rerun = publisher.owner.post(f"{publisher.uploads}/{made[1]['id']}/checks")
    assert rerun.status_code == 200 and rerun.json()["state"] == "checking"
    assert publisher.send(_version(4)).status_code == 201


def test_withdraw_once_then_state_conflict(publisher: Publisher):
    made = publisher.send(uk()).json()
    withdrawn = publisher.owner.post(f"{publisher.uploads}/{made['id']}/withdraw")
    assert withdrawn.status_code == 200, withdrawn.text
    body = withdrawn.json()
    assert body["state"] == "withdrawn" and body["withdrawn_by"] == "owner@bank.example"
    assert body["withdrawn_at"]
    again = publisher.owner.post(f"{publisher.uploads}/{made['id']}/withdraw")
    assert_problem(again, 409, "STATE-CONFLICT")
    assert_problem(
        publisher.owner.post(f"{publisher.uploads}/{made['id']}/checks"), 409, "STATE-CONFLICT"
    )
    # Its number is free again for other code; the same bytes make a new version.
    files = folder_files(UK)
    files["fetch.mjs"] += b"// another line\n"
    assert publisher.send(zip_of(files)).status_code == 201
    assert publisher.send(uk()).status_code == 409  # 1.0.0 is live with other code now
    assert_problem(publisher.owner.get(f"{publisher.uploads}/999999"), 404, "NOT-FOUND")


def test_rerun_judges_the_static_checks_again(publisher: Publisher):
    files = folder_files(UK)
    listing = json.loads(files["listing.json"])
    listing["publisher"]["domain"] = "bank.example"
    files["listing.json"] = json.dumps(listing).encode()
    made = publisher.send(zip_of(files)).json()
    assert checks_of(made)["listing"]["status"] == "passed"
    room_checks_done(publisher)
    rerun = publisher.owner.post(f"{publisher.uploads}/{made['id']}/checks")
    assert rerun.status_code == 200, rerun.text
    assert [c["name"] for c in rerun.json()["checks"]] == [c["name"] for c in made["checks"]]
    assert rerun.json()["state"] == "checking"
    assert {c["name"]: c["status"] for c in rerun.json()["checks"]}["fixtures"] == "queued"


@pytest.fixture
def sqlite_api(live_server, accounts_sqlite_template: Path, tmp_path: Path, passwords):
    path = tmp_path / "almanac.db"
    shutil.copy(accounts_sqlite_template, path)
    engine = make_engine(f"sqlite:///{path}")
    try:
        with live_api(live_server, engine, passwords) as api:
            yield api
    finally:
        engine.dispose()


def test_uploads_on_the_embedded_sqlite_default(sqlite_api: Api):
    owner, org = new_org(sqlite_api, "owner@bank.example", "Bank")
    publisher = Publisher(sqlite_api, owner, org)
    made = publisher.send(uk())
    assert made.status_code == 201, made.text
    assert publisher.send(uk()).status_code == 200
    assert_problem(publisher.send(_private()), 422, "PLG-STORE-AUDIENCE")
    withdrawn = owner.post(f"{publisher.uploads}/{made.json()['id']}/withdraw")
    assert withdrawn.status_code == 200 and withdrawn.json()["state"] == "withdrawn"
    assert publisher.stored() == 1

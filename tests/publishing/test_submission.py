"""Review information, attestations, submit and withdraw ("Version in the portal") over HTTP, on
the live app with real PostgreSQL: every refusal reason at once, a complete submission, the
5-in-review limit at its edge, withdraw, a newer upload replacing the one in review in one step,
English release notes for an update, and attestations kept with who and when.

Set up in the store, to keep the tests fast (each is tested over HTTP elsewhere): the domain
proof (test_portal_api.py: here the claim is marked verified, or lapsed, directly), the
invitation and the agreement's acceptance (through their domain functions), and the
locked-room checks (test_upload_checks.py: `room_checks_done` marks the queued ones passed)."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import update
from sqlalchemy.orm import Session

from almanac.platform import accounts
from almanac.platform.accounts.models import Account, InvitationRequest, InvitationStatus
from almanac.platform.contract.manifest import parse_manifest
from almanac.platform.contract.review import review_completeness
from almanac.platform.publishing.identity import agreement, domains, invitations
from almanac.platform.publishing.models import Attestation, DomainClaim, DomainState
from tests.api.conftest import Api, assert_problem
from tests.api.test_host import UK, folder_files, zip_of
from tests.pages.test_page_security import token_of
from tests.publishing.test_uploads import (  # noqa: F401  (fixture)
    Publisher,
    new_org,
    publish_at_host,
    publisher,
    room_checks_done,
    sqlite_api,
    uk_files,
)

V1 = "/api/v1"


@pytest.fixture
def pub(publisher: Publisher) -> Publisher:  # noqa: F811  (the fixture of test_uploads)
    return publisher


DOMAIN = "example.org"  # the UK example listing's pub.domain
ALL = [a.value for a in Attestation]


def _owner(db: Session, pub: Publisher) -> Account:
    found = accounts.find_account(db, "owner@bank.example")
    assert found is not None
    return found


def may_submit(pub: Publisher) -> None:
    """The organization's domain verified, invited, and the agreement in effect accepted."""
    now = pub.api.clock()
    with Session(pub.api.engine) as db:
        owner = _owner(db, pub)
        domains.name_domain(db, pub.org, owner, DOMAIN, now)
        db.execute(
            update(DomainClaim)
            .where(DomainClaim.organization_id == pub.org, DomainClaim.ended_at.is_(None))
            .values(state=DomainState.VERIFIED, verified_at=now, last_proved_at=now)
        )
        request = InvitationRequest(
            email="asker@example.org",
            email_key="asker@example.org",
            organization="Bank",
            domain=DOMAIN,
            note="holidays",
            status=InvitationStatus.OPEN,
            created_at=now,
        )
        db.add(request)
        db.flush()
        invitations.invite(db, request.id, owner, now, pub.api.base_url)
        agreement.accept(db, pub.org, owner, 1, now)
        db.commit()


def files_with(plugin_id: str = UK, version: str = "1.0.0", **review: Any) -> dict[str, bytes]:
    """The UK example as plug-in `plugin_id` at `version`, review.json keys replaced."""
    files = uk_files(id=plugin_id, version=version)
    listing = json.loads(files["listing.json"])
    listing["plugin"] = plugin_id
    files["listing.json"] = json.dumps(listing).encode()
    doc = json.loads(files["review.json"])
    doc.update(review)
    files["review.json"] = json.dumps(doc).encode()
    return files


def send(pub: Publisher, files: dict[str, bytes]) -> dict:
    top = json.loads(files["plugin.json"])["id"]
    made = pub.send(zip_of(files, top=top))
    assert made.status_code == 201, made.text
    return made.json()


def attest(pub: Publisher, upload_id: int, which: list[str] = ALL) -> list[dict]:
    made = pub.owner.post(f"{pub.uploads}/{upload_id}/attestations", json={"attestations": which})
    assert made.status_code == 200, made.text
    return made.json()


def ready(pub: Publisher, files: dict[str, bytes]) -> int:
    """An upload whose checks passed and whose five attestations are made."""
    made = send(pub, files)
    room_checks_done(pub)
    attest(pub, made["id"])
    return int(made["id"])


def submit(pub: Publisher, upload_id: int):
    return pub.owner.post(f"{pub.uploads}/{upload_id}/submit")


def reasons(response) -> list[str]:
    body = assert_problem(response, 409, "SUBMIT-REFUSED")
    return [f["code"] for f in body["findings"]]


def test_every_refusal_reason_is_listed_at_once(pub: Publisher) -> None:
    three = json.loads(folder_files(UK)["review.json"])["examples"][:3]
    made = send(pub, files_with(examples=three))
    assert made["state"] == "checking"
    refused = submit(pub, made["id"])
    assert reasons(refused) == [
        "SUBMIT-CHECKS-NOT-PASSED",
        "PLG-REVIEW-INCOMPLETE",
        *["SUBMIT-ATTESTATION-MISSING"] * 5,
        "DOMAIN-NOT-VERIFIED",
        "DOMAIN-NOT-INVITED",
        "AGREEMENT-NOT-ACCEPTED",
    ]
    findings = refused.json()["findings"]
    assert "fixtures (queued)" in findings[0]["message"]
    assert "five are needed" in findings[1]["message"]
    assert all(f["docs"].endswith(f"/docs/problems/{f['code']}") for f in findings)
    assert pub.owner.get(f"{pub.uploads}/{made['id']}").json()["state"] == "checking"
    # A lapsed domain is its own reason; the rest stay until each holds.
    may_submit(pub)
    with Session(pub.api.engine) as db:
        db.execute(update(DomainClaim).values(state=DomainState.LAPSED))
        db.commit()
    room_checks_done(pub)
    attest(pub, made["id"], ALL[:2])
    assert reasons(submit(pub, made["id"])) == [
        "PLG-REVIEW-INCOMPLETE",
        *["SUBMIT-ATTESTATION-MISSING"] * 3,
        "DOMAIN-LAPSED",
    ]
    review = pub.owner.get(f"{pub.uploads}/{made['id']}/review").json()
    assert review["source"] == "upload" and not review["complete"]
    assert [p["code"] for p in review["problems"]] == ["PLG-REVIEW-INCOMPLETE"]


def test_a_complete_submission_is_in_review_with_its_attestations(pub: Publisher) -> None:
    may_submit(pub)
    made = send(pub, files_with())
    room_checks_done(pub)
    first = attest(pub, made["id"], ALL[:1])
    assert [(a["attestation"], a["made_by"]) for a in first] == [(ALL[0], "owner@bank.example")]
    assert first[0]["words"] == "it may publish the data"
    pub.api.clock.advance(timedelta(minutes=5))
    admin = pub.api.signed_in("admin@bank.example")
    added = pub.owner.post(
        f"{V1}/organizations/{pub.org}/members",
        json={"email": "admin@bank.example", "role": "admin"},
    )
    assert added.status_code == 201, added.text
    both = admin.post(f"{pub.uploads}/{made['id']}/attestations", json={"attestations": ALL}).json()
    assert [a["attestation"] for a in both] == ALL
    # Each is kept once, with who made it and when: the first one stands.
    assert both[0] == first[0]
    assert {a["made_by"] for a in both[1:]} == {"admin@bank.example"}
    assert all(a["made_at"] > first[0]["made_at"] for a in both[1:])
    listed = pub.owner.get(f"{pub.uploads}/{made['id']}/attestations").json()
    assert listed == both
    done = submit(pub, made["id"])
    assert done.status_code == 200, done.text
    body = done.json()
    assert body["replaced"] is None
    upload = body["upload"]
    assert upload["state"] == "in_review" and upload["submitted_by"] == "owner@bank.example"
    assert upload["submitted_at"] and upload["agreement_version"] == 1
    # In review, the version's content stays as submitted.
    assert_problem(submit(pub, made["id"]), 409, "STATE-CONFLICT")
    rerun = pub.owner.post(f"{pub.uploads}/{made['id']}/checks")
    assert_problem(rerun, 409, "STATE-CONFLICT")
    more = pub.owner.post(f"{pub.uploads}/{made['id']}/attestations", json={"attestations": ALL})
    assert_problem(more, 409, "STATE-CONFLICT")
    # A member reads, but only owners and admins make attestations or submit.
    outsider, _ = new_org(pub.api, "someone@else.example", "Else")
    assert_problem(outsider.post(f"{pub.uploads}/{made['id']}/submit"), 404, "NOT-FOUND")
    unknown = pub.owner.post(
        f"{pub.uploads}/{made['id']}/attestations", json={"attestations": ["trust-me"]}
    )
    assert unknown.status_code == 422


def test_five_in_review_at_once_and_a_newer_upload_replaces_one(pub: Publisher) -> None:
    may_submit(pub)
    ids = [ready(pub, files_with(f"bank-holidays-{n}")) for n in range(6)]
    for upload_id in ids[:5]:
        assert submit(pub, upload_id).status_code == 200
    assert reasons(submit(pub, ids[5])) == ["PLG-QUOTA-REVIEW"]
    # A newer upload of a plug-in in review takes its place in one step, never blocked.
    newer = ready(pub, files_with("bank-holidays-0", "1.0.1"))
    replaced = submit(pub, newer)
    assert replaced.status_code == 200, replaced.text
    body = replaced.json()
    assert body["upload"]["state"] == "in_review"
    assert body["replaced"]["id"] == ids[0] and body["replaced"]["state"] == "withdrawn"
    assert body["replaced"]["replaced_by"] == newer
    assert body["replaced"]["withdrawn_by"] == "owner@bank.example"
    # The older upload does not go back in front of the newer one.
    assert_problem(submit(pub, ids[0]), 409, "STATE-CONFLICT")
    # Withdrawn, a version leaves review and frees its place.
    withdrawn = pub.owner.post(f"{pub.uploads}/{ids[1]}/withdraw")
    assert withdrawn.status_code == 200 and withdrawn.json()["state"] == "withdrawn"
    assert submit(pub, ids[5]).status_code == 200
    states = {u["id"]: u["state"] for u in pub.owner.get(pub.uploads).json()}
    assert sorted(i for i, s in states.items() if s == "in_review") == sorted([newer, *ids[2:]])


def test_an_update_needs_english_release_notes(pub: Publisher) -> None:
    may_submit(pub)
    publish_at_host(pub, uk_files())
    made = ready(pub, files_with(version="1.1.0", releaseNotes={"cy": "Diweddariad."}))
    refused = submit(pub, made)
    assert reasons(refused) == ["PLG-REVIEW-INCOMPLETE"]
    assert "release notes in English" in refused.json()["findings"][0]["message"]
    # Sent separately: the shape is judged at once, and a basis must be an allowed one.
    review = json.loads(folder_files(UK)["review.json"])
    bad = {**review, "surprise": True}
    sent = pub.owner.put(f"{pub.uploads}/{made}/review", json=bad)
    assert "PLG-REVIEW-INVALID" in [
        f["code"] for f in assert_problem(sent, 422, "PLG-REVIEW-INVALID")["findings"]
    ]
    found_online = {
        **review,
        "sources": [{**review["sources"][0], "basis": "found-online"}],
    }
    sent = pub.owner.put(f"{pub.uploads}/{made}/review", json=found_online)
    assert sent.status_code == 200, sent.text
    assert sent.json()["state"] == "checking"  # its example days are checked again
    room_checks_done(pub)
    shown = pub.owner.get(f"{pub.uploads}/{made}/review").json()
    assert shown["source"] == "sent" and shown["sent_by"] == "owner@bank.example"
    assert [p["path"] for p in shown["problems"]] == ["sources[0].basis"]
    assert reasons(submit(pub, made)) == ["PLG-REVIEW-INCOMPLETE"]
    sent = pub.owner.put(f"{pub.uploads}/{made}/review", json=review)
    assert sent.status_code == 200, sent.text
    room_checks_done(pub)
    shown = pub.owner.get(f"{pub.uploads}/{made}/review").json()
    assert shown["complete"] and shown["document"] == review
    done = submit(pub, made)
    assert done.status_code == 200, done.text


@pytest.mark.parametrize(
    "basis", ["open-licence", "public-domain", "official-publication", "permission"]
)
def test_each_chosen_basis_is_complete(basis: str) -> None:
    files = folder_files(UK)
    manifest = parse_manifest(files["plugin.json"]).manifest
    assert manifest is not None
    doc = json.loads(files["review.json"])
    doc["sources"][0]["basis"] = basis
    raw = json.dumps(doc).encode()
    assert review_completeness(raw, manifest, update=True) == []
    del doc["releaseNotes"]
    raw = json.dumps(doc).encode()
    assert review_completeness(raw, manifest, update=False) == []
    assert [p.path for p in review_completeness(raw, manifest, update=True)] == ["releaseNotes"]


def test_submit_on_the_embedded_sqlite_default(sqlite_api: Api) -> None:  # noqa: F811
    owner, org = new_org(sqlite_api, "owner@bank.example", "Bank")
    pub = Publisher(sqlite_api, owner, org)
    made = ready(pub, files_with())
    assert reasons(submit(pub, made)) == [
        "DOMAIN-NOT-VERIFIED",
        "DOMAIN-NOT-INVITED",
        "AGREEMENT-NOT-ACCEPTED",
    ]
    may_submit(pub)
    done = submit(pub, made)
    assert done.status_code == 200, done.text
    assert done.json()["upload"]["state"] == "in_review"


def test_the_submit_page_is_refused_with_the_apis_status_and_every_reason(pub: Publisher) -> None:
    """The page's refusal of a submit comes from the same table as the API's (409), with the
    code SUBMIT-REFUSED and each condition not met after its sentence."""
    made = send(pub, files_with())
    page = f"/portal/{pub.org}/uploads/{made['id']}"
    refused = pub.owner.post(f"{page}/submit", data={"csrf_token": token_of(pub.owner, page)})
    assert refused.status_code == 409, refused.text
    assert "<code>SUBMIT-REFUSED</code>" in refused.text
    sentence = f"upload {made['id']} may not be submitted yet"
    assert sentence in refused.text
    for reason in ("SUBMIT-CHECKS-NOT-PASSED", "SUBMIT-ATTESTATION-MISSING", "DOMAIN-NOT-VERIFIED"):
        assert f"{reason}: " in refused.text

"""Review, publishing, the listing's moves and the store over HTTP, on the live app with real
PostgreSQL and decision mail through a real SMTP server on loopback: the desk's queue and
version page, each decision with its reason, the same-organization reviewer rule, an approval
binding exactly the reviewed content, publish and publish-on-approval, unpublish, list again,
retire and the host's shelf and takedown with their effect on install, the store and runs, and
the store's search and categories.

As in test_submission.py, the domain proof, invitation and agreement are set up through their
domain functions and the locked-room checks marked passed (`room_checks_done`); the real checks
and the real run after publishing are in test_publish_end_to_end.py."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import select, text, update
from sqlalchemy.orm import Session

from almanac.platform import accounts
from almanac.platform.contract.pack import check_pack
from almanac.platform.lifecycle import RunTrigger
from almanac.platform.publishing.models import PortalUpload, ReviewInformation
from almanac.platform.publishing.uploads.diff import record_diff
from almanac.platform.store.plugins import plugin_status
from almanac.platform.store.tables import plugins, requests
from almanac.platform.store.write import RunFacts, write_run
from almanac.sandbox.smtp import MailSettings, SmtpMailer
from tests.api.conftest import Api, assert_problem, live_api
from tests.api.test_host import UK, folder_files, zip_of
from tests.api.test_mail import Inbox, smtp  # noqa: F401  (fixture)
from tests.publishing.test_submission import (
    files_with,
    may_submit,
    ready,
)
from tests.publishing.test_uploads import (  # noqa: F401  (fixture)
    Publisher,
    new_org,
    publisher,
    room_checks_done,
    sqlite_api,
)

V1 = "/api/v1"
REVIEW = f"{V1}/review"
STORE = f"{V1}/store"


@pytest.fixture
def api(smtp, live_server, pg_engine, passwords) -> Iterator[Api]:  # noqa: F811
    """The live app with its mail going to the loopback SMTP server."""
    _, port = smtp
    mailer = SmtpMailer(MailSettings(smtp_host="127.0.0.1", smtp_port=port))
    with live_api(live_server, pg_engine, passwords, mailer=mailer) as made:
        yield made


@pytest.fixture
def pub(publisher: Publisher) -> Publisher:  # noqa: F811
    may_submit(publisher)
    return publisher


def reviewer(api: Api, email: str) -> httpx.Client:
    client = api.signed_in(email)
    with Session(api.engine) as db:
        accounts.grant_staff_role(db, email, "reviewer", api.clock())
        db.commit()
    return client


def in_review(pub: Publisher, files: dict[str, bytes], **body: Any) -> int:
    made = ready(pub, files)
    done = pub.owner.post(f"{pub.uploads}/{made}/submit", json=body or None)
    assert done.status_code == 200, done.text
    return made


def desk(client: httpx.Client, upload_id: int) -> dict:
    shown = client.get(f"{REVIEW}/uploads/{upload_id}")
    assert shown.status_code == 200, shown.text
    return shown.json()


def decide(
    client: httpx.Client, upload_id: int, decision: str, reviewed: str, **extra: str
) -> httpx.Response:
    body = {"decision": decision, "reason": extra.pop("reason", "looks right"), **extra}
    return client.post(
        f"{REVIEW}/uploads/{upload_id}/decision", json={**body, "reviewed": reviewed}
    )


def approved(pub: Publisher, rev: httpx.Client, files: dict[str, bytes], **body: Any) -> int:
    upload_id = in_review(pub, files, **body)
    done = decide(rev, upload_id, "approve", desk(rev, upload_id)["reviewed"])
    assert done.status_code == 200, done.text
    return upload_id


def publish(pub: Publisher, upload_id: int) -> httpx.Response:
    return pub.owner.post(f"{pub.uploads}/{upload_id}/publish")


def listing_url(pub: Publisher, plugin_id: str = UK) -> str:
    return f"{V1}/portal/organizations/{pub.org}/plugins/{plugin_id}"


def plugin_row(pub: Publisher, plugin_id: str = UK) -> dict:
    with pub.api.engine.connect() as conn:
        row = conn.execute(select(plugins).where(plugins.c.id == plugin_id)).mappings().one()
        return dict(row)


def mails_to(inbox: Inbox, address: str) -> list[str]:
    return [m["Subject"] for rcpt, m in inbox.messages if address in rcpt]


def test_the_queue_and_a_version_on_the_desk(pub: Publisher) -> None:
    rev = reviewer(pub.api, "rev@service.example")
    first = in_review(pub, files_with("bank-holidays-a"))
    pub.api.clock.advance(timedelta(minutes=30))
    second = in_review(pub, files_with("bank-holidays-b"))
    pub.api.clock.advance(timedelta(minutes=15))
    queue = rev.get(f"{REVIEW}/queue").json()
    assert [(e["upload_id"], e["waiting_seconds"]) for e in queue] == [
        (first, 45 * 60),
        (second, 15 * 60),
    ]
    assert queue[0]["organization"] == "Bank" and queue[0]["update"] is False
    # Only reviewers use the desk; a publisher does not read another's submission there.
    assert_problem(pub.owner.get(f"{REVIEW}/queue"), 403, "FORBIDDEN")
    assert_problem(pub.owner.get(f"{REVIEW}/uploads/{first}"), 403, "FORBIDDEN")
    shown = desk(rev, first)
    assert shown["upload"]["plugin_id"] == "bank-holidays-a"
    assert shown["reviewed"].startswith("sha256:") and len(shown["reviewed"]) == 71
    assert shown["domain"] == "example.org" and shown["domain_verified"] is True
    assert shown["published_version"] is None
    # A first version: every file is added, with its text as the diff.
    files = {f["path"]: f for f in shown["files"]}
    assert set(files) == set(files_with("bank-holidays-a"))
    assert {f["change"] for f in files.values()} == {"added"}
    assert "+" in files["fetch.mjs"]["diff"] and files["fetch.mjs"]["binary"] is False
    assert shown["review"]["examples"] and len(shown["attestations"]) == 5
    assert shown["findings"] == [] and shown["decisions"] == []


def test_an_update_shows_each_file_diff_against_the_published_version(pub: Publisher) -> None:
    rev = reviewer(pub.api, "rev@service.example")
    published = approved(pub, rev, files_with())
    assert publish(pub, published).status_code == 200
    update_files = files_with(version="1.1.0", releaseNotes={"en": "A comment."})
    update_files["fetch.mjs"] = b"// a comment\n" + update_files["fetch.mjs"]
    upload_id = in_review(pub, update_files)
    shown = desk(rev, upload_id)
    assert shown["published_version"] == "1.0.0"
    files = {f["path"]: f for f in shown["files"]}
    assert files["fetch.mjs"]["change"] == "changed"
    assert "+// a comment" in files["fetch.mjs"]["diff"]
    assert files["fetch.mjs"]["diff"].startswith("--- published/fetch.mjs")
    assert files["plugin.json"]["change"] == "changed"
    assert files["listing/icon.png"]["binary"] is True
    assert files["listing/icon.png"]["change"] == "same"
    assert files["fixtures/records.jsonl"]["change"] == "same"
    assert [e["update"] for e in rev.get(f"{REVIEW}/queue").json()] == [True]


def test_each_decision_keeps_its_reason_and_tells_owners_and_admins(
    pub: Publisher,
    smtp: tuple[Inbox, int],  # noqa: F811
) -> None:
    inbox, _ = smtp
    pub.api.signed_in("admin@bank.example")
    added = pub.owner.post(
        f"{V1}/organizations/{pub.org}/members",
        json={"email": "admin@bank.example", "role": "admin"},
    )
    assert added.status_code == 201, added.text
    rev = reviewer(pub.api, "rev@service.example")
    upload_id = in_review(pub, files_with("bank-holidays-c"))
    reviewed = desk(rev, upload_id)["reviewed"]
    # A reason is required; the note is free text.
    missing = rev.post(
        f"{REVIEW}/uploads/{upload_id}/decision",
        json={"decision": "approve", "reason": "", "reviewed": reviewed},
    )
    assert missing.status_code == 422
    sent_back = decide(
        rev, upload_id, "request-changes", reviewed, reason="example day 3", note="Check May 2."
    )
    assert sent_back.status_code == 200, sent_back.text
    kept = sent_back.json()
    assert kept["decision"] == "request-changes" and kept["reason"] == "example day 3"
    assert kept["note"] == "Check May 2." and kept["reviewer"] == "rev@service.example"
    upload = pub.owner.get(f"{pub.uploads}/{upload_id}").json()
    assert upload["state"] == "changes_requested"
    inbox.wait(2)
    subject = "Review of bank-holidays-c 1.0.0: sent back with changes requested"
    assert mails_to(inbox, "owner@bank.example") == [subject]
    assert mails_to(inbox, "admin@bank.example") == [subject]
    body = next(m for _, m in inbox.messages).get_payload()
    assert "Reason: example day 3" in body and "Check May 2." in body
    notices = pub.owner.get(f"{V1}/portal/organizations/{pub.org}/notices").json()
    assert [(n["kind"], n["subject"], n["upload_id"]) for n in notices] == [
        ("review-request-changes", subject, upload_id)
    ]
    # Deciding again on a version no longer in review is refused.
    assert_problem(decide(rev, upload_id, "approve", reviewed), 409, "STATE-CONFLICT")
    # Sent back, the publisher may submit it again; then a rejection and an approval.
    assert pub.owner.post(f"{pub.uploads}/{upload_id}/submit").status_code == 200
    reviewed = desk(rev, upload_id)["reviewed"]
    rejected = decide(rev, upload_id, "reject", reviewed, reason="not a public source")
    assert rejected.status_code == 200
    assert pub.owner.get(f"{pub.uploads}/{upload_id}").json()["state"] == "rejected"
    assert_problem(pub.owner.post(f"{pub.uploads}/{upload_id}/submit"), 409, "STATE-CONFLICT")
    other = approved(pub, rev, files_with("bank-holidays-d"))
    assert pub.owner.get(f"{pub.uploads}/{other}").json()["state"] == "approved"
    inbox.wait(6)
    assert mails_to(inbox, "owner@bank.example")[1:] == [
        "Review of bank-holidays-c 1.0.0: rejected",
        "Review of bank-holidays-d 1.0.0: approved",
    ]
    decisions = desk(rev, upload_id)["decisions"]
    assert [d["decision"] for d in decisions] == ["request-changes", "reject"]


def test_a_reviewer_from_the_publishing_organization_approves_only_when_nobody_else_can(
    pub: Publisher,
) -> None:
    inside = reviewer(pub.api, "insider@bank.example")
    added = pub.owner.post(
        f"{V1}/organizations/{pub.org}/members",
        json={"email": "insider@bank.example", "role": "member"},
    )
    assert added.status_code == 201, added.text
    upload_id = in_review(pub, files_with("bank-holidays-e"))
    reviewed = desk(inside, upload_id)["reviewed"]
    # Alone, the insider is the only reviewer who can: the approval stands.
    # With another reviewer outside the organization, the insider may not approve.
    outside = reviewer(pub.api, "outsider@service.example")
    refused = decide(inside, upload_id, "approve", reviewed)
    assert_problem(refused, 403, "REVIEW-SAME-ORGANIZATION")
    assert pub.owner.get(f"{pub.uploads}/{upload_id}").json()["state"] == "in_review"
    # Requesting changes is not approving.
    assert decide(inside, upload_id, "request-changes", reviewed).status_code == 200
    assert pub.owner.post(f"{pub.uploads}/{upload_id}/submit").status_code == 200
    assert decide(outside, upload_id, "approve", reviewed).status_code == 200
    lone = in_review(pub, files_with("bank-holidays-f"))
    with Session(pub.api.engine) as db:
        accounts.revoke_staff_role(
            db,
            accounts.find_account(db, "outsider@service.example").id,  # type: ignore[union-attr]
            "reviewer",
            pub.api.clock(),
        )
        db.commit()
    done = decide(inside, lone, "approve", desk(inside, lone)["reviewed"])
    assert done.status_code == 200, done.text


def test_an_approval_binds_exactly_the_reviewed_content(pub: Publisher) -> None:
    rev = reviewer(pub.api, "rev@service.example")
    first = in_review(pub, files_with())
    seen = desk(rev, first)["reviewed"]
    # A newer upload takes its place in review: deciding on what was read is refused.
    newer_files = files_with(version="1.0.1")
    newer_files["fetch.mjs"] = b"// newer\n" + newer_files["fetch.mjs"]
    newer = in_review(pub, newer_files)
    assert_problem(decide(rev, first, "approve", seen), 409, "STATE-CONFLICT")
    assert_problem(decide(rev, newer, "approve", seen), 409, "REVIEW-CONTENT-CHANGED")
    current = desk(rev, newer)["reviewed"]
    assert current != seen
    assert decide(rev, newer, "approve", current).status_code == 200
    # Approved, the content is fixed; changed anyway behind the portal's back, it is not
    # published.
    assert_problem(
        pub.owner.put(f"{pub.uploads}/{newer}/review", json={"notes": "x"}), 409, "STATE-CONFLICT"
    )
    review = json.loads(folder_files(UK)["review.json"])
    with Session(pub.api.engine) as db:
        db.add(
            ReviewInformation(
                upload_id=newer,
                document={**review, "notes": "changed after review"},
                sent_by="owner@bank.example",
                sent_at=pub.api.clock(),
            )
        )
        db.commit()
    assert_problem(publish(pub, newer), 409, "REVIEW-CONTENT-CHANGED")
    with pub.api.engine.connect() as conn:
        kept = conn.execute(select(plugins.c.id).where(plugins.c.id == UK)).first()
    assert kept is None, "nothing was published"


def test_publish_makes_the_version_the_approved_code_and_supersedes_the_last(
    pub: Publisher,
) -> None:
    rev = reviewer(pub.api, "rev@service.example")
    first = approved(pub, rev, files_with())
    # Only an approved version is published, by owners and admins.
    in_review_only = in_review(pub, files_with("bank-holidays-g"))
    assert_problem(publish(pub, in_review_only), 409, "STATE-CONFLICT")
    done = publish(pub, first)
    assert done.status_code == 200, done.text
    assert done.json()["state"] == "published"
    assert done.json()["published_by"] == "owner@bank.example"
    row = plugin_row(pub)
    assert row["state"] == "approved" and row["publisher_organization_id"] == pub.org
    with pub.api.engine.connect() as conn:
        started = (
            conn.execute(select(requests.c.trigger).where(requests.c.plugin_id == UK))
            .scalars()
            .all()
        )
    assert started == ["first"], "the first run is requested at once: live within minutes"
    assert_problem(publish(pub, first), 409, "STATE-CONFLICT")
    assert_problem(pub.owner.post(f"{pub.uploads}/{first}/withdraw"), 409, "STATE-CONFLICT")
    # An approved version withdrawn is never published.
    spare = approved(pub, rev, files_with("bank-holidays-w"))
    assert pub.owner.post(f"{pub.uploads}/{spare}/withdraw").json()["state"] == "withdrawn"
    assert_problem(publish(pub, spare), 409, "STATE-CONFLICT")
    # The next version is uploaded, checked and reviewed while the published one keeps
    # running (its state and approved code do not move).
    update_files = files_with(version="1.1.0", releaseNotes={"en": "Faster."})
    update_files["fetch.mjs"] = b"// 1.1.0\n" + update_files["fetch.mjs"]
    nxt = in_review(pub, update_files)
    assert plugin_row(pub)["state"] == "approved"
    assert plugin_row(pub)["approved_version_id"] == row["approved_version_id"]
    # Published automatically on approval, as chosen when it was submitted.
    pub.owner.post(f"{pub.uploads}/{nxt}/withdraw")
    update_files["fetch.mjs"] = b"// 1.1.1\n" + update_files["fetch.mjs"]
    update_files["plugin.json"] = json.dumps(
        {**json.loads(update_files["plugin.json"]), "version": "1.1.1"}
    ).encode()
    auto = in_review(pub, update_files, publish_on_approval=True)
    assert pub.owner.get(f"{pub.uploads}/{auto}").json()["publish_on_approval"] is True
    assert decide(rev, auto, "approve", desk(rev, auto)["reviewed"]).status_code == 200
    shown = pub.owner.get(f"{pub.uploads}/{auto}").json()
    assert shown["state"] == "published"
    assert shown["published_by"] == "owner@bank.example (published on approval)"
    assert pub.owner.get(f"{pub.uploads}/{first}").json()["state"] == "superseded"
    after = plugin_row(pub)
    assert (
        after["state"] == "approved" and after["approved_version_id"] != row["approved_version_id"]
    )
    history = pub.owner.get(f"{listing_url(pub)}/history").json()
    assert [(m["action"], m["by"]) for m in history] == [
        ("publish", "owner@bank.example"),
        ("publish", "owner@bank.example (published on approval)"),
    ]


def test_listing_moves_and_their_effect_on_install_the_store_and_runs(pub: Publisher) -> None:
    api = pub.api
    rev = reviewer(api, "rev@service.example")
    assert publish(pub, approved(pub, rev, files_with())).status_code == 200
    reader = api.signed_in("reader@example.net")
    newcomer = api.signed_in("newcomer@example.net")
    found = reader.get(f"{STORE}/plugins").json()
    assert [e["plugin_id"] for e in found] == [UK]
    assert found[0]["verified"] is True and found[0]["publisher_domain"] == "example.org"
    installed = reader.post(f"{STORE}/plugins/{UK}/install")
    assert installed.status_code == 200, installed.text
    assert installed.json()["entry"]["installed"] is True
    prefs = reader.get(f"{V1}/reader/preferences").json()
    assert prefs["shown"] == [UK]
    # Unpublish: nobody new installs it; it stays, marked unlisted, for its reader; it runs.
    moved = pub.owner.post(f"{listing_url(pub)}/unpublish")
    assert moved.status_code == 200 and moved.json()["state"] == "unlisted"
    again = pub.owner.post(f"{listing_url(pub)}/unpublish")
    assert again.json() == moved.json()
    assert reader.get(f"{STORE}/plugins").json() == []
    assert_problem(newcomer.post(f"{STORE}/plugins/{UK}/install"), 409, "STORE-NOT-LISTED")
    assert_problem(
        newcomer.put(
            f"{V1}/reader/preferences", json={"preferences": {f"plugins.{UK}.shown": True}}
        ),
        409,
        "STORE-NOT-LISTED",
    )
    assert_problem(newcomer.get(f"{STORE}/plugins/{UK}"), 404, "NOT-FOUND")
    page = reader.get(f"{STORE}/plugins/{UK}").json()
    assert page["listing_state"] == "unlisted" and page["entry"]["installed"] is True
    assert reader.get(f"{V1}/reader/plugins/{UK}").json()["unlisted"] is True
    assert reader.post(f"{STORE}/plugins/{UK}/install").status_code == 200
    assert plugin_row(pub)["state"] == "approved"
    # List again; repeated, nothing more.
    relisted = pub.owner.post(f"{listing_url(pub)}/relist")
    assert relisted.json()["state"] == "listed"
    assert pub.owner.post(f"{listing_url(pub)}/relist").json() == relisted.json()
    assert reader.get(f"{V1}/reader/plugins/{UK}").json()["unlisted"] is False
    # The host's shelf acts on the same listing; only the service lists it again.
    operator = api.signed_in("op@service.example", operator=True)
    assert operator.post(f"{V1}/host/plugins/{UK}/take-off-shelf").status_code in (200, 204)
    assert pub.owner.get(listing_url(pub)).json()["state"] == "shelved"
    assert_problem(pub.owner.post(f"{listing_url(pub)}/relist"), 409, "LISTING-NOT-RELISTABLE")
    assert reader.get(f"{STORE}/plugins").json() == []
    assert operator.post(f"{V1}/host/plugins/{UK}/put-on-shelf").status_code in (200, 204)
    assert [e["plugin_id"] for e in newcomer.get(f"{STORE}/plugins").json()] == [UK]
    # A takedown shows its public message to the readers who installed it.
    down = operator.post(
        f"{V1}/host/plugins/{UK}/takedown",
        json={"reason": "licence", "note": "private", "message": "Withdrawn by the service."},
    )
    assert down.status_code in (200, 204), down.text
    page = reader.get(f"{STORE}/plugins/{UK}").json()
    assert page["listing_state"] == "taken-down"
    assert page["takedown_message"] == "Withdrawn by the service."
    assert_problem(pub.owner.post(f"{listing_url(pub)}/relist"), 409, "LISTING-NOT-RELISTABLE")
    history = [m["action"] for m in pub.owner.get(f"{listing_url(pub)}/history").json()]
    assert history == ["publish", "unpublish", "relist", "shelve", "unshelve", "takedown"]


def test_retire_stops_runs_for_good_and_withdraws_what_is_in_review(
    pub: Publisher,
    smtp: tuple[Inbox, int],  # noqa: F811
) -> None:
    inbox, _ = smtp
    api = pub.api
    rev = reviewer(api, "rev@service.example")
    assert publish(pub, approved(pub, rev, files_with())).status_code == 200
    reader = api.signed_in("reader@example.net")
    assert reader.post(f"{STORE}/plugins/{UK}/install").status_code == 200
    update_files = files_with(version="1.1.0", releaseNotes={"en": "More."})
    update_files["fetch.mjs"] = b"// more\n" + update_files["fetch.mjs"]
    pending = in_review(pub, update_files)
    # Typing another id, or none, is refused; nothing changes.
    wrong = pub.owner.post(f"{listing_url(pub)}/retire", json={"confirm": "uk-bank"})
    assert_problem(wrong, 422, "PLG-RETIRE-CONFIRM")
    assert plugin_row(pub)["retired"] is False
    done = pub.owner.post(f"{listing_url(pub)}/retire", json={"confirm": UK})
    assert done.status_code == 200, done.text
    assert done.json()["listing"]["state"] == "retired"
    assert done.json()["withdrawn"] == [pending]
    assert pub.owner.get(f"{pub.uploads}/{pending}").json()["state"] == "withdrawn"
    row = plugin_row(pub)
    assert row["retired"] is True and row["state"] == "paused"
    inbox.wait(1)
    assert mails_to(inbox, "owner@bank.example")[-1] == f"Retired: {UK}"
    # The reader keeps its records (the plug-in stays readable, not updating).
    shown = reader.get(f"{V1}/reader/plugins/{UK}").json()
    assert shown["status"] == "paused" and shown["shown"] is True
    # Runs stop for good: no resume, no approval at the host; the id is never used again.
    operator = api.signed_in("op@service.example", operator=True)
    assert_problem(operator.post(f"{V1}/host/plugins/{UK}/resume"), 409, "STATE-CONFLICT")
    refused = pub.send(zip_of(update_files, top=UK))
    assert_problem(refused, 409, "PLG-ID-RETIRED")
    assert_problem(pub.owner.post(f"{listing_url(pub)}/relist"), 409, "LISTING-NOT-RELISTABLE")
    assert_problem(pub.owner.post(f"{listing_url(pub)}/unpublish"), 409, "STATE-CONFLICT")
    assert reader.get(f"{STORE}/plugins").json() == []
    again = pub.owner.post(f"{listing_url(pub)}/retire", json={"confirm": UK})
    assert again.status_code == 200 and again.json()["withdrawn"] == []


def test_store_search_by_words_and_category_in_the_readers_language(pub: Publisher) -> None:
    rev = reviewer(pub.api, "rev@service.example")
    for plugin_id, category, keyword in (
        ("bank-holidays-h", "holidays", "bunting"),
        ("exchange-rates-h", "finance", "sterling"),
    ):
        files = files_with(plugin_id)
        listing = json.loads(files["listing.json"])
        listing["category"] = category
        listing["keywords"] = [keyword]
        listing["tagline"] = {"en": f"{keyword} days", "es": f"días de {keyword}"}
        files["listing.json"] = json.dumps(listing).encode()
        assert publish(pub, approved(pub, rev, files)).status_code == 200
    reader = pub.api.signed_in("reader@example.net")

    def ids(**query: str) -> list[str]:
        found = reader.get(f"{STORE}/plugins", params=query)
        assert found.status_code == 200, found.text
        return [e["plugin_id"] for e in found.json()]

    assert ids() == ["bank-holidays-h", "exchange-rates-h"]
    assert ids(category="finance") == ["exchange-rates-h"]
    assert ids(category="holidays") == ["bank-holidays-h"]
    assert ids(category="sports") == []
    assert ids(q="STERLING") == ["exchange-rates-h"]
    assert ids(q="bunting days") == ["bank-holidays-h"]
    assert ids(q="bunting sterling") == []
    assert ids(q="example.org") == ["bank-holidays-h", "exchange-rates-h"]
    assert ids(q="50%_") == []  # LIKE's own characters are the reader's words, not patterns
    # A page at a time: the Link header names the next page until the last.
    first = reader.get(f"{STORE}/plugins", params={"limit": "1", "q": "days"})
    assert [e["plugin_id"] for e in first.json()] == ["bank-holidays-h"]
    following = first.links["next"]["url"]
    assert "after=bank-holidays-h" in following and "q=days" in following
    last = reader.get(following)
    assert [e["plugin_id"] for e in last.json()] == ["exchange-rates-h"]
    assert "link" not in last.headers
    assert ids(after="exchange-rates-h") == []
    for limit in ("0", "201"):
        refused = reader.get(f"{STORE}/plugins", params={"limit": limit})
        assert_problem(refused, 422, "REQUEST-INVALID")
        assert "limit" in refused.json()["detail"]
    assert_problem(
        reader.get(f"{STORE}/plugins", params={"category": "gossip"}), 422, "REQUEST-INVALID"
    )
    assert "holidays" in reader.get(f"{STORE}/categories").json()
    spanish = reader.get(f"{STORE}/plugins", params={"language": "es", "q": "bunting"}).json()
    assert spanish[0]["tagline"] == "días de bunting"
    page = reader.get(f"{STORE}/plugins/bank-holidays-h", params={"language": "es"}).json()
    assert page["entry"]["tagline"] == "días de bunting"
    assert page["sources"] and page["sources"][0]["licence"]["name"]
    assert page["schedule"] == "0 6 * * *" and page["timezone"] == "Europe/London"
    assert page["last_success"] is None and page["entry"]["installed"] is False
    # The example days are drawn by the readers' renderer from the fixture records.
    listing = json.loads(files_with()["listing.json"])
    assert [e["date"] for e in page["examples"]] == [e["date"] for e in listing["examples"]]
    for example in page["examples"]:
        day = example["day"]
        assert day["date"] == example["date"]
        assert day["sections"] and day["sections"][0]["plugin"] == "bank-holidays-h"
    icon = reader.get(f"{STORE}/plugins/bank-holidays-h/icon.png")
    assert icon.status_code == 200 and icon.headers["content-type"] == "image/png"
    assert icon.content == files_with()["listing/icon.png"]
    # A private plug-in never reaches the store; an unknown one is NOT-FOUND.
    assert_problem(reader.get(f"{STORE}/plugins/nothing-here"), 404, "NOT-FOUND")


def store_beside_a_plugin_without_listing(pub: Publisher) -> None:
    """One plug-in published without listing.json ("optional; required to list in the
    store") beside one with: it runs for whoever shows it, never shows in the store, and
    breaks the store for nobody."""
    rev = reviewer(pub.api, "rev@service.example")
    unlisted = files_with("bank-holidays-x")
    del unlisted["listing.json"], unlisted["listing/icon.png"]
    for files in (files_with("bank-holidays-l"), unlisted):
        done = publish(pub, approved(pub, rev, files))
        assert done.status_code == 200, done.text
    shown = pub.owner.get(listing_url(pub, "bank-holidays-x")).json()
    assert (shown["state"], shown["in_store"]) == ("listed", False)
    reader = pub.api.signed_in("reader@example.net")
    for kept_as in ("SQL NULL", "JSON null, as rows published before the fix keep it"):
        if kept_as != "SQL NULL":
            with pub.api.engine.begin() as conn:
                conn.execute(
                    text("UPDATE store_listings SET listing = 'null' WHERE plugin_id = :id"),
                    {"id": "bank-holidays-x"},
                )
        for query, expected in (
            ({}, ["bank-holidays-l"]),
            ({"q": "bank holidays"}, ["bank-holidays-l"]),
            ({"category": "holidays"}, ["bank-holidays-l"]),
            ({"q": "bank", "category": "other"}, []),
        ):
            found = reader.get(f"{STORE}/plugins", params=query)
            assert found.status_code == 200, (kept_as, query, found.text)
            assert [e["plugin_id"] for e in found.json()] == expected, (kept_as, query)
        assert reader.get(f"{STORE}/plugins/bank-holidays-l").status_code == 200
        assert_problem(reader.get(f"{STORE}/plugins/bank-holidays-x"), 404, "NOT-FOUND")
        assert_problem(reader.get(f"{STORE}/plugins/bank-holidays-x/icon.png"), 404, "NOT-FOUND")
        assert_problem(
            reader.post(f"{STORE}/plugins/bank-holidays-x/install"), 409, "STORE-NOT-LISTED"
        )
        for page in (
            "/store",
            "/store?q=bank",
            "/store?category=holidays",
            "/store/bank-holidays-l",
        ):
            drawn = reader.get(page)
            assert drawn.status_code == 200, (kept_as, page, drawn.text)
            assert "bank-holidays-l" in drawn.text and "bank-holidays-x" not in drawn.text, page
        assert reader.get("/store/bank-holidays-x").status_code == 404


def test_a_plugin_published_without_a_listing_never_shows_and_breaks_nothing(
    pub: Publisher,
) -> None:
    store_beside_a_plugin_without_listing(pub)


def test_a_plugin_published_without_a_listing_on_the_embedded_sqlite_default(
    sqlite_api: Api,  # noqa: F811
) -> None:
    owner, org = new_org(sqlite_api, "owner@bank.example", "Bank")
    pub = Publisher(sqlite_api, owner, org)
    may_submit(pub)
    store_beside_a_plugin_without_listing(pub)


def test_publishers_read_reports_on_their_plugins_never_who_sent_them(pub: Publisher) -> None:
    rev = reviewer(pub.api, "rev@service.example")
    assert publish(pub, approved(pub, rev, files_with())).status_code == 200
    reader = pub.api.signed_in("reader@example.net")
    filed = reader.post(
        f"{V1}/reader/plugins/{UK}/reports",
        json={"category": "wrong-data", "note": "Boxing Day is wrong", "day": "2022-12-26"},
    )
    assert filed.status_code == 201, filed.text
    found = pub.owner.get(f"{listing_url(pub)}/reports")
    assert found.status_code == 200, found.text
    [report] = found.json()
    assert report["note"] == "Boxing Day is wrong" and report["category"] == "wrong-data"
    assert "reader@example.net" not in found.text and "account" not in json.dumps(report)
    outsider, other = new_org(pub.api, "someone@else.example", "Else")
    assert_problem(
        outsider.get(f"{V1}/portal/organizations/{other}/plugins/{UK}/reports"), 404, "NOT-FOUND"
    )


def resubmitted(pub: Publisher, rev: httpx.Client) -> tuple[int, int]:
    """A first version sent back with changes requested, then fixed and uploaded again under
    the same number (the one sent back withdrawn first) and submitted: (sent back, again)."""
    files = files_with("bank-holidays-r")
    first = in_review(pub, files)
    sent_back = decide(
        rev,
        first,
        "request-changes",
        desk(rev, first)["reviewed"],
        reason="example day 2 is wrong",
        note="GOV.UK lists 27 December.\nCheck the substitute days.",
    )
    assert sent_back.status_code == 200, sent_back.text
    pub.api.clock.advance(timedelta(hours=2))
    assert pub.owner.post(f"{pub.uploads}/{first}/withdraw").status_code == 200
    files["fetch.mjs"] += b"// substitute days fixed\n"
    review = json.loads(files["review.json"])
    review["notes"] = "Substitute days checked against GOV.UK."
    files["review.json"] = json.dumps(review).encode()
    return first, in_review(pub, files)


def test_a_resubmission_shows_the_earlier_decisions_and_the_diff_against_the_one_sent_back(
    pub: Publisher,
) -> None:
    rev = reviewer(pub.api, "rev@service.example")
    first, again = resubmitted(pub, rev)
    shown = desk(rev, again)
    assert shown["decisions"] == []
    [earlier] = shown["earlier_decisions"]
    assert {k: earlier[k] for k in ("upload_id", "version", "decision", "reviewer", "reason")} == {
        "upload_id": first,
        "version": "1.0.0",
        "decision": "request-changes",
        "reviewer": "rev@service.example",
        "reason": "example day 2 is wrong",
    }
    assert earlier["note"] == "GOV.UK lists 27 December.\nCheck the substitute days."
    assert earlier["decided_at"]
    back = shown["sent_back"]
    assert (back["upload_id"], back["version"]) == (first, "1.0.0")
    assert back["decided_at"] == earlier["decided_at"]
    files = {f["path"]: f for f in back["files"]}
    assert files["fetch.mjs"]["change"] == "changed"
    assert files["fetch.mjs"]["diff"].startswith(f"--- sent-back-{first}/fetch.mjs")
    assert "+// substitute days fixed" in files["fetch.mjs"]["diff"]
    assert files["review.json"]["change"] == "changed"
    assert '+  "notes": "Substitute days checked against GOV.UK."' in files["review.json"]["diff"]
    assert files["plugin.json"]["change"] == "same" and files["listing/icon.png"]["binary"]
    # Sent back again, and uploaded as the next number without withdrawing: the desk shows
    # both decisions, and the diff against the newer upload sent back.
    again_back = decide(rev, again, "request-changes", shown["reviewed"], reason="one more")
    assert again_back.status_code == 200, again_back.text
    newer_files = files_with("bank-holidays-r", version="1.0.1")
    newer_files["fetch.mjs"] += b"// substitute days fixed\n// and once more\n"
    newer = in_review(pub, newer_files)
    shown = desk(rev, newer)
    assert [(d["upload_id"], d["reason"]) for d in shown["earlier_decisions"]] == [
        (first, "example day 2 is wrong"),
        (again, "one more"),
    ]
    assert shown["sent_back"]["upload_id"] == again
    diff = {f["path"]: f for f in shown["sent_back"]["files"]}["fetch.mjs"]["diff"]
    assert "+// and once more" in diff and "substitute days fixed" not in diff.replace(
        "// substitute days fixed\n", "", 1
    )
    # A first submission has neither.
    other = desk(rev, in_review(pub, files_with("bank-holidays-s")))
    assert other["earlier_decisions"] == [] and other["sent_back"] is None


def fixture_run(api: Api, plugin_id: str = UK) -> None:
    """The published version's run on the fixture's day, its batch the fixture's records."""
    records = [json.loads(line) for line in files_with()["fixtures/records.jsonl"].splitlines()]
    with api.engine.connect() as conn:
        status = plugin_status(conn, plugin_id)
    assert status.approved_version_id is not None and status.approved_digest is not None
    day = datetime(2022, 11, 4, 12, 0, tzinfo=UTC)
    write_run(
        api.engine,
        plugin_id=plugin_id,
        version_id=status.approved_version_id,
        digest=status.approved_digest,
        manifest=check_pack(zip_of(files_with(), top=UK)).manifest,
        run=RunFacts(today=day.date(), trigger=RunTrigger.SCHEDULE, started_at=day, now=day),
        batch=records,
    )


NORTHERN_IRELAND_RECORDS = 72
"""The example's stored records of the series the update below removes."""


def update_in_review(pub: Publisher, rev: httpx.Client) -> int:
    """Version 1.0.0 published and its fixture records stored; version 1.1.0, which removes
    the northern-ireland series, in review with the record diff of its run on the fixture's
    day: Boxing Day 2022 retitled, St Andrew's Day 2022 moved a day, the coronation holiday
    new, and New Year's Day 2023 left out of England and Wales's window (one miss). The diff
    is the real one (`record_diff` on the stored records) standing in for the sources check
    in the locked room, whose diff is tested in test_upload_checks.py."""
    assert publish(pub, approved(pub, rev, files_with())).status_code == 200
    fixture_run(pub.api)
    files = files_with(version="1.1.0", releaseNotes={"en": "Northern Ireland leaves."})
    manifest = json.loads(files["plugin.json"])
    manifest["series"] = [s for s in manifest["series"] if s["key"] != "northern-ireland"]
    files["plugin.json"] = json.dumps(manifest, indent=2).encode()
    review = json.loads(files["review.json"])
    review["examples"][3] = {
        "date": "2022-12-26",
        "series": "england-and-wales",
        "expect": {"state": "scheduled", "title": "Boxing Day"},
    }
    files["review.json"] = json.dumps(review).encode()
    batch = []
    for line in files["fixtures/records.jsonl"].splitlines():
        record = json.loads(line)
        if record["series"] == "northern-ireland":
            continue
        if record["series"] == "england-and-wales" and record["id"] == "new-years-day-2023":
            continue
        if record["series"] == "england-and-wales" and record["id"] == "boxing-day-2022":
            record["title"] = "Boxing Day (observed)"
        if record["series"] == "scotland" and record["id"] == "st-andrews-day-2022":
            record["date"] = "2022-12-01"
        batch.append(record)
    batch.append(
        {
            "kind": "event",
            "series": "england-and-wales",
            "id": "coronation-2023",
            "date": "2023-05-08",
            "state": "scheduled",
            "title": "Bank holiday for the coronation of King Charles III",
        }
    )
    files["fixtures/records.jsonl"] = "".join(json.dumps(r) + "\n" for r in batch).encode()
    upload_id = ready(pub, files)
    code = check_pack(zip_of(files, top=UK))
    with Session(pub.api.engine) as db:
        found = record_diff(db.connection(), code.manifest, batch, date(2022, 11, 4))
        assert found is not None
        db.execute(
            update(PortalUpload)
            .where(PortalUpload.id == upload_id)
            .values(record_diff=found.as_dict())
        )
        db.commit()
    done = pub.owner.post(f"{pub.uploads}/{upload_id}/submit")
    assert done.status_code == 200, done.text
    return upload_id


def contents_are_objects(diff: dict) -> None:
    for series in diff["series"].values():
        for kind in ("new", "revised", "moved", "missing"):
            for entry in series[f"{kind}_records"]:
                for key in ("content", "old", "new"):
                    if key in entry:
                        assert isinstance(entry[key], dict), (kind, entry)


def test_the_record_diff_and_review_information_are_structured_data(pub: Publisher) -> None:
    rev = reviewer(pub.api, "rev@service.example")
    upload_id = update_in_review(pub, rev)
    shown = desk(rev, upload_id)
    diff = shown["record_diff"]
    assert diff["today"] == "2022-11-04"
    assert diff["removed_series"] == [
        {"series": "northern-ireland", "records": NORTHERN_IRELAND_RECORDS}
    ]
    assert set(diff["series"]) == {"england-and-wales", "scotland"}
    england, scotland = diff["series"]["england-and-wales"], diff["series"]["scotland"]
    assert (england["new"], england["revised"], england["moved"], england["missing"]) == (
        1,
        1,
        0,
        1,
    )
    [revised] = england["revised_records"]
    assert revised == {
        "date": "2022-12-26",
        "key": "boxing-day-2022",
        "kind": "event",
        "old": {"state": "scheduled", "title": "Boxing Day", "value": None},
        "new": {"state": "scheduled", "title": "Boxing Day (observed)", "value": None},
    }
    [new] = england["new_records"]
    assert new["content"]["title"] == "Bank holiday for the coronation of King Charles III"
    [missing] = england["missing_records"]
    assert (missing["key"], missing["misses"], missing["content"]["state"]) == (
        "new-years-day-2023",
        1,
        "scheduled",
    )
    [moved] = scotland["moved_records"]
    assert (moved["date"], moved["to"], moved["content"]["title"]) == (
        "2022-11-30",
        "2022-12-01",
        "St Andrew’s Day",
    )
    contents_are_objects(diff)
    assert isinstance(shown["review"], dict) and shown["review"]["sources"][0]["basis"]
    # The portal shows the publisher the same diff.
    assert pub.owner.get(f"{pub.uploads}/{upload_id}").json()["record_diff"] == diff
    # A diff kept before contents were objects (as JSON text) is answered as objects too.
    legacy = json.loads(json.dumps(diff))
    del legacy["removed_series"]
    for series in legacy["series"].values():
        for kind in ("new", "revised", "moved", "missing"):
            for entry in series[f"{kind}_records"]:
                for key in ("content", "old", "new"):
                    if key in entry:
                        entry[key] = json.dumps(entry[key])
    with Session(pub.api.engine) as db:
        db.execute(
            update(PortalUpload).where(PortalUpload.id == upload_id).values(record_diff=legacy)
        )
        db.commit()
    again = desk(rev, upload_id)["record_diff"]
    contents_are_objects(again)
    assert again["series"] == diff["series"] and again["removed_series"] == []

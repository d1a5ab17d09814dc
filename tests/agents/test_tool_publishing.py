"""The real tool against the live service (uvicorn on loopback, real PostgreSQL): an agent logs
in (approved by an owner or admin through the API), uploads an example, follows its checks to
the end, sends review information with the attestations and submits; login run again waits for
the same code; denial, expiry and slow_down; a token refused after its approver's demotion and
after a new login on the machine; logout; the token files' modes; no redirect followed and the
token sent nowhere but the server given to login; exit codes and --json shapes.

The locked-room checks are stood in for by `room_checks_done` (their runs are tested in
tests/publishing/test_upload_checks.py); the server's clock follows real time (MovingClock) and
its polling interval is 1 second, so logins take seconds."""

from __future__ import annotations

import json
import re
import stat
from datetime import timedelta
from pathlib import Path

import httpx
from sqlalchemy import select
from sqlalchemy.orm import Session

from almanac.platform.agents.models import DeviceCode
from tests.agents.helpers import V1, approve, approve_as_reviewer, bearer, poll, start
from tests.agents.test_agent_api import Bank
from tests.agents.tool_runner import (
    UK,
    Recorder,
    Tool,
    finish,
    login,
    read_until_code,
    user_code,
)
from tests.publishing.test_review_and_store import decide, desk, reviewer
from tests.publishing.test_submission import may_submit
from tests.publishing.test_uploads import room_checks_done

PUBLISHING = ("logout", "upload", "status", "review", "submit", "publish", "unpublish", "relist")


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_an_agent_uploads_follows_the_checks_reviews_and_submits(
    tool: Tool, bank: Bank, folder: Path
) -> None:
    logged = login(tool, bank)
    assert logged.code == 0, logged.stderr
    assert f"organization {bank.org}" in logged.stdout and "publishing not allowed" in logged.stdout
    # The token and the server beside it, readable only by the user (XDG_CONFIG_HOME honoured).
    saved = tool.token_file()
    assert saved["server"] == bank.api.base_url and saved["token"].startswith("almagent_")
    assert (saved["organization_id"], saved["may_publish"]) == (bank.org, False)
    assert mode(tool.config) == 0o700
    assert mode(tool.config / "plugin-token.json") == 0o600
    assert not (tool.config / "plugin-login.json").exists()

    uploaded = tool.run("upload", cwd=folder)
    assert uploaded.code == 0, uploaded.stderr
    assert f"uploaded {UK} 1.0.0" in uploaded.stdout
    found = re.search(r"^upload (\d+): ", uploaded.stdout, re.MULTILINE)
    assert found, uploaded.stdout
    upload_id = int(found.group(1))
    assert mode(tool.config / "plugins" / f"{UK}.json") == 0o600
    assert mode(tool.config / "plugins") == 0o700
    shown = bank.pub.owner.get(f"{bank.portal}/uploads/{upload_id}").json()
    assert (shown["agent_name"], shown["uploaded_by"], shown["version"]) == (
        "Claude",
        bank.admin_email,
        "1.0.0",
    )

    # status --wait follows the checks (plain lines off a terminal) until they are final.
    following = tool.start("status", "--wait", cwd=folder)
    assert following.stdout is not None
    first = following.stdout.readline()
    assert f"upload {upload_id}: {UK} 1.0.0, checking" in first, first
    room_checks_done(bank.pub)
    done = finish(following)
    assert done.code == 0, done.stderr
    assert "checks passed" in done.stdout

    sent = tool.run("review", "--file", str(folder / "review.json"), "--attest", cwd=folder)
    assert sent.code == 0, sent.stderr
    made = bank.pub.owner.get(f"{bank.portal}/uploads/{upload_id}/attestations").json()
    assert len(made) == 5
    assert {(a["made_by"], a["agent_name"]) for a in made} == {(bank.admin_email, "Claude")}
    room_checks_done(bank.pub)

    refused = tool.run("submit", cwd=folder)
    assert refused.code == 1
    assert "SUBMIT-REFUSED" in refused.stderr and "AGREEMENT-NOT-ACCEPTED" in refused.stderr
    may_submit(bank.pub)
    submitted = tool.run("submit", str(upload_id), "--json")
    assert submitted.code == 0, submitted.stderr
    answer = submitted.json()
    assert answer["ok"] is True and answer["replaced"] is None
    assert (answer["upload"]["id"], answer["upload"]["state"]) == (upload_id, "in_review")

    retire = tool.run("retire", cwd=folder)
    assert retire.code == 1 and retire.stdout == ""
    assert "AGENT_FORBIDDEN" in retire.stderr
    assert f"{bank.api.base_url}/portal/{bank.org}/plugins/{UK}" in retire.stderr

    token = saved["token"]
    out = tool.run("logout", "--json")
    assert out.code == 0, out.stderr
    assert out.json() == {"ok": True, "server": bank.api.base_url, "revoked": True}
    assert not (tool.config / "plugin-token.json").exists()
    gone = bearer(bank.api, token).get(f"{bank.portal}/uploads")
    assert gone.status_code == 401
    assert tool.run("status", str(upload_id)).code == 1  # not logged in


def test_login_run_again_waits_for_the_same_code(tool: Tool, bank: Bank) -> None:
    first = tool.start("login", "--server", bank.api.base_url, "--name", "Claude")
    code = user_code(first)
    first.terminate()
    first.wait(10)
    pending = json.loads((tool.config / "plugin-login.json").read_text())
    assert pending["user_code"] == code and pending["server"] == bank.api.base_url
    assert mode(tool.config / "plugin-login.json") == 0o600
    again = tool.start("login", "--server", bank.api.base_url)
    same, said = read_until_code(again)
    assert same == code and "Still waiting for the same code" in said
    assert approve(bank.admin, code, bank.org).status_code == 200
    done = finish(again)
    assert done.code == 0, done.stderr
    assert not (tool.config / "plugin-login.json").exists()
    with Session(bank.api.engine) as db:
        assert len(db.scalars(select(DeviceCode)).all()) == 1


def test_denied_expired_and_slowed_down_logins(tool: Tool, bank: Bank) -> None:
    api = bank.api
    running = tool.start("login", "--server", api.base_url, "--json")
    code = user_code(running, stream="stderr")
    assert bank.admin.post(f"{V1}/portal/device/{code}/deny").status_code == 200
    denied = finish(running)
    assert denied.code == 1
    assert denied.json()["error"]["code"] == "access_denied"
    assert "denied" in denied.stderr
    assert not (tool.config / "plugin-login.json").exists()

    running = tool.start("login", "--server", api.base_url)
    user_code(running)
    api.clock.advance(timedelta(minutes=11))
    expired = finish(running)
    assert expired.code == 1 and "expired_token" in expired.stderr
    assert not (tool.config / "plugin-token.json").exists()

    # Someone else polling the same code makes the tool's next poll too soon: it is told
    # slow_down, waits the longer interval, and gets its token; ignoring it, it never would.
    running = tool.start("login", "--server", api.base_url)
    code = user_code(running)
    device_code = json.loads((tool.config / "plugin-login.json").read_text())["device_code"]
    client = api.client()
    poll(client, device_code)
    poll(client, device_code)
    this = DeviceCode.user_code == code.replace("-", "")
    with Session(api.engine) as db:
        interval = db.scalars(select(DeviceCode).where(this)).one().interval
    assert interval >= 6
    assert approve(bank.admin, code, bank.org).status_code == 200
    done = finish(running, timeout=90)
    assert done.code == 0, done.stderr
    with Session(api.engine) as db:
        row = db.scalars(select(DeviceCode).where(this)).one()
    assert row.state == "issued" and row.interval <= interval + 5


def test_login_past_the_limit_on_codes_says_how_long_to_wait(tool: Tool, bank: Bank) -> None:
    # Ten codes this hour from this machine's address, the tool's own (127.0.0.1).
    for _ in range(10):
        start(bank.api.client())
    refused = tool.run("login", "--server", bank.api.base_url, "--json")
    assert refused.code == 1, refused.stderr
    error = refused.json()["error"]
    assert error["status"] == 429 and error["code"] == "DEVICE-CODE-LIMITED"
    assert "almanac-plugin: DEVICE-CODE-LIMITED: login: too many login codes" in refused.stderr
    assert re.search(r"try again in (1 hour|\d+ minutes)$", error["message"]), error
    assert not (tool.config / "plugin-login.json").exists()


def test_a_new_login_on_the_machine_and_a_demoted_approver_end_the_token(
    tool: Tool, bank: Bank
) -> None:
    assert login(tool, bank).code == 0
    first = tool.token_file()["token"]
    assert login(tool, bank).code == 0
    second = tool.token_file()["token"]
    assert first != second
    assert bearer(bank.api, first).get(f"{bank.portal}/uploads").status_code == 401
    assert tool.run("status", "1").code == 1  # no such upload: refused, not a crash
    members = bank.pub.owner.get(f"{V1}/organizations/{bank.org}/members").json()
    admin_id = next(m["account_id"] for m in members if m["email"] == bank.admin_email)
    demoted = bank.pub.owner.patch(
        f"{V1}/organizations/{bank.org}/members/{admin_id}", json={"role": "member"}
    )
    assert demoted.status_code == 200
    refused = tool.run("status", "1", "--json")
    assert refused.code == 1
    error = refused.json()["error"]
    assert (error["kind"], error["code"]) == ("not-logged-in", "AUTH-REQUIRED")
    assert "no longer owner or admin" in error["message"]


def test_no_redirect_is_followed_and_the_token_goes_nowhere_else(
    tool: Tool, bank: Bank, folder: Path
) -> None:
    with Recorder().running() as elsewhere, Recorder(redirect_to=elsewhere.url).running() as hop:
        # The docs links may name another service: the token still goes only to login's.
        tool.env["ALMANAC_BASE_URL"] = elsewhere.url
        assert login(tool, bank).code == 0
        uploaded = tool.run("upload", str(folder), "--json")
        assert uploaded.code == 0, uploaded.stderr
        upload_id = str(uploaded.json()["upload"]["id"])
        room_checks_done(bank.pub)
        assert tool.run("status", str(folder)).code == 0
        assert elsewhere.seen == []
        # A server answering with a redirect: refused, the target never reached.
        redirected = tool.run("login", "--server", hop.url)
        assert redirected.code == 1 and "redirect" in redirected.stderr
        assert [s.path for s in hop.seen] == ["/api/v1/device/code"]
        saved = tool.token_file()
        saved["server"] = hop.url
        (tool.config / "plugin-token.json").write_text(json.dumps(saved))
        moved = tool.run("status", upload_id, "--json")
        assert moved.code == 1 and moved.json()["error"]["kind"] == "redirect"
        assert elsewhere.seen == []
        sent = {k.lower(): v for k, v in hop.seen[-1].headers.items()}
        assert sent["authorization"] == f"Bearer {saved['token']}"


def test_exit_codes_and_refusals_without_a_login(tool: Tool, bank: Bank, folder: Path) -> None:
    for command in PUBLISHING:
        args = (
            [command, "--file", str(folder / "review.json")] if command == "review" else [command]
        )
        if command in ("unpublish", "relist"):
            args.append(str(folder))
        out = tool.run(*args, "--json")
        assert out.code == 1, (command, out.stderr)
        assert out.json()["error"]["kind"] == "not-logged-in", command
        assert "not logged in" in out.stderr
        assert tool.run(command, "--frobnicate").code == 2, command
    assert tool.run("retire", UK).code == 1
    assert tool.run("review", str(folder)).code == 2  # --file is required
    assert tool.run("review", "--file", str(folder / "missing.json")).code == 2
    for refused in ("http://example.org", "ftp://127.0.0.1", "http://10.0.0.1:8000", "nonsense"):
        assert tool.run("login", "--server", refused).code == 2, refused
    # Unreachable: a closed loopback port.
    with Recorder().running() as closed:
        url = closed.url
    unreachable = tool.run("login", "--server", url, "--json")
    assert unreachable.code == 1 and unreachable.json()["error"]["kind"] == "unreachable"
    # A check that fails sends nothing.
    assert login(tool, bank).code == 0
    (folder / "fetch.mjs").write_text("process.exit(3);\n")
    failed = tool.run("upload", str(folder), "--json")
    assert failed.code == 1 and failed.json()["ok"] is False
    assert "nothing sent" in failed.stderr
    assert bank.pub.owner.get(f"{bank.portal}/uploads").json() == []


def test_json_answers_of_login_upload_status_and_review(
    tool: Tool, bank: Bank, folder: Path
) -> None:
    logged = login(tool, bank, json_out=True)
    assert logged.code == 0, logged.stderr
    got = logged.json()
    assert got == {
        "ok": True,
        "server": bank.api.base_url,
        "agent_id": got["agent_id"],
        "agent_name": "Claude",
        "organization_id": bank.org,
        "may_publish": False,
        "saved_at": got["saved_at"],
    }
    uploaded = tool.run("upload", str(folder), "--json")
    assert uploaded.code == 0, uploaded.stderr
    upload = uploaded.json()["upload"]
    assert set(uploaded.json()) == {"ok", "upload", "next"}
    assert uploaded.json()["next"].endswith(f"status {upload['id']} --wait")
    assert (upload["plugin_id"], upload["version"], upload["agent_name"]) == (UK, "1.0.0", "Claude")
    assert {"id", "digest", "state", "checks", "warnings", "checks_final"} <= set(upload)
    room_checks_done(bank.pub)
    status = tool.run("status", UK, "--json")
    assert status.code == 0 and status.json()["upload"]["checks_final"] is True
    review = tool.run("review", UK, "--file", str(folder / "review.json"), "--json")
    assert review.code == 0, review.stderr
    assert set(review.json()) == {"ok", "upload", "attestations", "next"}
    assert review.json()["attestations"] is None
    refused = tool.run("submit", str(upload["id"]), "--json")
    assert refused.code == 1
    error = refused.json()["error"]
    assert (error["kind"], error["status"], error["code"]) == ("refused", 409, "SUBMIT-REFUSED")
    assert {f["code"] for f in error["findings"]} >= {"SUBMIT-ATTESTATION-MISSING"}
    # check --against an uploaded version id: the same version with other code is refused
    # before anything is sent.
    (folder / "fetch.mjs").write_text((folder / "fetch.mjs").read_text() + "// changed\n")
    against = tool.run("check", str(folder), "--against", str(upload["id"]), "--json")
    assert against.code == 1
    assert "PLG-VERSION-REUSED" in {f["code"] for f in against.json()["findings"]}


def test_publishing_moves_by_an_agent_with_and_without_publishing(
    tool: Tool, bank: Bank, folder: Path
) -> None:
    """publish, unpublish, relist and the rollout's moves are refused to an agent approved
    without publishing."""
    assert login(tool, bank).code == 0
    for command in ("publish", "unpublish", "relist", "promote", "stop", "rollback"):
        target = ["1"] if command == "publish" else [UK, "--reason", "why"]
        if command in ("unpublish", "relist"):
            target = [UK]
        refused = tool.run(command, *target, "--json")
        assert refused.code == 1
        assert refused.json()["error"]["code"] == "AGENT_MAY_NOT_PUBLISH", command


def test_an_agent_allowed_to_publish_publishes_unpublishes_and_relists(
    tool: Tool, bank: Bank, folder: Path
) -> None:
    """The whole journey: an agent allowed to publish takes the example from upload to the
    store, a reviewer of the service approving it in between; retire stays a person's."""
    api = bank.api
    assert login(tool, bank, may_publish=True).code == 0
    uploaded = tool.run("upload", "--json", cwd=folder)
    assert uploaded.code == 0, uploaded.stderr
    upload = uploaded.json()["upload"]
    room_checks_done(bank.pub)
    reviewed = tool.run("review", "--file", str(folder / "review.json"), "--attest", cwd=folder)
    assert reviewed.code == 0, reviewed.stderr
    room_checks_done(bank.pub)
    may_submit(bank.pub)
    assert tool.run("submit", cwd=folder).code == 0
    approve_as_reviewer(api, upload["id"])
    published = tool.run("publish", "--json", cwd=folder)
    assert published.code == 0, published.stderr
    assert published.json()["upload"]["state"] == "published"
    for move, listed, changed in (
        ("unpublish", False, True),
        ("unpublish", False, False),
        ("relist", True, True),
        ("relist", True, False),
    ):
        moved = tool.run(move, "--json", cwd=folder)
        assert moved.code == 0, (move, moved.stderr)
        assert moved.json()["listing"]["listed"] is listed, move
        assert moved.json()["changed"] is changed, move
    # Repeated, a move says nothing changed ("Listing of a published plug-in").
    first = tool.run("unpublish", cwd=folder)
    assert first.stdout.startswith(f"unpublished {UK}: nobody new can install it"), first.stdout
    again = tool.run("unpublish", cwd=folder)
    assert again.stdout.startswith(f"{UK} was already unpublished: nothing changed"), again.stdout
    assert tool.run("relist", cwd=folder).stdout.startswith(f"listed {UK}: it is in the store")
    # An update's warning is printed once.
    manifest = json.loads((folder / "plugin.json").read_text())
    manifest["version"] = "1.1.0"
    manifest["sources"][0]["url"] = "https://data.gov.uk/bank-holidays.json"
    (folder / "plugin.json").write_text(json.dumps(manifest, indent=2) + "\n")
    update = tool.run("upload", cwd=folder)
    assert update.code == 0, update.stderr
    warned = [line for line in update.stdout.splitlines() if "warning PLG-UPDATE-" in line]
    assert warned == [
        "  warning PLG-UPDATE-SOURCE-HOST-ADDED (updates): sources[0].url: the update adds the "
        "source host data.gov.uk"
    ], update.stdout
    retire = tool.run("retire", "--json", cwd=folder)
    assert retire.code == 1 and retire.json()["error"]["code"] == "AGENT_FORBIDDEN"
    token = tool.token_file()["token"]
    refused = bearer(api, token).post(f"{bank.portal}/plugins/{UK}/retire", json={"confirm": UK})
    assert refused.status_code == 403 and refused.json()["code"] == "AGENT_FORBIDDEN"


def _through_review(tool: Tool, bank: Bank, folder: Path, rev: httpx.Client) -> dict:
    """The folder uploaded, checked, reviewed with the attestations, submitted and approved."""
    uploaded = tool.run("upload", "--json", cwd=folder)
    assert uploaded.code == 0, uploaded.stderr
    upload = uploaded.json()["upload"]
    room_checks_done(bank.pub)
    reviewed = tool.run("review", "--file", str(folder / "review.json"), "--attest", cwd=folder)
    assert reviewed.code == 0, reviewed.stderr
    room_checks_done(bank.pub)
    submitted = tool.run("submit", cwd=folder)
    assert submitted.code == 0, submitted.stderr
    done = decide(rev, upload["id"], "approve", desk(rev, upload["id"])["reviewed"])
    assert done.status_code == 200, done.text
    return dict(upload)


def _next_version(folder: Path, version: str) -> None:
    manifest = json.loads((folder / "plugin.json").read_text())
    manifest["version"] = version
    (folder / "plugin.json").write_text(json.dumps(manifest, indent=2) + "\n")
    review = json.loads((folder / "review.json").read_text())
    review["releaseNotes"] = {"en": f"Version {version}."}
    (folder / "review.json").write_text(json.dumps(review, indent=2) + "\n")


def test_an_agent_publishes_with_a_shadow_period_promotes_rolls_back_and_stops(
    tool: Tool, bank: Bank, folder: Path
) -> None:
    """publish --shadow, status's rollout, promote, rollback and stop, in text and --json; the
    shadow runs themselves are tested in tests/publishing/test_rollouts.py."""
    assert login(tool, bank, may_publish=True).code == 0
    may_submit(bank.pub)
    rev = reviewer(bank.api, "reviewer@service.example")
    _through_review(tool, bank, folder, rev)
    assert tool.run("publish", cwd=folder).code == 0
    _next_version(folder, "1.1.0")
    update = _through_review(tool, bank, folder, rev)
    assert tool.run("publish", "--shadow", "6", cwd=folder).code == 2
    shadowed = tool.run("publish", "--shadow", "2", "--json", cwd=folder)
    assert shadowed.code == 0, shadowed.stderr
    rollout = shadowed.json()["rollout"]
    assert (rollout["state"], rollout["runs_done"], rollout["shadow_runs"]) == ("shadowing", 0, 2)
    assert shadowed.json()["upload"]["state"] == "approved"
    status = tool.run("status", str(update["id"]), "--json")
    assert status.json()["rollout"]["id"] == rollout["id"], status.stdout
    text = tool.run("status", str(update["id"]))
    assert "rollout of 1.1.0 (from 1.0.0): shadowing, 0 of 2 shadow runs" in text.stdout
    assert tool.run("promote", UK).code == 2, "a move needs --reason"
    promoted = tool.run("promote", UK, "--reason", "checked by hand", "--json")
    assert promoted.code == 0, promoted.stderr
    assert promoted.json()["rollout"]["state"] == "promoted"
    back = tool.run("rollback", UK, "--reason", "readers complained")
    assert back.code == 0, back.stderr
    assert back.stdout.startswith(f"rolled back {UK}: rollout of 1.1.0 (from 1.0.0): rolled_back")
    again = tool.run("rollback", UK, "--reason", "twice", "--json")
    assert again.code == 1 and again.json()["error"]["code"] == "STATE-CONFLICT"
    _next_version(folder, "1.2.0")
    _through_review(tool, bank, folder, rev)
    assert tool.run("publish", "--shadow", "1", cwd=folder).code == 0
    stopped = tool.run("stop", UK, "--reason", "not now", "--json")
    assert stopped.code == 0, stopped.stderr
    assert stopped.json()["rollout"]["state"] == "stopped"
    assert stopped.json()["rollout"]["reason"] == "not now"

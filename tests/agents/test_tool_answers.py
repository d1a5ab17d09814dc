"""What the tool tells an agent, driven against the live service (uvicorn on loopback, real
PostgreSQL): `status` exits by the version's checks (0 passed, 1 failed, 3 still being made),
with the latest reviewer's decision, its reason and note, and the next step; refusals name the
tool's own commands (wait with `status --wait`, attest with `review --attest`); the approval
notice says an agent allowed to publish may publish too.

The locked-room checks are stood in for by `room_checks_done`, and checks past their deadline
fail by the sensor's own `expire_overdue`."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy.orm import Session

from almanac.platform import accounts
from almanac.platform.mail import MailMessage
from almanac.platform.publishing.uploads import check_queue as checks
from tests.agents.helpers import V1
from tests.agents.test_agent_api import Bank
from tests.agents.tool_runner import Run, Tool, login
from tests.api.conftest import Api
from tests.publishing.test_submission import may_submit
from tests.publishing.test_uploads import room_checks_done

CHECK_MINUTES = 16
"""Past every check's deadline (15 minutes after it was queued)."""


def uploaded(tool: Tool, folder: Path) -> int:
    done = tool.run("upload", "--json", cwd=folder)
    assert done.code == 0, done.stderr
    return int(done.json()["upload"]["id"])


def fail_overdue_checks(api: Api) -> list[MailMessage]:
    """The sensor's tick past the deadline: every check not final fails; the mail it makes."""
    with Session(api.engine) as db:
        mails = checks.expire_overdue(
            db, api.clock() + timedelta(minutes=CHECK_MINUTES), api.base_url
        )
        db.commit()
    return mails


def set_version(folder: Path, version: str) -> None:
    manifest = json.loads((folder / "plugin.json").read_text())
    manifest["version"] = version
    (folder / "plugin.json").write_text(json.dumps(manifest, indent=2) + "\n")


def reviewer(api: Api) -> httpx.Client:
    client = api.signed_in("reviewer@service.example")
    with Session(api.engine) as db:
        accounts.grant_staff_role(db, "reviewer@service.example", "reviewer", api.clock())
        db.commit()
    return client


def decide(desk: httpx.Client, upload_id: int, decision: str, reason: str, note: str = "") -> None:
    shown = desk.get(f"{V1}/review/uploads/{upload_id}").json()
    made = desk.post(
        f"{V1}/review/uploads/{upload_id}/decision",
        json={"decision": decision, "reason": reason, "note": note, "reviewed": shown["reviewed"]},
    )
    assert made.status_code == 200, made.text


def submitted(tool: Tool, bank: Bank, folder: Path) -> int:
    """An upload with its checks passed, review information and attestations, submitted."""
    upload_id = uploaded(tool, folder)
    room_checks_done(bank.pub)
    sent = tool.run("review", "--file", str(folder / "review.json"), "--attest", cwd=folder)
    assert sent.code == 0, sent.stderr
    room_checks_done(bank.pub)
    may_submit(bank.pub)
    done = tool.run("submit", cwd=folder)
    assert done.code == 0, done.stderr
    return upload_id


def status(tool: Tool, folder: Path, *args: str) -> tuple[Run, dict[str, Any]]:
    done = tool.run("status", *args, "--json", cwd=folder)
    return done, done.json()


def test_status_exits_by_the_checks_of_the_version(tool: Tool, bank: Bank, folder: Path) -> None:
    assert login(tool, bank).code == 0
    upload_id = uploaded(tool, folder)

    # Still being made: 3, at once (without --wait the tool asks once).
    checking, got = status(tool, folder)
    assert checking.code == 3, checking.stderr
    assert (got["ok"], got["checks"], got["decision"]) == (False, "checking", None)
    assert f"status {upload_id} --wait" in got["next"]

    # Final, one failed: 1 and ok false, with and without --wait, in text and JSON.
    assert fail_overdue_checks(bank.api)
    failed, got = status(tool, folder)
    assert failed.code == 1, failed.stderr
    assert (got["ok"], got["checks"], got["upload"]["checks_final"]) == (False, "failed", True)
    assert "fix what the failed checks name" in got["next"]
    text = tool.run("status", cwd=folder)
    assert text.code == 1
    assert "\nchecks failed\n" in text.stdout and "PLG-CHECK-DEADLINE" in text.stdout
    assert "exit 1" in text.stderr
    assert tool.run("status", "--wait", cwd=folder).code == 1

    # Every check passed: 0 and ok true.
    set_version(folder, "1.0.1")
    uploaded(tool, folder)
    room_checks_done(bank.pub)
    passed, got = status(tool, folder, "--wait")
    assert passed.code == 0, passed.stderr
    assert (got["ok"], got["checks"]) == (True, "passed")
    assert f"submit {got['upload']['id']}" in got["next"]


def test_status_tells_the_decision_its_reason_note_and_next(
    tool: Tool, bank: Bank, folder: Path
) -> None:
    api = bank.api
    assert login(tool, bank).code == 0
    upload_id = submitted(tool, bank, folder)
    desk = reviewer(api)
    reason = "an example day is missing Boxing Day"
    note = "Add 26 December 2025 to the examples.\nScotland's St Andrew's Day is fine."
    decide(desk, upload_id, "request-changes", reason, note)

    done, got = status(tool, folder)
    assert done.code == 0, done.stderr  # the checks passed: the decision is told beside them
    assert got["upload"]["state"] == "changes_requested"
    decision = got["decision"]
    assert (decision["decision"], decision["reason"], decision["note"]) == (
        "request-changes",
        reason,
        note,
    )
    assert decision == got["upload"]["decision"]
    assert f"review {upload_id} --file review.json" in got["next"] and "upload" in got["next"]
    # The portal's API gives it with the upload, the reviewer unnamed as in the mail.
    shown = bank.pub.owner.get(f"{bank.portal}/uploads/{upload_id}").json()["decision"]
    assert set(shown) == {"decision", "reason", "note", "decided_at"}
    text = tool.run("status", str(upload_id)).stdout
    assert re.search(r"^decision: changes requested on \d{4}-\d\d-\d\d \d\d:\d\d UTC$", text, re.M)
    assert f"\n  reason: {reason}\n  note:\n    Add 26 December 2025" in text
    assert "\nnext: make the changes the reviewer asks for" in text

    # Sent again and approved: the agent may not publish, so the next step names the page
    # where an owner or admin does, and the tool's publish for an agent allowed to.
    again = tool.run("review", "--file", str(folder / "review.json"), cwd=folder)
    assert again.code == 0, again.stderr
    room_checks_done(bank.pub)
    assert tool.run("submit", cwd=folder).code == 0
    assert status(tool, folder)[1]["next"].startswith("wait for a reviewer's decision")
    decide(desk, upload_id, "approve", "meets the rules")
    done, got = status(tool, folder)
    assert got["decision"]["decision"] == "approve" and got["decision"]["note"] == ""
    page = f"{api.base_url}/portal/{bank.org}/uploads/{upload_id}"
    assert page in got["next"] and f"publish {upload_id}" in got["next"]
    notices = bank.pub.owner.get(f"{bank.portal}/notices").json()
    approval = next(n for n in notices if n["kind"] == "review-approve")
    assert "or an agent allowed to publish does" in approval["body"]


def test_refusals_name_the_tools_commands(tool: Tool, bank: Bank, folder: Path) -> None:
    assert login(tool, bank).code == 0
    upload_id = uploaded(tool, folder)

    # Review information is refused while the checks are being made: wait for them.
    early = tool.run("review", "--file", str(folder / "review.json"), "--json", cwd=folder)
    assert early.code == 1
    error = early.json()["error"]
    assert error["code"] == "STATE-CONFLICT"
    assert f"status {upload_id} --wait, then run this review again" in error["next"]
    assert "\nnext: wait for the checks: " in early.stderr

    # Submitted without the attestations: the fix is the tool's review --attest.
    room_checks_done(bank.pub)
    assert tool.run("review", "--file", str(folder / "review.json"), cwd=folder).code == 0
    room_checks_done(bank.pub)
    refused = tool.run("submit", "--json", cwd=folder)
    assert refused.code == 1
    missing = [
        f for f in refused.json()["error"]["findings"] if f["code"] == "SUBMIT-ATTESTATION-MISSING"
    ]
    assert len(missing) == 5
    attest = f"review {upload_id} --file review.json --attest"
    assert all(attest in f["fix"] for f in missing)
    assert attest in refused.stderr and "POST ." not in refused.stderr

"""HTTP helpers of the agent tests: the device grant's two endpoints, an owner's approval, an
agent token obtained the way the tool obtains it, and a reviewer's approval of an upload."""

from __future__ import annotations

from datetime import timedelta

import httpx
from sqlalchemy.orm import Session

from almanac.platform import accounts
from tests.api.conftest import Api

V1 = "/api/v1"
CLIENT_ID = "almanac-plugin"
GRANT = "urn:ietf:params:oauth:grant-type:device_code"
MACHINE = "machine-0001"


def start(client: httpx.Client, name: str = "Claude", machine: str = MACHINE) -> dict:
    made = client.post(
        f"{V1}/device/code",
        data={"client_id": CLIENT_ID, "agent_name": name, "machine_id": machine},
    )
    assert made.status_code == 200, made.text
    return made.json()


def poll(client: httpx.Client, device_code: str) -> httpx.Response:
    return client.post(
        f"{V1}/device/token",
        data={"grant_type": GRANT, "device_code": device_code, "client_id": CLIENT_ID},
    )


def oauth_error(response: httpx.Response) -> str:
    """The RFC 6749 error of a 400 answer."""
    assert response.status_code == 400, response.text
    assert response.headers["content-type"].startswith("application/json")
    assert response.headers["cache-control"] == "no-store"
    body = response.json()
    assert body["error_description"], body
    return str(body["error"])


def approve(
    approver: httpx.Client, user_code: str, organization_id: int, *, may_publish: bool = False
) -> httpx.Response:
    return approver.post(
        f"{V1}/portal/device/{user_code}/approve",
        json={"organization_id": organization_id, "may_publish": may_publish},
    )


def agent_token(
    api: Api,
    approver: httpx.Client,
    organization_id: int,
    *,
    may_publish: bool = False,
    machine: str = MACHINE,
    name: str = "Claude",
) -> str:
    """A login approved by `approver` for the organization, polled as the tool polls."""
    client = api.client()
    started = start(client, name, machine)
    approved = approve(approver, started["user_code"], organization_id, may_publish=may_publish)
    assert approved.status_code == 200, approved.text
    api.clock.advance(timedelta(seconds=started["interval"]))
    issued = poll(client, started["device_code"])
    assert issued.status_code == 200, issued.text
    return str(issued.json()["access_token"])


def bearer(api: Api, token: str) -> httpx.Client:
    client = api.client()
    client.headers["authorization"] = f"Bearer {token}"
    return client


def approve_as_reviewer(api: Api, upload_id: int) -> None:
    """A staff reviewer approves the upload at the desk, sending back what the desk showed."""
    reviewer = api.signed_in("reviewer@service.example")
    with Session(api.engine) as db:
        accounts.grant_staff_role(db, "reviewer@service.example", "reviewer", api.clock())
        db.commit()
    desk = reviewer.get(f"{V1}/review/uploads/{upload_id}").json()
    decided = reviewer.post(
        f"{V1}/review/uploads/{upload_id}/decision",
        json={
            "decision": "approve",
            "reason": "meets the rules",
            "note": "",
            "reviewed": desk["reviewed"],
        },
    )
    assert decided.status_code == 200, decided.text

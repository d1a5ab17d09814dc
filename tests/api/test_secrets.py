"""Passwords and tokens never reach a log, and a response only where a token is created."""

from __future__ import annotations

import logging
import re

from tests.accounts.helpers import PASSWORD

CLIENT_LOGGERS = ("httpx", "httpcore")  # the test's own HTTP client, not the service


def test_no_password_or_token_in_logs_or_responses(api, caplog):
    caplog.set_level(logging.DEBUG)
    access = logging.getLogger("uvicorn.access")
    access.addHandler(caplog.handler)
    old_level = access.level
    access.setLevel(logging.INFO)
    try:
        client = api.client()
        responses = []
        responses.append(
            client.post(
                "/api/v1/auth/signup", json={"email": "ada@example.org", "password": PASSWORD}
            )
        )
        link = api.verification_link("ada@example.org")
        verification_token = link.rsplit("=", 1)[1]
        responses.append(client.get(link))
        responses.append(client.get(link))  # spent: refused, still no token in the answer
        responses.append(
            client.post(
                "/api/v1/auth/signin", json={"email": "ada@example.org", "password": PASSWORD}
            )
        )
        cookie = client.cookies["almanac_session"]
        responses.append(
            client.post(
                "/api/v1/auth/signin", json={"email": "ada@example.org", "password": PASSWORD + "x"}
            )
        )
        responses.append(
            client.post("/api/v1/auth/signup", json={"email": "bad", "password": PASSWORD})
        )
        responses.append(
            client.post("/api/v1/auth/signin", json={"email": 1, "password": PASSWORD})
        )
        responses.append(client.get("/api/v1/auth/me"))
        created = client.post("/api/v1/tokens", json={"name": "ci"})
        token = created.json()["token"]
        responses.append(client.get("/api/v1/tokens"))
        program = api.client()
        responses.append(
            program.get("/api/v1/auth/me", headers={"Authorization": f"Bearer {token}"})
        )
        client.delete(f"/api/v1/tokens/{created.json()['id']}")
        responses.append(
            program.get("/api/v1/auth/me", headers={"Authorization": f"Bearer {token}"})
        )
    finally:
        access.removeHandler(caplog.handler)
        access.setLevel(old_level)

    secrets = {
        "password": PASSWORD,
        "verification": verification_token,
        "cookie": cookie,
        "token": token,
    }
    service_logs = [r for r in caplog.records if not r.name.startswith(CLIENT_LOGGERS)]
    assert any(
        r.name == "uvicorn.access" and "/api/v1/auth/verify" in r.getMessage() for r in service_logs
    )
    assert any(r.name.startswith("almanac") for r in service_logs)
    for record in service_logs:
        text = record.getMessage() + (record.exc_text or "")
        for name, secret in secrets.items():
            assert secret not in text, f"{name} in log {record.name}: {text[:200]}"
    for response in responses:
        for name, secret in secrets.items():
            assert secret not in response.text, f"{name} in {response.request.url.path}"
        assert not re.search(r"\$argon2", response.text)
    assert created.json()["token"] == token  # shown once, at creation

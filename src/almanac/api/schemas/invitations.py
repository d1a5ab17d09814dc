"""The public invitation request (no credentials)."""

from __future__ import annotations

from pydantic import BaseModel, Field


class InvitationIn(BaseModel):
    email: str = Field(max_length=320)
    organization: str = Field(max_length=200)
    domain: str = Field(max_length=253)
    note: str = Field(max_length=2000)


class InvitationOut(BaseModel):
    status: str = "received"
    message: str = (
        "Thank you. If an invitation can be given for this domain, it will be sent by e-mail."
    )

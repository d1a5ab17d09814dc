"""The shapes of the webhook endpoints of the reader API (issue 38)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from almanac.api.schemas import INTEGER_ID_MAX
from almanac.platform.webhooks.deliveries import DeliveryView
from almanac.platform.webhooks.endpoints import (
    MAX_DESCRIPTION,
    MAX_PLUGINS,
    MAX_URL,
    EndpointView,
    EndpointWithSecret,
)


class EndpointIn(BaseModel):
    url: str = Field(max_length=MAX_URL, description="The https address that receives events.")
    plugins: list[str] = Field(min_length=1, max_length=MAX_PLUGINS)
    description: str = Field(default="", max_length=MAX_DESCRIPTION)
    organization: int | None = Field(
        default=None,
        ge=1,
        le=INTEGER_ID_MAX,
        description="An organization you own or administer: the endpoint is its, for its "
        "members' use, and receives the plug-ins the organization may see.",
    )


class EndpointOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    organization_id: int | None
    url: str
    description: str
    plugins: list[str]
    paused: bool
    disabled_at: datetime | None
    created_at: datetime
    previous_secret_until: datetime | None

    @classmethod
    def of(cls, view: EndpointView) -> EndpointOut:
        return cls.model_validate(view)


class EndpointSecretOut(BaseModel):
    """An endpoint with its signing secret, shown this once (at registration, at rotation)."""

    endpoint: EndpointOut
    secret: str

    @classmethod
    def of(cls, made: EndpointWithSecret) -> EndpointSecretOut:
        return cls(endpoint=EndpointOut.of(made.endpoint), secret=made.secret)


class AttemptOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    at: datetime
    status: int | None
    error: str | None


class DeliveryOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    message_id: str
    event_type: str
    plugin_id: str
    state: str
    attempts: list[AttemptOut]
    next_at: datetime | None
    created_at: datetime

    @classmethod
    def of(cls, view: DeliveryView) -> DeliveryOut:
        return cls.model_validate(view)

"""Alerts at the host (issue 20): the alerts sent and the operators' chosen recipients."""

from __future__ import annotations

from datetime import date, datetime

from pydantic import BaseModel, ConfigDict, Field

from almanac.platform.alerts.send import Recipients


class AlertOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    plugin_id: str | None = Field(description="None for the service's own alert (network)")
    cause: str = Field(
        description="failing, still-failing or held; network (no plug-in): upload checks could "
        "not run because the service could not reach the network"
    )
    day: date = Field(
        description="The UTC day it counts against: one a day per plug-in (or the service) and "
        "cause"
    )
    subject: str
    detail: str
    recipients: list[str]
    undelivered: list[str] = Field(description="Addresses the mail could not be handed to")
    sent_at: datetime


class AlertRecipientsIn(BaseModel):
    # The domain refuses a malformed address or a list over its limit with the field named;
    # this bound only keeps a malformed request from growing without end.
    recipients: list[str] | None = Field(
        max_length=1000,
        description="The addresses that receive the operators' alerts (an empty list: nobody); "
        "null: every operator again",
    )


class AlertRecipientsOut(BaseModel):
    chosen: bool = Field(description="False while no operator chose: every operator receives them")
    recipients: list[str]
    chosen_by: str | None
    chosen_at: datetime | None

    @classmethod
    def of(cls, found: Recipients) -> AlertRecipientsOut:
        return cls(
            chosen=found.chosen,
            recipients=found.addresses,
            chosen_by=found.chosen_by,
            chosen_at=found.chosen_at,
        )

"""The webhook tables as Core `Table`s (as `store/tables.py` does for the store)."""

from __future__ import annotations

from typing import cast

from sqlalchemy import Table

from almanac.platform.webhooks.models import (
    WebhookAttempt,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
    WebhookSubscription,
)

endpoints = cast(Table, WebhookEndpoint.__table__)
subscriptions = cast(Table, WebhookSubscription.__table__)
events = cast(Table, WebhookEvent.__table__)
deliveries = cast(Table, WebhookDelivery.__table__)
attempts = cast(Table, WebhookAttempt.__table__)

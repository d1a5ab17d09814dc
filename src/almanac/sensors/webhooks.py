"""Webhook deliveries in Dagster (issue 38): a sensor of their own sends what is due at each
tick, in the sensor daemon, never in the plug-ins' run pool, so no delivery waits for a run
and no run for a delivery. `deliver_due` is the tick's work, also called by tests and the
benchmark."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

import dagster as dg
from sqlalchemy import Engine
from sqlalchemy.orm import Session

from almanac.platform.clock import Clock
from almanac.platform.mail import Mailer, MailMessage, send_all
from almanac.platform.store.engine import reading, write_transaction
from almanac.platform.webhooks.deliveries import (
    Answer,
    Due,
    due_deliveries,
    may_receive,
    record_answer,
    skip,
)
from almanac.platform.webhooks.outbox import fan_out
from almanac.sensors.runs import evaluation_time

SENSOR = "almanac_webhook_deliveries"
TICK_SECONDS = 5
BATCH = 500
WORKERS = 16
TICK_BUDGET_SECONDS = 40.0
"""A tick stops taking batches after this long (Dagster ends a sensor tick at 60 seconds)."""


class Sender(Protocol):
    def send(self, due: Due, now: datetime) -> Answer: ...


@dataclass(frozen=True, slots=True)
class Delivered:
    """What a tick did: attempts made, of which answered 2xx, and deliveries not sent because
    the owner may no longer read the plug-in."""

    attempted: int = 0
    ok: int = 0
    skipped: int = 0


def _one(
    engine: Engine, sender: Sender, clock: Clock, base_url: str, due: Due
) -> tuple[bool | None, MailMessage | None]:
    with Session(reading(engine)) as db:
        allowed = may_receive(db, due)
    if not allowed:
        with write_transaction(engine) as conn:
            skip(conn, due, clock())
        return None, None
    answer = sender.send(due, clock())
    with write_transaction(engine) as conn:
        mail = record_answer(conn, due, answer, clock(), base_url)
    return answer.ok, mail


def deliver_due(
    engine: Engine,
    sender: Sender,
    mailer: Mailer,
    *,
    clock: Clock,
    base_url: str,
    workers: int = WORKERS,
    budget_seconds: float = TICK_BUDGET_SECONDS,
) -> Delivered:
    """Fan the outbox's new events out to the endpoints subscribed now, then send every
    delivery due, `workers` at a time, batch after batch until none is due or the budget is
    spent; each answer is kept in its own transaction (at-least-once: a crash between the
    send and the commit sends the message again, with the same id)."""
    started = time.monotonic()
    attempted = ok = skipped = 0
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="webhook") as pool:
        while time.monotonic() - started < budget_seconds:
            with write_transaction(engine) as conn:
                fanned = fan_out(conn, clock())
            with reading(engine).connect() as conn:
                batch = due_deliveries(conn, clock(), BATCH)
            if not batch:
                if fanned:
                    continue
                break
            results = list(pool.map(lambda due: _one(engine, sender, clock, base_url, due), batch))
            mail = [m for _, m in results if m is not None]
            send_all(mailer, mail, clock())
            attempted += sum(1 for sent, _ in results if sent is not None)
            ok += sum(1 for sent, _ in results if sent)
            skipped += sum(1 for sent, _ in results if sent is None)
    return Delivered(attempted, ok, skipped)


def webhook_sensor(
    engine: Engine,
    sender: Callable[[], Sender],
    mailer: Callable[[], Mailer],
    base_url: str,
    clock: Clock = evaluation_time,
) -> dg.SensorDefinition:
    """The sensor that sends the due webhook deliveries every few seconds."""

    @dg.sensor(
        name=SENSOR,
        minimum_interval_seconds=TICK_SECONDS,
        default_status=dg.DefaultSensorStatus.RUNNING,
        description="Sends the webhook deliveries that are due (signed by the Standard "
        "Webhooks specification, retried with back-off for 24 hours), outside the plug-ins' "
        "run pool.",
    )
    def _deliveries(context: dg.SensorEvaluationContext) -> dg.SkipReason:
        done = deliver_due(engine, sender(), mailer(), clock=clock, base_url=base_url)
        return dg.SkipReason(
            f"{done.attempted} webhook attempts, {done.ok} delivered, {done.skipped} not sent"
        )

    return _deliveries

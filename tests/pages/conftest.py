"""Page tests: the real app on the session's live uvicorn (tests/api/conftest.py) and the real
PostgreSQL, driven by Playwright through Debian's Chromium (`/usr/bin/chromium`; nothing is
downloaded). Screenshots go to tests/pages/artifacts/ (git-ignored), kept after the run."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright
from sqlalchemy import Engine

from almanac.api.deps import SESSION_COOKIE
from tests.accounts.conftest import (  # noqa: F401  (fixtures)
    migrated_postgres_url,
    passwords,
)
from tests.api.conftest import Api, live_api, live_server, pg_engine  # noqa: F401
from tests.audience.helpers import empty_audience_tables

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
DESK = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}


def chromium_binary() -> str:
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        pytest.fail("Chromium is not installed: scripts/test.sh installs it (Debian chromium)")
    return binary


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=chromium_binary(), args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def papi(live_server, pg_engine: Engine, passwords) -> Iterator[Api]:  # noqa: F811
    with live_api(live_server, pg_engine, passwords) as api:
        yield api
    empty_audience_tables(pg_engine)


class Browsing:
    """Browser contexts of one test, each a person (a session cookie) at one screen size."""

    def __init__(self, browser: Browser, api: Api) -> None:
        self.browser = browser
        self.api = api
        self.contexts: list[BrowserContext] = []

    def page(self, *, cookie: str | None = None, size: dict[str, int] = DESK) -> Page:
        context = self.browser.new_context(viewport=size, base_url=self.api.base_url)
        context.set_default_timeout(15_000)
        if cookie is not None:
            context.add_cookies(
                [{"name": SESSION_COOKIE, "value": cookie, "url": self.api.base_url}]
            )
        self.contexts.append(context)
        return context.new_page()

    def close(self) -> None:
        for context in self.contexts:
            context.close()


@pytest.fixture
def browsing(browser: Browser, papi: Api) -> Iterator[Browsing]:
    made = Browsing(browser, papi)
    yield made
    made.close()


def session_cookie(client) -> str:  # type: ignore[no-untyped-def]
    """The session cookie of a client made by `Api.signed_in`."""
    return client.cookies[SESSION_COOKIE]

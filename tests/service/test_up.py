"""`almanac up` for real. The service runs in a network namespace of its own (see
`namespace.py`), so the example plug-ins it approves and runs reach nothing outside the
machine: on its embedded default, and on it and on a fresh PostgreSQL database where a plug-in
registered and approved over HTTP becomes an asset in the running webserver, runs, is
backfilled from the webserver and has its records read back. The three starts go two at a time
(`namespace.Ahead`): each mostly waits on the service it started."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from tests.service.namespace import (
    Ahead,
    NamespaceRun,
    Planned,
    fresh_database_through_a_relay,
)
from tests.service.up import EXAMPLES, REPO

HERE = Path(__file__).resolve().parent


def _on_postgresql(server_url: str) -> Planned:
    def planned(stack: ExitStack) -> NamespaceRun:
        url = stack.enter_context(fresh_database_through_a_relay(server_url, "almanac_up"))
        return NamespaceRun(HERE / "inside_up_runs.py", {"UP_DATABASE_URL": url}, timeout=900)

    return planned


@pytest.fixture(scope="module")
def ahead(request: pytest.FixtureRequest, postgres_server_url: str) -> Iterator[Ahead]:
    planned: dict[str, Planned] = {
        "test_almanac_up_on_its_embedded_default": lambda _: NamespaceRun(
            HERE / "inside_up_embedded.py", {}, timeout=900
        ),
        "test_almanac_up_on_a_fresh_postgresql_database": _on_postgresql(postgres_server_url),
        "test_almanac_up_on_its_embedded_default_runs_and_shows_a_plugin_approved_later": (
            lambda _: NamespaceRun(HERE / "inside_up_runs.py", {}, timeout=900)
        ),
    }
    with Ahead.of_module(request, planned) as started:
        yield started


def _passed(ahead: Ahead, test: str) -> None:
    done = ahead.result(test)
    assert done.returncode == 0, done.stdout[-20000:] + done.stderr[-5000:]


def test_almanac_up_on_its_embedded_default(ahead: Ahead) -> None:
    _passed(ahead, "test_almanac_up_on_its_embedded_default")


def test_almanac_up_on_a_fresh_postgresql_database(ahead: Ahead) -> None:
    _passed(ahead, "test_almanac_up_on_a_fresh_postgresql_database")


def test_almanac_up_on_its_embedded_default_runs_and_shows_a_plugin_approved_later(
    ahead: Ahead,
) -> None:
    _passed(ahead, "test_almanac_up_on_its_embedded_default_runs_and_shows_a_plugin_approved_later")


def test_a_second_start_approves_nothing_and_a_changed_example_stays_pending(
    tmp_path: Path,
) -> None:
    import shutil

    from almanac.platform.store.engine import make_engine
    from almanac.platform.store.plugins import plugin_status
    from almanac.service import prepare
    from almanac.settings import load_settings

    examples = tmp_path / "examples"
    shutil.copytree(REPO / "examples", examples)
    settings = load_settings({"ALMANAC_HOME": str(tmp_path / "home")})
    registered, approved = prepare(settings, examples=examples)
    assert registered == EXAMPLES
    assert [plugin_id for plugin_id, _ in approved] == EXAMPLES

    changed = EXAMPLES[0]
    manifest_path = examples / changed / "plugin.json"
    manifest = json.loads(manifest_path.read_text())
    major, minor, patch = manifest["version"].split(".")
    manifest["version"] = f"{major}.{minor}.{int(patch) + 1}"
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n")
    registered, approved = prepare(settings, examples=examples)
    assert registered == EXAMPLES and approved == []
    engine = make_engine(settings.database_url)
    try:
        with engine.connect() as conn:
            states = {p: plugin_status(conn, p).state for p in EXAMPLES}
    finally:
        engine.dispose()
    assert states[changed] == "pending"
    assert {p: s for p, s in states.items() if p != changed} == dict.fromkeys(
        EXAMPLES[1:], "approved"
    )

"""A run keeps the locked room's layers that were active (issue 4: "The run record gets the Node
version and which layers were active"), whether it succeeded or failed."""

from __future__ import annotations

from dataclasses import replace

from almanac.platform.store.reading import last_runs
from almanac.platform.store.write import record_failed_run, write_run

from .conftest import Plug, value

LAYERS = {"bubblewrap": True, "seccomp": True, "cgroup_memory": False}


def test_a_run_keeps_its_node_version_and_layers(plug: Plug) -> None:
    facts = replace(plug.facts(), node_version="v24.19.0", layers=LAYERS)
    write_run(
        plug.engine,
        plugin_id=plug.id,
        version_id=plug.version_id,
        digest=plug.digest,
        manifest=plug.manifest,  # type: ignore[arg-type]
        run=facts,
        batch=[value("2026-11-01", 1.5)],
    )
    record_failed_run(
        plug.engine,
        plugin_id=plug.id,
        version_id=plug.version_id,
        digest=plug.digest,
        run=replace(facts, layers={**LAYERS, "seccomp": False}),
        reason="the fetcher exited with code 2",
    )
    with plug.engine.connect() as conn:
        failed, succeeded = last_runs(conn, plug.id)
    assert succeeded.outcome == "success" and succeeded.node_version == "v24.19.0"
    assert succeeded.layers == LAYERS
    assert failed.outcome == "failure" and failed.layers["seccomp"] is False


def test_a_run_without_the_room_keeps_no_layers(plug: Plug) -> None:
    plug.fail("could not download rates: 404")
    with plug.engine.connect() as conn:
        (run,) = last_runs(conn, plug.id)
    assert run.layers is None

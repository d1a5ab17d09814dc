"""The OpenAPI document the live app serves: every schema has a name of its own (FastAPI falls
back to module-qualified names, `almanac__api__...__PluginOut`, when two models share one), and
each area's routes carry that area's tag."""

from __future__ import annotations

from tests.api.conftest import Api


def test_schema_names_are_unique_and_plain(api: Api) -> None:
    document = api.client().get("/api/v1/openapi.json").json()
    names = list(document["components"]["schemas"])
    assert names, "the document names its schemas"
    assert [n for n in names if "__" in n] == []
    assert {"HostPluginOut", "ReaderPluginOut"} <= set(names)


def test_each_area_is_one_tag(api: Api) -> None:
    document = api.client().get("/api/v1/openapi.json").json()
    tags_of: dict[str, set[str]] = {}
    for path, operations in document["paths"].items():
        area = path.removeprefix("/api/v1/").split("/", 1)[0]
        for operation in operations.values():
            tags_of.setdefault(area, set()).update(operation.get("tags", []))
    assert tags_of["host"] == {"host"}
    assert tags_of["reader"] == {"reader"}

"""Routes and pages import schemas, never another route module (issue 32, item 3): each domain
view is mapped to its API model once, beside the schema (`UploadOut.of`, `FindingOut.all_of`,
`HostPluginOut.read`), so no route borrows a mapper, a dependency or a helper from another."""

from __future__ import annotations

import ast
from pathlib import Path

import almanac

API = Path(almanac.__file__).resolve().parent / "api"


def _imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    return names


def test_no_route_or_page_module_imports_a_route_module() -> None:
    modules = sorted([*(API / "routes").glob("*.py"), *(API / "pages").glob("*.py")])
    assert len(modules) > 20
    borrowed = [
        f"{path.relative_to(API.parent)} imports {name}"
        for path in modules
        for name in sorted(_imported(path))
        if name.startswith("almanac.api.routes.") and name != "almanac.api.routes.__init__"
    ]
    assert borrowed == []


def test_every_route_module_holds_a_route() -> None:
    """A module of `api/routes` that holds no route (once `host_pages.py`, nine mappers) is
    mappers that belong beside their schemas."""
    routeless = [
        path.name
        for path in sorted((API / "routes").glob("*.py"))
        if path.name != "__init__.py" and "@router." not in path.read_text()
    ]
    assert routeless == []

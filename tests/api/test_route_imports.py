"""Routes and pages import schemas, never another route module (issue 32, item 3): each domain
view is mapped to its API model once, beside the schema (`UploadOut.of`, `FindingOut.all_of`,
`HostPluginOut.read`, or `model_validate` where the model reads the view field for field), so no
route borrows a mapper, a dependency or a helper from another, and no route or page builds an
answer field by field."""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path
from types import ModuleType

from pydantic import BaseModel

import almanac
import almanac.api.schemas

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


def _route_and_page_modules() -> list[Path]:
    return sorted([*(API / "routes").glob("*.py"), *(API / "pages").glob("*.py")])


def test_no_route_or_page_module_imports_a_route_module() -> None:
    modules = _route_and_page_modules()
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


def _answer_models() -> set[type[BaseModel]]:
    """Every model of `api/schemas` but the request bodies (`...In`, which pages build from
    their forms): the answers, and the parts of answers."""
    found: set[type[BaseModel]] = set()
    for info in pkgutil.iter_modules(almanac.api.schemas.__path__):
        module = importlib.import_module(f"almanac.api.schemas.{info.name}")
        found.update(
            value
            for value in vars(module).values()
            if isinstance(value, type)
            and issubclass(value, BaseModel)
            and value.__module__ == module.__name__
            and not value.__name__.endswith("In")
        )
    return found


def _target(node: ast.expr, names: dict[str, object]) -> object:
    """What a called name (`UploadOut`, `portal.UploadOut`) is bound to in the module."""
    if isinstance(node, ast.Name):
        return names.get(node.id)
    if isinstance(node, ast.Attribute):
        owner = _target(node.value, names)
        return getattr(owner, node.attr, None) if isinstance(owner, ModuleType | type) else None
    return None


def _is_answer(target: object, answers: set[type[BaseModel]]) -> bool:
    return isinstance(target, type) and target in answers


def _builds_field_by_field(
    call: ast.Call, names: dict[str, object], answers: set[type[BaseModel]]
) -> bool:
    """`Out(a=..., b=...)`, `Out(**fields)`, `Out.model_construct(...)` or
    `Out.model_validate({...})`: an answer assembled where it is sent. `Out.of(view)`,
    `Out.read(...)` and `Out.model_validate(view)` map in the schema; `Out()` holds nothing
    of a view."""
    if _is_answer(_target(call.func, names), answers):
        return bool(call.args or call.keywords)
    if not isinstance(call.func, ast.Attribute):
        return False
    if not _is_answer(_target(call.func.value, names), answers):
        return False
    if call.func.attr == "model_construct":
        return True
    return call.func.attr == "model_validate" and any(
        isinstance(a, ast.Dict | ast.DictComp) for a in call.args
    )


def test_no_route_or_page_builds_an_answer_field_by_field() -> None:
    """Each answer model is filled from its view in one place, its schema module (issue 32,
    item 3): a route or page, handler or helper, that calls an answer model's constructor with
    fields maps a view a second time, where adding a field to the view would be missed."""
    answers = _answer_models()
    assert len(answers) > 60
    built = []
    for path in _route_and_page_modules():
        name = f"almanac.api.{path.parent.name}" + (
            "" if path.stem == "__init__" else f".{path.stem}"
        )
        names = vars(importlib.import_module(name))
        built += [
            f"{path.relative_to(API.parent)}:{node.lineno} {ast.unparse(node.func)}(...)"
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.Call) and _builds_field_by_field(node, names, answers)
        ]
    assert built == []

"""The problem catalog ("Errors" section) and the Problem every static and room check reports.

`problems.json` beside this module is the one canonical catalog; the tool embeds a copy and a
test fails when the two differ. Codes are never renamed or reused; a retired code stays.
`problem_pages.json` holds what each code's docs page explains beyond the entry (the rule, why
it exists, an example that fails and one that passes): the server's pages need it, the tool
links to them, so the tool's embedded catalog stays small.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Literal

Severity = Literal["error", "warning"]


@dataclass(frozen=True, slots=True)
class CatalogEntry:
    code: str
    severity: Severity
    area: str
    title: str
    fix: str
    retired: bool = False


def _load_catalog() -> dict[str, CatalogEntry]:
    text = resources.files(__package__).joinpath("problems.json").read_text(encoding="utf-8")
    return {row["code"]: CatalogEntry(**row) for row in json.loads(text)["problems"]}


CATALOG: dict[str, CatalogEntry] = _load_catalog()


@dataclass(frozen=True, slots=True)
class Example:
    """A piece of a plug-in, output or request: `where` it is (a file, a request), and its text."""

    where: str
    text: str


@dataclass(frozen=True, slots=True)
class ProblemPage:
    """A code's docs page beyond its entry: the rule, why it exists, and an example that breaks
    it and one that keeps it (for a warning: one warned, one not)."""

    rule: str
    why: str
    failing: Example
    passing: Example


def _load_pages() -> dict[str, ProblemPage]:
    text = resources.files(__package__).joinpath("problem_pages.json").read_text(encoding="utf-8")
    return {
        code: ProblemPage(
            rule=page["rule"],
            why=page["why"],
            failing=Example(**page["failing"]),
            passing=Example(**page["passing"]),
        )
        for code, page in json.loads(text)["problems"].items()
    }


PAGES: dict[str, ProblemPage] = _load_pages()


def docs_link(code: str, base_url: str = "") -> str:
    """The catalog page of a code: `{base_url}/docs/problems/<CODE>` (DECISIONS section 3)."""
    return f"{base_url.rstrip('/')}/docs/problems/{code}"


@dataclass(frozen=True, slots=True)
class Problem:
    """One finding: a catalog code, a message naming the field or line, and where it is.

    `path` is the JSON path of the field (`sources[0].url`) or a file path; `line` is the
    1-based line of a record batch or file.
    """

    code: str
    message: str
    path: str | None = None
    line: int | None = None
    severity: Severity = field(default="error")

    def __post_init__(self) -> None:
        entry = CATALOG.get(self.code)
        if entry is None:
            raise KeyError(f"problem code {self.code} is not in the catalog")
        if self.severity != entry.severity:
            object.__setattr__(self, "severity", entry.severity)

    @property
    def fix(self) -> str:
        return CATALOG[self.code].fix

    @property
    def title(self) -> str:
        return CATALOG[self.code].title

    def to_dict(self, base_url: str = "") -> dict[str, object]:
        """The finding as the tool's `check --json` and the API print it."""
        out: dict[str, object] = {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "fix": self.fix,
            "docs": docs_link(self.code, base_url),
        }
        if self.path is not None:
            out["path"] = self.path
        if self.line is not None:
            out["line"] = self.line
        return out

    def to_stored(self) -> dict[str, Any]:
        """The finding as a check's row keeps it: code and message, path and line when set.
        The severity, title and fix are left out: the catalog gives them again on reading."""
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.path is not None:
            out["path"] = self.path
        if self.line is not None:
            out["line"] = self.line
        return out

    @classmethod
    def from_stored(cls, stored: Mapping[str, Any]) -> Problem:
        """A finding kept by `to_stored` (or printed in that shape by the tool), a Problem
        again."""
        return cls(
            str(stored["code"]),
            str(stored["message"]),
            path=stored.get("path"),
            line=stored.get("line"),
        )

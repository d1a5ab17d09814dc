"""The problem catalog ("Errors" section) and the Problem every check reports.

`problems.json` beside this module is the one canonical catalog; the tool embeds a copy and a
test fails when the two differ. Codes are never renamed or reused; a retired code stays.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources
from typing import Literal

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

"""The problem catalog and the code agree both ways ("Errors": every problem has a catalog code).

(a) Every code the Python code can raise (a `PLG-...` or `AGENT_...` string literal anywhere in
    src/almanac, docstrings aside) is in the catalog.
(b) Every catalog code is raised on real input by some test: a conformance case under
    tests/conformance/ expects it (the pytest and node runners assert those expectations against
    the real implementations), or it is listed in ASSERTED_ELSEWHERE with the test file that
    asserts it. The codes not raised yet are listed in NOT_BUILT_YET, which may only shrink: a
    listed code that gains a case fails this test until it is taken off the list.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from typing import Any

from almanac.platform.contract.problems import CATALOG
from tests.conftest import CONFORMANCE, REPO

CODE_IN_TEXT = re.compile(
    r"\bPLG-[A-Z0-9]+(?:-[A-Z0-9]+)*(?![A-Za-z0-9*-])|\bAGENT_[A-Z]+(?:_[A-Z]+)*"
)

# Codes with no conformance case yet. Only remove entries from this list.
NOT_BUILT_YET: frozenset[str] = frozenset(
    {
        # folder and run checks only the Node tool makes (check, preview, pack)
        "PLG-IMPORT-OUTSIDE", "PLG-IMPORT-PACKAGE", "PLG-FIXTURE-MISMATCH",
        "PLG-RUN-FAILED", "PLG-RUN-KILLED", "PLG-RUN-NETWORK", "PLG-RUN-EXPECTED-FAILURE",
        "PLG-RUN-READ-OUTSIDE", "PLG-RUN-NOT-DETERMINISTIC", "PLG-README-TEMPLATE",
        # upload
        "PLG-ID-RETIRED", "PLG-STORE-AUDIENCE", "PLG-LICENCE-TERMS-MISSING",
        "PLG-QUOTA-UPLOADS",
        # portal
        "PLG-RETIRE-CONFIRM", "AGENT_MAY_NOT_PUBLISH", "AGENT_FORBIDDEN",
        # HTTP API refusals with no test asserting them yet
        "REQUEST-MALFORMED", "EMAIL-UNVERIFIED", "METHOD-NOT-ALLOWED", "RATE-LIMITED",
        "INTERNAL-ERROR",
    }
)  # fmt: skip

# Codes no conformance case can carry (the HTTP API's own refusals), with the test file that
# asserts each on real requests. The file must name the code.
ASSERTED_ELSEWHERE: dict[str, str] = {
    "REQUEST-INVALID": "tests/api/test_auth.py",
    "AUTH-REQUIRED": "tests/api/test_auth.py",
    "AUTH-FAILED": "tests/api/test_auth.py",
    "ACCOUNT-EXISTS": "tests/api/test_auth.py",
    "VERIFICATION-INVALID": "tests/api/test_auth.py",
    "MEMBER-EXISTS": "tests/accounts/test_organizations.py",
    "LAST-OWNER": "tests/accounts/test_organizations.py",
    "PLG-ZIP-TOO-LARGE": "tests/api/test_host.py",
    "PLG-ZIP-NOT-ZIP": "tests/api/test_host.py",
    "PLG-ZIP-PREPENDED": "tests/api/test_host.py",
    "PLG-ZIP-MULTI-DISK": "tests/api/test_host.py",
    "PLG-ZIP-ZIP64": "tests/api/test_host.py",
    "PLG-ZIP-ENCRYPTED": "tests/api/test_host.py",
    "PLG-ZIP-METHOD": "tests/api/test_host.py",
    "PLG-ZIP-TOO-MANY-ENTRIES": "tests/api/test_host.py",
    "PLG-ZIP-UNCOMPRESSED-TOO-LARGE": "tests/api/test_host.py",
    "PLG-ZIP-DAMAGED": "tests/api/test_host.py",
    "PLG-ZIP-FOLDER": "tests/api/test_host.py",
    "PLG-ZIP-PATH": "tests/api/test_host.py",
    "PLG-ZIP-LINK": "tests/api/test_host.py",
    "PLG-ZIP-TOO-DEEP": "tests/api/test_host.py",
    "PLG-ZIP-CASE": "tests/api/test_host.py",
    "PLG-ZIP-PACK-JSON": "tests/api/test_host.py",
    "PLG-FETCH-MISSING": "tests/api/test_host.py",
    "PLG-FIXTURE-SOURCE-MISSING": "tests/api/test_host.py",
    "PLG-FIXTURE-RECORDS-MISSING": "tests/api/test_host.py",
    "PLG-ID-TAKEN": "tests/api/test_host.py",
    "PLG-LOCAL-NOT-APPROVED": "tests/api/test_host.py",
    "PLG-PURGE-CONFIRM": "tests/api/test_host.py",
    "DIGEST-CHANGED": "tests/api/test_host.py",
    "STATE-CONFLICT": "tests/api/test_host.py",
    "NOTHING-HELD": "tests/api/test_host.py",
    "PURGE-NOT-OFFERED": "tests/api/test_host.py",
    "TAKEDOWN-DIGEST": "tests/api/test_host.py",
    "FORBIDDEN": "tests/api/test_host.py",
    "NOT-FOUND": "tests/api/test_host.py",
    "REQUEST-TOO-LARGE": "tests/api/test_host.py",
    "READER-TOO-MANY-DAYS": "tests/api/test_reader.py",
    "READER-LIST-TOO-LONG": "tests/api/test_reader.py",
    "AUDIENCE-NOT-PRIVATE": "tests/api/test_reader.py",
    "AUDIENCE-ORGANIZATION-NOT-LISTED": "tests/api/test_reader.py",
}


def _docstring_nodes(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def raised_codes() -> dict[str, list[str]]:
    """Code -> the source files whose string literals (docstrings aside) name it."""
    codes: dict[str, list[str]] = {}
    for path in sorted((REPO / "src" / "almanac").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        docstrings = _docstring_nodes(tree)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in docstrings
            ):
                for code in CODE_IN_TEXT.findall(node.value):
                    codes.setdefault(code, []).append(str(path.relative_to(REPO)))
    return codes


def _codes_in(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "code" and isinstance(value, str):
                yield value
            else:
                yield from _codes_in(value)
    elif isinstance(node, list):
        for value in node:
            yield from _codes_in(value)


def conformance_codes() -> dict[str, list[str]]:
    """Code -> the conformance cases (any folder) whose expectations name it."""
    codes: dict[str, list[str]] = {}
    for path in sorted(CONFORMANCE.rglob("*.json")):
        case = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(case, dict) and "expect" in case:
            for code in _codes_in(case["expect"]):
                codes.setdefault(code, []).append(str(path.relative_to(CONFORMANCE)))
    return codes


def test_the_scan_finds_codes() -> None:
    found = raised_codes()
    # Guards against a scan that silently finds nothing.
    assert "PLG-MANIFEST-SOURCE-URL" in found
    assert "PLG-RECORD-REPEATED" in found
    assert len(conformance_codes()) >= 25


def test_every_code_the_code_raises_is_in_the_catalog() -> None:
    unknown = {code: files for code, files in raised_codes().items() if code not in CATALOG}
    assert not unknown, f"codes raised but missing from problems.json: {unknown}"


def test_every_catalog_code_is_raised_by_a_test() -> None:
    covered = set(conformance_codes()) | set(ASSERTED_ELSEWHERE)
    missing = sorted(
        code
        for code, entry in CATALOG.items()
        if not entry.retired and code not in covered and code not in NOT_BUILT_YET
    )
    assert not missing, f"catalog codes no test raises (add a conformance case): {missing}"


def test_not_built_yet_only_shrinks() -> None:
    assert set(CATALOG) >= NOT_BUILT_YET, NOT_BUILT_YET - set(CATALOG)
    now_covered = sorted(NOT_BUILT_YET & (set(conformance_codes()) | set(ASSERTED_ELSEWHERE)))
    assert not now_covered, (
        f"these codes have cases now; take them off NOT_BUILT_YET: {now_covered}"
    )


def test_asserted_elsewhere_names_the_code() -> None:
    for code, test_file in ASSERTED_ELSEWHERE.items():
        assert code in CATALOG, code
        text = (REPO / test_file).read_text(encoding="utf-8")
        assert f'"{code}"' in text, f"{test_file} does not assert {code}"


def test_conformance_expectations_use_catalog_codes() -> None:
    unknown = {c: f for c, f in conformance_codes().items() if c not in CATALOG}
    assert not unknown, f"conformance cases expect codes the catalog lacks: {unknown}"

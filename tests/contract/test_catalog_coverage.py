"""The problem catalog and the code agree both ways ("Errors": every problem has a catalog code).

(a) Every code the Python code can raise is in the catalog. The scan of src/almanac (docstrings
    aside) takes, from the syntax tree: every string literal that is a code as a whole
    (CODE_SHAPE: upper-case words joined by `-`, each word starting with a letter, so "UTF-8" or
    "SHA-256" are not codes); every string literal in a place only a code goes (the code
    argument of Problem, ProblemError, problem_response; `code=`; an assignment to or comparison
    with a name `code` or `*_CODE`), whatever its shape ("FORBIDDEN"); and `PLG-...`/`AGENT_...`
    named inside any text.
(b) Every catalog code is raised on real input by some test: a conformance case under
    tests/conformance/ expects it (the pytest and node runners assert those expectations against
    the real implementations), or it is listed in ASSERTED_ELSEWHERE with the pytest file that
    asserts it, or in ASSERTED_BY_NODE with the node test file whose assertion names it (codes
    only the tool raises: imports and runs). The codes whose checking part is not built yet
    (upload, ZIP and portal codes no source file raises) are listed in NOT_BUILT_YET, which may
    only shrink: a listed code that gains a test fails this test until it is taken off the list.
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
# A whole string literal shaped like a catalog code. Each word starts with a letter, so
# "UTF-8", "ISO-8859-1" or "SHA-256" are not codes.
CODE_SHAPE = re.compile(r"[A-Z][A-Z0-9]*(?:-[A-Z][A-Z0-9]*)+|AGENT_[A-Z]+(?:_[A-Z]+)*")
# Calls whose argument at this position is a problem code.
CODE_ARGUMENT = {"Problem": 0, "ProblemError": 1, "problem_response": 2, "_refuse": 0}

# Codes whose checking part is not built yet: upload, ZIP and portal codes no source file
# raises (test_not_built_yet_holds_only_unbuilt_codes). Only remove entries from this list.
NOT_BUILT_YET: frozenset[str] = frozenset()
NOT_BUILT_AREAS = frozenset({"upload", "zip", "portal"})

# Codes only the Node tool raises (imports, runs, pack), with the node test file that raises
# each on a real plug-in folder: a line of it that asserts (assert..., expectCodes(...),
# expect..., codes(...)) must name the code as a string or regular expression literal.
ASSERTED_BY_NODE: dict[str, str] = {
    "PLG-IMPORT-OUTSIDE": "tests/tool/cli.test.mjs",
    "PLG-IMPORT-PACKAGE": "tests/tool/cli.test.mjs",
    "PLG-FIXTURE-MISMATCH": "tests/tool/cli.test.mjs",
    "PLG-RUN-FAILED": "tests/tool/cli.test.mjs",
    "PLG-RUN-KILLED": "tests/tool/cli.test.mjs",
    "PLG-RUN-NETWORK": "tests/tool/cli.test.mjs",
    "PLG-RUN-EXPECTED-FAILURE": "tests/tool/cli.test.mjs",
    "PLG-RUN-READ-OUTSIDE": "tests/tool/cli.test.mjs",
    "PLG-RUN-NOT-DETERMINISTIC": "tests/tool/cli.test.mjs",
    "PLG-README-TEMPLATE": "tests/tool/cli.test.mjs",
    "TOOL-SERVICE-UNREACHABLE": "tests/tool/publishing.test.mjs",
}
ASSERTION_IN_JS = re.compile(r"\bassert\b|\bexpect[A-Za-z]*\(|\bcodes\(")
# A code as a whole JavaScript string or regular expression literal: "X", 'X', `X ...`, /X/.
JS_CODE_LITERAL = re.compile(r"""(?<=["'`/])([A-Z][A-Z0-9_]*(?:-[A-Z0-9]+)*)(?=["'`/\s])""")

# Codes no conformance case can carry (the HTTP API's own refusals), with the test file that
# asserts each on real requests. The file must name the code.
ASSERTED_ELSEWHERE: dict[str, str] = {
    "AGENT_FORBIDDEN": "tests/agents/test_agent_api.py",
    "AGENT_MAY_NOT_PUBLISH": "tests/agents/test_agent_api.py",
    "REQUEST-INVALID": "tests/api/test_auth.py",
    "AUTH-REQUIRED": "tests/api/test_auth.py",
    "AUTH-FAILED": "tests/api/test_auth.py",
    "ACCOUNT-EXISTS": "tests/api/test_auth.py",
    "VERIFICATION-INVALID": "tests/api/test_auth.py",
    "MEMBER-EXISTS": "tests/accounts/test_organizations.py",
    "LAST-OWNER": "tests/accounts/test_organizations.py",
    "PLG-VERSION-REUSED": "tests/api/test_host.py",
    "PLG-VERSION-NOT-GREATER": "tests/api/test_host.py",
    "PLG-VERSION-KEPT": "tests/api/test_host.py",
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
    "DIGEST-NOT-CURRENT": "tests/api/test_host.py",
    "ROLLBACK-NOT-APPROVED": "tests/api/test_host.py",
    "REQUEST-MEDIA-TYPE": "tests/api/test_host.py",
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
    "REQUEST-MALFORMED": "tests/api/test_problems_and_pages.py",
    "METHOD-NOT-ALLOWED": "tests/api/test_problems_and_pages.py",
    "EMAIL-UNVERIFIED": "tests/api/test_tokens.py",
    "RATE-LIMITED": "tests/api/test_invitations.py",
    "SIGN-IN-LOCKED": "tests/api/test_attempt_limits.py",
    "SIGN-IN-ADDRESS-LIMITED": "tests/api/test_attempt_limits.py",
    "DEVICE-CODE-LIMITED": "tests/api/test_attempt_limits.py",
    "DOMAIN-CHECK-LIMITED": "tests/api/test_attempt_limits.py",
    "INTERNAL-ERROR": "tests/api/test_internal_error.py",
    "PLG-ID-RETIRED": "tests/publishing/test_portal_api.py",
    "PLG-RETIRE-CONFIRM": "tests/publishing/test_review_and_store.py",
    "REVIEW-CONTENT-CHANGED": "tests/publishing/test_review_and_store.py",
    "REVIEW-SAME-ORGANIZATION": "tests/publishing/test_review_and_store.py",
    "STORE-NOT-LISTED": "tests/publishing/test_review_and_store.py",
    "LISTING-NOT-RELISTABLE": "tests/publishing/test_review_and_store.py",
    "DOMAIN-IP-ADDRESS": "tests/publishing/test_portal_api.py",
    "DOMAIN-NO-DOT": "tests/publishing/test_portal_api.py",
    "DOMAIN-INVALID": "tests/publishing/test_portal_api.py",
    "DOMAIN-PUBLIC-SUFFIX": "tests/publishing/test_portal_api.py",
    "DOMAIN-SHARED-HOSTING": "tests/publishing/test_portal_api.py",
    "DOMAIN-TAKEN": "tests/publishing/test_portal_api.py",
    "DOMAIN-NOT-VERIFIED": "tests/publishing/test_portal_api.py",
    "DOMAIN-LAPSED": "tests/publishing/test_rechecks.py",
    "DOMAIN-NOT-INVITED": "tests/publishing/test_portal_api.py",
    "AGREEMENT-NOT-ACCEPTED": "tests/publishing/test_portal_api.py",
    "AGREEMENT-NOT-IN-EFFECT": "tests/publishing/test_portal_api.py",
    "AGREEMENT-EFFECTIVE-DATE": "tests/publishing/test_portal_api.py",
    "INVITATION-NOT-OPEN": "tests/publishing/test_portal_api.py",
    "PLG-STORE-AUDIENCE": "tests/publishing/test_uploads.py",
    "PLG-LICENCE-TERMS-MISSING": "tests/publishing/test_uploads.py",
    "PLG-QUOTA-UPLOADS": "tests/publishing/test_uploads.py",
    "PLG-QUOTA-CHECKING": "tests/publishing/test_uploads.py",
    "PLG-REVIEW-INVALID": "tests/publishing/test_uploads.py",
    "PLG-CHECK-DEADLINE": "tests/publishing/test_upload_checks.py",
    "PLG-SOURCE-DOWNLOAD": "tests/publishing/test_upload_checks.py",
    "PLG-REVIEW-EXAMPLE": "tests/publishing/test_upload_checks.py",
    "PLG-LISTING-LINK-DEAD": "tests/publishing/test_upload_checks.py",
    "CHECK-NETWORK-UNAVAILABLE": "tests/publishing/inside_network_down.py",
    "PLG-LISTING-MISSING": "tests/pages/test_portal_pages.py",
    "SUBMIT-REFUSED": "tests/publishing/test_submission.py",
    "SUBMIT-CHECKS-NOT-PASSED": "tests/publishing/test_submission.py",
    "SUBMIT-ATTESTATION-MISSING": "tests/publishing/test_submission.py",
    "PLG-REVIEW-INCOMPLETE": "tests/publishing/test_submission.py",
    "PLG-QUOTA-REVIEW": "tests/publishing/test_submission.py",
}


def _docstring_nodes(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def _name_of(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _is_code_name(name: str | None) -> bool:
    return name is not None and (name == "code" or name.upper().endswith("_CODE"))


def _code_positions(node: ast.AST) -> Iterator[ast.AST]:
    """The expressions of `node` that hold a problem code and nothing else."""
    if isinstance(node, ast.Call):
        position = CODE_ARGUMENT.get(_name_of(node.func) or "")
        if position is not None and len(node.args) > position:
            yield node.args[position]
        yield from (k.value for k in node.keywords if k.arg == "code")
    elif isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if any(_is_code_name(_name_of(target)) for target in targets):
            yield node.value
    elif isinstance(node, ast.Compare) and _is_code_name(_name_of(node.left)):
        yield from node.comparators


def _strings(node: ast.AST) -> Iterator[ast.Constant]:
    for found in ast.walk(node):
        if isinstance(found, ast.Constant) and isinstance(found.value, str):
            yield found


def codes_in_source(text: str, filename: str = "<text>") -> set[str]:
    """The problem codes a Python source names (see the module docstring, (a))."""
    tree = ast.parse(text, filename=filename)
    docstrings = _docstring_nodes(tree)
    codes: set[str] = set()
    for node in ast.walk(tree):
        for position in _code_positions(node):
            codes.update(constant.value for constant in _strings(position))
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
        ):
            if CODE_SHAPE.fullmatch(node.value):
                codes.add(node.value)
            codes.update(CODE_IN_TEXT.findall(node.value))
    return codes


def raised_codes() -> dict[str, list[str]]:
    """Code -> the source files that name it (`codes_in_source`)."""
    codes: dict[str, list[str]] = {}
    for path in sorted((REPO / "src" / "almanac").rglob("*.py")):
        for code in codes_in_source(path.read_text(encoding="utf-8"), str(path)):
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
        if path.relative_to(CONFORMANCE).parts[0] == "folders" and path.name != "expected.json":
            continue  # a folder case's own files (plugin.json, fixtures) are not expectations
        case = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(case, dict) and "expect" in case:
            for code in _codes_in(case["expect"]):
                codes.setdefault(code, []).append(str(path.relative_to(CONFORMANCE)))
    return codes


def test_the_scan_finds_codes() -> None:
    found = raised_codes()
    # Guards against a scan that silently finds nothing, in each place a code is written.
    for code in (
        "PLG-MANIFEST-SOURCE-URL",  # Problem(...) in the contract
        "PLG-RECORD-REPEATED",
        "STATE-CONFLICT",  # a (exception, status, code) table of the host routes
        "DIGEST-CHANGED",
        "READER-TOO-MANY-DAYS",  # code= of an account error
        "EMAIL-UNVERIFIED",  # class attribute `code = ...`
        "FORBIDDEN",  # one word: found only in code positions
        "INTERNAL-ERROR",  # problem_response(...) and ProblemError(...)
        "METHOD-NOT-ALLOWED",  # the status -> code table
    ):
        assert code in found, code
    assert len(conformance_codes()) >= 25


def test_the_scan_is_precise() -> None:
    source = """
\"\"\"Docstrings may name NOT-A-CODE or PLG-NOT-A-CODE.\"\"\"
TEXT = "utf-8"
ENCODING = "UTF-8"
CHARSET = "ISO-8859-1"
HASH = "SHA-256"
ZONE = "Etc/GMT+5"
HEADER = "X-Request-Id"
VERB = "GET"
STATUS_CODE = {404: "NOT-FOUND", 403: "FORBIDDEN"}
raise ProblemError(409, "STATE-CONFLICT", "detail")
problem_response(request, 500, "INTERNAL-ERROR", "detail")
Problem("PLG-RECORD-INVALID", "line 2")
raise Forbidden("no", code="ONEWORD")
code = "A" if x else "B-C"
TABLE = [(KeyError, 404, "TABLE-CODE")]
MESSAGE = f"see PLG-FETCH-MISSING {x}"
if code == "COMPARED": pass
"""
    assert codes_in_source(source) == {
        "NOT-FOUND",
        "FORBIDDEN",
        "STATE-CONFLICT",
        "INTERNAL-ERROR",
        "PLG-RECORD-INVALID",
        "ONEWORD",
        "A",
        "B-C",
        "TABLE-CODE",
        "PLG-FETCH-MISSING",
        "COMPARED",
    }


def test_every_catalog_code_has_a_shape_the_scan_knows() -> None:
    # A catalog code of another shape could be raised without the scan seeing it: extend the
    # scan first. One-word codes (FORBIDDEN) are seen only in code positions.
    odd = [c for c in CATALOG if not CODE_SHAPE.fullmatch(c) and not re.fullmatch("[A-Z]+", c)]
    assert not odd, odd


# Strings of a code's shape that are not problem codes: iCalendar property names (RFC 5545,
# RFC 7986) the calendar feeds write.
NOT_CODES = frozenset({"REFRESH-INTERVAL", "X-PUBLISHED-TTL", "X-WR-CALDESC"})


def test_every_code_the_code_raises_is_in_the_catalog() -> None:
    unknown = {
        code: files
        for code, files in raised_codes().items()
        if code not in CATALOG and code not in NOT_CODES
    }
    assert not unknown, f"codes raised but missing from problems.json: {unknown}"


def _covered() -> set[str]:
    return set(conformance_codes()) | set(ASSERTED_ELSEWHERE) | set(ASSERTED_BY_NODE)


def test_every_catalog_code_is_raised_by_a_test() -> None:
    covered = _covered()
    missing = sorted(
        code
        for code, entry in CATALOG.items()
        if not entry.retired and code not in covered and code not in NOT_BUILT_YET
    )
    assert not missing, f"catalog codes no test raises (add a conformance case): {missing}"


def test_not_built_yet_only_shrinks() -> None:
    assert set(CATALOG) >= NOT_BUILT_YET, NOT_BUILT_YET - set(CATALOG)
    now_covered = sorted(NOT_BUILT_YET & _covered())
    assert not now_covered, (
        f"these codes have cases now; take them off NOT_BUILT_YET: {now_covered}"
    )


def test_not_built_yet_holds_only_unbuilt_codes() -> None:
    # Only upload, ZIP and portal codes, and only while no source file raises them: a code
    # the code raises is built, and needs a test.
    wrong_area = {
        c: CATALOG[c].area for c in NOT_BUILT_YET if CATALOG[c].area not in NOT_BUILT_AREAS
    }
    assert not wrong_area, f"NOT_BUILT_YET holds only upload, ZIP and portal codes: {wrong_area}"
    raised = {c: f for c, f in raised_codes().items() if c in NOT_BUILT_YET}
    assert not raised, f"these codes are raised by the code, so built; test them: {raised}"


def test_asserted_elsewhere_names_the_code() -> None:
    for code, test_file in ASSERTED_ELSEWHERE.items():
        assert code in CATALOG, code
        text = (REPO / test_file).read_text(encoding="utf-8")
        assert f'"{code}"' in text, f"{test_file} does not assert {code}"


def node_assertions(text: str) -> set[str]:
    """The codes a node test names in a string or regular expression literal on a line that
    asserts (comment lines aside)."""
    named: set[str] = set()
    for line in text.splitlines():
        if line.lstrip().startswith("//") or not ASSERTION_IN_JS.search(line):
            continue
        named.update(JS_CODE_LITERAL.findall(line))
    return named


def test_asserted_by_node_names_the_code_in_an_assertion() -> None:
    for code, test_file in ASSERTED_BY_NODE.items():
        assert code in CATALOG, code
        assert test_file.startswith("tests/tool/") and test_file.endswith(".test.mjs"), test_file
        text = (REPO / test_file).read_text(encoding="utf-8")
        assert code in node_assertions(text), f"no assertion of {test_file} names {code}"


def test_the_node_assertion_scan_is_precise() -> None:
    text = """
// expectCodes(dir, "PLG-IN-A-COMMENT");
const wanted = ["PLG-NOT-ASSERTED"];
const message = `PLG-IN-A-TEMPLATE fetch.mjs:2`;
expectCodes(dir, ["PLG-ONE", "PLG-TWO"]);
assert.match(r.stderr, /PLG-IN-A-REGEX/);
assert.ok(found.includes("PLG-INCLUDED-NOT"));
assert.equal(f.code, 'PLG-QUOTED');
const found = codes(r.stdout).filter((c) => c === "PLG-FILTERED");
assert.ok(true, "the message names PLG-IN-PROSE");
"""
    assert node_assertions(text) == {
        "PLG-ONE",
        "PLG-TWO",
        "PLG-IN-A-REGEX",
        "PLG-INCLUDED-NOT",
        "PLG-QUOTED",
        "PLG-FILTERED",
    }


def test_conformance_expectations_use_catalog_codes() -> None:
    unknown = {c: f for c, f in conformance_codes().items() if c not in CATALOG}
    assert not unknown, f"conformance cases expect codes the catalog lacks: {unknown}"

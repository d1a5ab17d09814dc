import json

from almanac.platform.contract.problems import CATALOG, PAGES
from tests.conftest import REPO


def test_catalog_codes_are_unique_and_complete():
    raw = json.loads((REPO / "src/almanac/platform/contract/problems.json").read_text())
    codes = [row["code"] for row in raw["problems"]]
    assert len(codes) == len(set(codes)) == len(CATALOG)
    for entry in CATALOG.values():
        assert entry.severity in {"error", "warning"}
        assert entry.title and entry.fix.endswith(".")


def test_every_code_has_its_docs_page():
    # The page a docs link opens: the rule, why, a failing and a passing example (the fix is
    # the catalog's). A new code needs its entry in problem_pages.json too.
    raw = json.loads((REPO / "src/almanac/platform/contract/problem_pages.json").read_text())
    assert sorted(raw["problems"]) == sorted(CATALOG) == sorted(PAGES)

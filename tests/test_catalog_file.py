import json

from almanac.platform.contract.problems import CATALOG
from tests.conftest import REPO


def test_catalog_codes_are_unique_and_complete():
    raw = json.loads((REPO / "src/almanac/platform/contract/problems.json").read_text())
    codes = [row["code"] for row in raw["problems"]]
    assert len(codes) == len(set(codes)) == len(CATALOG)
    for entry in CATALOG.values():
        assert entry.severity in {"error", "warning"}
        assert entry.title and entry.fix.endswith(".")

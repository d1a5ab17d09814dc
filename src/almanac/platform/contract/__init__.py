"""Contract 1, the static checks: every rule that judges a plug-in and its records, in one place."""

from almanac.platform.contract.problems import CATALOG, CatalogEntry, Problem, docs_link

__all__ = ["CATALOG", "CatalogEntry", "Problem", "docs_link"]

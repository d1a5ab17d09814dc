"""Dagster assets: one partitioned asset per plug-in ever approved, and the IO manager that
performs the store's transactional write (DECISIONS 8)."""

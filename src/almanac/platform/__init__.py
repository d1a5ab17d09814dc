"""The domain: contract, store, lifecycle. Imports neither Dagster nor FastAPI."""

"""Routers, one per area."""

"""The Dagster Definitions of the Almanac code location (DECISIONS section 8)."""

import dagster as dg

defs = dg.Definitions()

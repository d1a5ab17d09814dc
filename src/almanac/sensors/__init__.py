"""Dagster sensors: the minute sensor that starts due runs (schedule, approval, resume, first
run, retry), and the run-failure sensor that keeps failures outside the asset's code."""

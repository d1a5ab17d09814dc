#!/usr/bin/env bash
# Almanac on five machines of this one (README, "Running in production"): PostgreSQL, two API
# machines behind HAProxy, and the Dagster machine, each a network namespace of its own on a
# bridge that lives in a namespace of its own too (tests/topology/machines.py draws it).
# Sets it up, prints where everything is and keeps it until Ctrl-C, which tears it all down;
# `--check` tears it down once HAProxy answers through both API machines. As root.
set -euo pipefail
cd "$(dirname "$0")/.."
ALMANAC_EXTRA_APT="haproxy nftables postgresql ${ALMANAC_EXTRA_APT:-}" bash scripts/setup.sh
exec .venv/bin/python -m tests.topology.machines "$@"

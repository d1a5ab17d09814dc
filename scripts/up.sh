#!/usr/bin/env bash
# Quick start, first command: set everything up and start Almanac on its embedded default.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/almanac up "$@"

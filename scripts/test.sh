#!/usr/bin/env bash
# Quick start, second command: set everything up and run every test suite.
# PostgreSQL: ALMANAC_TEST_DATABASE_URL when set, else a server answering on 127.0.0.1:5432,
# else a throwaway cluster installed (apt) and started here, stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
# Chromium draws the pages in the tests; HAProxy, nftables and PostgreSQL's server make the
# machines of tests/topology (test-only; the service needs none of them).
ALMANAC_EXTRA_APT="chromium haproxy nftables postgresql ${ALMANAC_EXTRA_APT:-}" bash scripts/setup.sh
export PATH="$PWD/.venv/bin:$PATH"

if [ -z "${ALMANAC_TEST_DATABASE_URL:-}" ]; then
  if python scripts/pg_probe.py "postgresql://postgres@127.0.0.1:5432/postgres"; then
    export ALMANAC_TEST_DATABASE_URL="postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
  else
    echo "test: no PostgreSQL on 127.0.0.1:5432; starting a throwaway cluster" >&2
    source scripts/pg_throwaway.sh
  fi
fi
python scripts/pg_probe.py "${ALMANAC_TEST_DATABASE_URL/+psycopg/}" \
  || { echo "test: PostgreSQL at ALMANAC_TEST_DATABASE_URL does not answer" >&2; exit 1; }

echo "== ruff"
ruff check .
ruff format --check .

echo "== mypy (settings in pyproject.toml: strict on src/almanac/platform)"
mypy

echo "== lint-imports (the layers: [tool.importlinter] in pyproject.toml)"
PYTHONPATH="$PWD/src" lint-imports --no-logo

echo "== node --test tests/tool/"
node --test 'tests/tool/**/*.test.mjs'

echo "== pytest"
pytest "$@"

"""Exit 0 when a PostgreSQL server answers at the URL given as the only argument."""

import sys

import psycopg

try:
    with psycopg.connect(sys.argv[1], connect_timeout=3) as conn:
        conn.execute("select 1")
except psycopg.Error:
    sys.exit(1)

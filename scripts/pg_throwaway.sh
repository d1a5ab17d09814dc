# Sourced by scripts/test.sh: install PostgreSQL (apt) and start a throwaway cluster in a
# temporary folder on 127.0.0.1:54329, stopped when the test run exits.
apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >/dev/null
PG_BIN="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"
PG_DIR="$(mktemp -d /tmp/almanac-pg.XXXXXX)"
chown postgres "$PG_DIR"
su postgres -s /bin/sh -c "$PG_BIN/initdb -D $PG_DIR/data -U postgres -A trust >/dev/null"
su postgres -s /bin/sh -c "$PG_BIN/pg_ctl -D $PG_DIR/data -l $PG_DIR/log -w -o '-p 54329 -k $PG_DIR -c listen_addresses=127.0.0.1' start >/dev/null"
trap 'su postgres -s /bin/sh -c "$PG_BIN/pg_ctl -D $PG_DIR/data -m fast stop" >/dev/null 2>&1; rm -rf "$PG_DIR"' EXIT
export ALMANAC_TEST_DATABASE_URL="postgresql+psycopg://postgres@127.0.0.1:54329/postgres"

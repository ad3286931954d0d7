#!/bin/sh
# The server tests and the SQL benchmark start a throwaway PostgreSQL 15 cluster (timeouts and
# concurrency need a real server). Install Debian's postgresql-15 when its binaries are missing.
set -e
# The OAuth consent-page tests drive Debian's chromium through playwright-core (which bundles no
# browser). Install it when missing; without root or apt, say so and let those tests fail clearly.
if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing chromium (browser for the consent-page tests)..." >&2
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "chromium is missing at /usr/bin/chromium: install Debian's chromium package for the consent-page tests" >&2
  fi
fi
# The fleet tests put Debian's PgBouncer (transaction mode) in front of their clusters.
if [ ! -x /usr/sbin/pgbouncer ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing pgbouncer (connection pooler for the fleet tests)..." >&2
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends pgbouncer >/dev/null
    # Debian starts its own PgBouncer on install; the tests start theirs.
    if command -v service >/dev/null 2>&1; then service pgbouncer stop >/dev/null 2>&1 || true; fi
  else
    echo "pgbouncer is missing at /usr/sbin/pgbouncer: install Debian's pgbouncer package for the fleet tests" >&2
  fi
fi
BIN=/usr/lib/postgresql/15/bin
if [ -x "$BIN/initdb" ] && [ -x "$BIN/pg_ctl" ]; then exit 0; fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "PostgreSQL 15 server binaries are missing in $BIN: install the postgresql-15 package" >&2
  exit 1
fi
echo "installing postgresql-15 (server binaries for the tests)..." >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends postgresql-15 >/dev/null
# Debian starts a cluster on install; the tests start their own, so stop the packaged one.
if command -v pg_ctlcluster >/dev/null 2>&1; then pg_ctlcluster 15 main stop >/dev/null 2>&1 || true; fi

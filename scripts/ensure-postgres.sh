#!/usr/bin/env bash
# Install Debian's PostgreSQL server when its binaries are missing. The tests never use a
# system cluster: they start a throwaway one of their own (initdb + pg_ctl on a Unix
# socket in a temporary folder, run as the `postgres` OS user the package creates; see
# memorylib/backends/local_postgres.py) and remove it at the end. The Python driver
# (psycopg, psycopg_pool) comes with the venv (`.[dev]` includes `.[postgres]`).
set -euo pipefail
have_server() {
  [ -n "${MEMORYLIB_PG_BINDIR:-}" ] && [ -x "${MEMORYLIB_PG_BINDIR}/initdb" ] && return 0
  compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null && return 0
  command -v initdb >/dev/null 2>&1
}
have_server && exit 0
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing Debian's postgresql for the PostgreSQL test suite"
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
else
  echo "note: PostgreSQL's server binaries are missing and cannot be installed here (needs"
  echo "      root + apt-get); the PostgreSQL suite will be skipped. Install postgresql (or set"
  echo "      MEMORYLIB_PG_BINDIR, or MEMORYLIB_TEST_PG_DSN for a server of your own) to run it."
fi

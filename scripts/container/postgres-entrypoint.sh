#!/bin/sh
# PostgreSQL's entrypoint for the test's own postgres image (scripts/container/base-image.sh),
# doing what the official image's does with the same variables: on an empty PGDATA, initdb
# with POSTGRES_USER / POSTGRES_PASSWORD (or POSTGRES_PASSWORD_FILE) / POSTGRES_DB, password
# authentication over TCP; then postgres in the foreground as the postgres user.
set -eu
: "${PGDATA:=/var/lib/postgresql/data}"
user=${POSTGRES_USER:-postgres}
db=${POSTGRES_DB:-$user}
if [ -n "${POSTGRES_PASSWORD_FILE:-}" ]; then password=$(cat "$POSTGRES_PASSWORD_FILE"); else password=${POSTGRES_PASSWORD:-}; fi
[ -n "$password" ] || { echo "POSTGRES_PASSWORD or POSTGRES_PASSWORD_FILE is required" >&2; exit 1; }
mkdir -p "$PGDATA" /var/run/postgresql
chown -R postgres:postgres "$PGDATA" /var/run/postgresql
chmod 700 "$PGDATA"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile=$(mktemp); printf '%s\n' "$password" > "$pwfile"; chown postgres "$pwfile"
  runuser -u postgres -- initdb -D "$PGDATA" -U "$user" --pwfile="$pwfile" -E UTF8 --locale=C \
    --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f "$pwfile"
  echo "listen_addresses = '*'" >> "$PGDATA/postgresql.conf"
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  if [ "$db" != postgres ]; then
    runuser -u postgres -- pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
    runuser -u postgres -- createdb -U "$user" "$db"
    runuser -u postgres -- pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
  fi
  echo "initialised $PGDATA for $user/$db"
fi
[ "${1:-}" = postgres ] && shift
# exec, not runuser (which stays as the parent): postgres itself is PID 1 and gets the stop
# signal (SIGINT, a fast shutdown), as in the official image (which uses gosu).
exec setpriv --reuid=postgres --regid=postgres --init-groups postgres -D "$PGDATA" "$@"

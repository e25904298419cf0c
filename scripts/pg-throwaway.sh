#!/usr/bin/env bash
# Starts a throwaway PostgreSQL on 127.0.0.1 for tests and prints its URL on stdout.
# Usage: scripts/pg-throwaway.sh start PORT DIR   -> prints postgres://... ; scripts/pg-throwaway.sh stop DIR
# For fault tests: `pause DIR` stops the server and keeps its data, `resume DIR` starts it again on its port;
# `restart MODE DIR` is `pg_ctl restart -m MODE` (fast: sessions ended, a clean shutdown; immediate:
# every process killed, crash recovery at the start).
# PostgreSQL refuses to run as root, so as root it runs as the `postgres` user in a directory it owns.
set -euo pipefail
cmd=${1:?start|stop}
# PostgreSQL 15 (what CI and the project are tested on) when installed; else pg_config's, else the
# newest under /usr/lib/postgresql. PG_BINDIR overrides the choice.
bindir=${PG_BINDIR:-}
if [ -z "$bindir" ] && [ -x /usr/lib/postgresql/15/bin/initdb ]; then bindir=/usr/lib/postgresql/15/bin; fi
if [ -z "$bindir" ]; then bindir=$(pg_config --bindir 2>/dev/null || true); fi
if [ -z "$bindir" ] || [ ! -x "$bindir/initdb" ]; then
  for d in /usr/lib/postgresql/*/bin; do [ -x "$d/initdb" ] && bindir=$d; done
fi
[ -x "$bindir/initdb" ] || { echo "pg-throwaway: no PostgreSQL server binaries (initdb) found" >&2; exit 3; }

as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "$cmd" in
  start)
    port=${2:?port}; dir=${3:?dir}
    # stdout carries only the URL: the version goes to stderr, for the log.
    echo "pg-throwaway: $("$bindir/initdb" --version) from $bindir" >&2
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres:postgres "$dir"
    as_pg "$bindir/initdb" -D "$dir/data" --auth=trust -U postgres -E UTF8 --locale=C >"$dir/initdb.log" 2>&1
    echo "$port" >"$dir/port"
    as_pg "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" \
      -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=400" -w start >/dev/null
    as_pg "$bindir/createdb" -h 127.0.0.1 -p "$port" -U postgres wsp_test
    echo "postgres://postgres@127.0.0.1:$port/wsp_test"
    ;;
  stop)
    dir=${2:?dir}
    [ -d "$dir/data" ] && as_pg "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$dir"
    ;;
  pause)
    dir=${2:?dir}
    as_pg "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
    ;;
  resume)
    dir=${2:?dir}; port=$(cat "$dir/port")
    as_pg "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" \
      -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=400" -w start >/dev/null
    ;;
  restart)
    mode=${2:?fast|immediate}; dir=${3:?dir}; port=$(cat "$dir/port")
    as_pg "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -m "$mode" \
      -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=400" -w restart >/dev/null
    ;;
  *) echo "usage: $0 start PORT DIR | stop DIR | pause DIR | resume DIR | restart fast|immediate DIR" >&2; exit 2 ;;
esac

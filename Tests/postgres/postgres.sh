#!/usr/bin/env bash
# A throw-away PostgreSQL 15 server for the tests, on 127.0.0.1 and a port of its own, its socket in
# its own folder (see ../shared/notes/test-peers.md):
#   postgres.sh start DIR PORT      initdb + start; prints the URL of the database `gatehouse`
#   postgres.sh createdb DIR NAME [TEMPLATE]   a new database (empty, or a copy of TEMPLATE); prints its URL
#   postgres.sh dropdb DIR NAME
#   postgres.sh psql DIR [ARGS...]  psql as the superuser on the database `gatehouse`
#   postgres.sh stop DIR            fast shutdown (the data stay; `start DIR PORT` again restarts)
#   postgres.sh kill DIR            SIGKILL the server (an outage, as a crash would make it)
#   postgres.sh remove DIR          stop and delete everything
# Root runs the server as the `postgres` user (initdb refuses root).
set -euo pipefail
BIN=/usr/lib/postgresql/15/bin
PASSWORD=gatehouse-test-password
command=$1; dir=$(realpath -m "$2")
as_owner() { if [ "$(id -u)" -eq 0 ]; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi; }
port() { cat "$dir/port"; }
sql() { as_owner /usr/bin/psql -w -q -v ON_ERROR_STOP=1 -h "$dir" -p "$(port)" -U gatehouse -d gatehouse "$@"; }
url() { echo "postgres://gatehouse:$PASSWORD@127.0.0.1:$(port)/$1"; }

case $command in
start)
  port=$3
  if [ ! -d "$dir/data" ]; then
    mkdir -p "$dir"
    [ "$(id -u)" -eq 0 ] && chown postgres "$dir"
    echo "$PASSWORD" >"$dir/password"
    [ "$(id -u)" -eq 0 ] && chown postgres "$dir/password"
    as_owner "$BIN/initdb" -D "$dir/data" -U gatehouse --pwfile="$dir/password" --auth-host=scram-sha-256 --auth-local=trust \
      --no-sync --locale=C.UTF-8 -E UTF8 >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
  fi
  echo "$port" >"$dir/port"
  if ! as_owner "$BIN/pg_ctl" -D "$dir/data" -w -t 30 -l "$dir/server.log" start \
      -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300 -c shared_preload_libraries=pg_stat_statements" >/dev/null; then
    tail -20 "$dir/server.log" >&2; exit 1
  fi
  if ! sql -c "SELECT 1" -tA 2>/dev/null | grep -q 1; then
    as_owner /usr/bin/psql -w -q -h "$dir" -p "$port" -U gatehouse -d postgres -c "CREATE DATABASE gatehouse"
  fi
  url gatehouse
  ;;
createdb)
  # createdb DIR NAME [TEMPLATE]: a copy of TEMPLATE (an already migrated database) when given.
  template=""
  [ -n "${4:-}" ] && template=" TEMPLATE \"$4\""
  as_owner /usr/bin/psql -w -q -v ON_ERROR_STOP=1 -h "$dir" -p "$(port)" -U gatehouse -d postgres -c "CREATE DATABASE \"$3\"$template"
  url "$3"
  ;;
dropdb)
  as_owner /usr/bin/psql -w -q -h "$dir" -p "$(port)" -U gatehouse -d postgres -c "DROP DATABASE IF EXISTS \"$3\" WITH (FORCE)"
  ;;
psql)
  shift 2
  as_owner /usr/bin/psql -w -q -v ON_ERROR_STOP=1 -h "$dir" -p "$(port)" -U gatehouse -d gatehouse "$@"
  ;;
stop)
  [ -f "$dir/data/postmaster.pid" ] && as_owner "$BIN/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null || true
  ;;
kill)
  if [ -f "$dir/data/postmaster.pid" ]; then kill -9 "$(head -1 "$dir/data/postmaster.pid")" || true; fi
  # The postmaster's children notice their parent is gone and exit; wait for the port to be free.
  for _ in $(seq 50); do pgrep -f -- "-k $dir" >/dev/null || break; sleep 0.1; done
  pkill -9 -f -- "-k $dir" || true
  rm -f "$dir/data/postmaster.pid" "$dir"/.s.PGSQL.*
  ;;
remove)
  "$0" stop "$dir"
  rm -rf "$dir"
  ;;
*)
  echo "usage: $0 start|createdb|dropdb|psql|stop|kill|remove DIR ..." >&2; exit 2
  ;;
esac

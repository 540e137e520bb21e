#!/usr/bin/env bash
# A private PostgreSQL cluster on loopback, for the tests and for -p:Provider=PostgreSql runs.
#   scripts/postgres.sh start   installs PostgreSQL if missing, starts the cluster, prints its connection string
#   scripts/postgres.sh stop    stops it (fast shutdown)
#   scripts/postgres.sh status  exits 0 (and prints the connection string) if the cluster runs, 3 if not
#   scripts/postgres.sh env     prints the connection string only
#   scripts/postgres.sh dir     prints the cluster's folder (IT_PG_DIR: its data, password and log)
# Settings: IT_PG_DIR (data directory, default /tmp/integrationtasks-pg), IT_PG_PORT (default 55432),
#           IT_PG_MAX_CONNECTIONS (default 200; a Load at 64 clients with PipelinedCopy beside needs about 400).
# Its superuser signs in with SCRAM and a password generated when the cluster is made, kept in the owner-only data directory:
# no local user gets in without it (the connection string printed carries it; pass it on in the environment, not a command line).
set -euo pipefail
umask 077
dir=${IT_PG_DIR:-/tmp/integrationtasks-pg}
port=${IT_PG_PORT:-55432}
max_connections=${IT_PG_MAX_CONNECTIONS:-200}
data="$dir/data"
password_file="$dir/password"
connection() { echo "Host=127.0.0.1;Port=$port;Username=postgres;Password=$(cat "$password_file");Database=postgres"; }

find_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }

as_postgres() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

bin=$(find_bin || true)
case "${1:-start}" in
  start)
    if [ -z "$bin" ]; then
      echo "postgres.sh: installing PostgreSQL (apt)" >&2
      if [ "$(id -u)" = 0 ]; then
        (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql) >&2
      else
        echo "postgres.sh: PostgreSQL is not installed and this user cannot install it (apt-get install postgresql)" >&2
        exit 1
      fi
      bin=$(find_bin)
    fi
    # A cluster made before passwords (or half made) is a scratch cluster: made again.
    if [ -e "$dir" ] && { [ ! -s "$data/PG_VERSION" ] || [ ! -s "$password_file" ]; }; then
      as_postgres "$bin/pg_ctl" -D "$dir" -m immediate -w -t 30 stop >/dev/null 2>&1 || true
      as_postgres "$bin/pg_ctl" -D "$data" -m immediate -w -t 30 stop >/dev/null 2>&1 || true
      rm -rf "$dir"
    fi
    if [ ! -e "$dir" ]; then
      mkdir -m 0700 "$dir"
      [ "$(id -u)" = 0 ] && chown postgres:postgres "$dir"
      as_postgres sh -c "umask 077; head -c 24 /dev/urandom | base64 | tr -d '/+=\n' > '$password_file'"
      as_postgres "$bin/initdb" -D "$data" -U postgres -A scram-sha-256 --pwfile="$password_file" -E UTF8 --locale=C.UTF-8 --no-sync >/dev/null
    fi
    # Someone else's folder in its place (made before this script, or readable by others) is refused, never used.
    owner=$(stat -c %U "$dir"); mode=$(stat -c %a "$dir")
    expected_owner=$([ "$(id -u)" = 0 ] && echo postgres || id -un)
    if [ "$owner" != "$expected_owner" ] || [ "$mode" != 700 ]; then
      echo "postgres.sh: $dir belongs to $owner with mode $mode; it must be $expected_owner's with mode 700 (remove it, or set IT_PG_DIR)" >&2
      exit 1
    fi
    if ! as_postgres "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1; then
      # Loopback only, socket in the data directory; fsync off: a scratch cluster for tests.
      as_postgres "$bin/pg_ctl" -D "$data" -l "$dir/server.log" -w -t 60 \
        -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=$max_connections" start >/dev/null
    fi
    connection
    ;;
  stop)
    if [ -n "$bin" ] && [ -s "$data/PG_VERSION" ]; then
      as_postgres "$bin/pg_ctl" -D "$data" -m fast -w -t 60 stop >/dev/null 2>&1 || true
    fi
    ;;
  status)
    if [ -n "$bin" ] && [ -s "$data/PG_VERSION" ] && as_postgres "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1; then
      connection
    else
      exit 3
    fi
    ;;
  env)
    connection
    ;;
  dir)
    echo "$dir"
    ;;
  *)
    echo "usage: $0 start|stop|status|env|dir" >&2
    exit 2
    ;;
esac

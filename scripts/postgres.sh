#!/usr/bin/env bash
# A private PostgreSQL cluster on loopback, for the tests and for -p:Provider=PostgreSql runs.
#   scripts/postgres.sh start   installs PostgreSQL if missing, starts the cluster, prints its connection string
#   scripts/postgres.sh stop    stops it (fast shutdown)
#   scripts/postgres.sh status  exits 0 (and prints the connection string) if the cluster runs, 3 if not
#   scripts/postgres.sh env     prints the connection string only
#   scripts/postgres.sh dir     prints the cluster's data directory
# Settings: IT_PG_DIR (data directory, default /tmp/integrationtasks-pg), IT_PG_PORT (default 55432),
#           IT_PG_MAX_CONNECTIONS (default 200; a Load at 64 clients with PipelinedCopy beside needs about 400).
set -euo pipefail
dir=${IT_PG_DIR:-/tmp/integrationtasks-pg}
port=${IT_PG_PORT:-55432}
max_connections=${IT_PG_MAX_CONNECTIONS:-200}
conn="Host=127.0.0.1;Port=$port;Username=postgres;Database=postgres"

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
    if [ ! -s "$dir/PG_VERSION" ]; then
      mkdir -p "$dir"
      [ "$(id -u)" = 0 ] && chown postgres:postgres "$dir"
      as_postgres "$bin/initdb" -D "$dir" -U postgres -A trust -E UTF8 --locale=C.UTF-8 --no-sync >/dev/null
    fi
    if ! as_postgres "$bin/pg_ctl" -D "$dir" status >/dev/null 2>&1; then
      # Loopback only, socket in the data directory; fsync off: a scratch cluster for tests.
      as_postgres "$bin/pg_ctl" -D "$dir" -l "$dir/server.log" -w -t 60 \
        -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=$max_connections" start >/dev/null
    fi
    echo "$conn"
    ;;
  stop)
    if [ -n "$bin" ] && [ -s "$dir/PG_VERSION" ]; then
      as_postgres "$bin/pg_ctl" -D "$dir" -m fast -w -t 60 stop >/dev/null 2>&1 || true
    fi
    ;;
  status)
    if [ -n "$bin" ] && [ -s "$dir/PG_VERSION" ] && as_postgres "$bin/pg_ctl" -D "$dir" status >/dev/null 2>&1; then
      echo "$conn"
    else
      exit 3
    fi
    ;;
  env)
    echo "$conn"
    ;;
  dir)
    echo "$dir"
    ;;
  *)
    echo "usage: $0 start|stop|status|env|dir" >&2
    exit 2
    ;;
esac

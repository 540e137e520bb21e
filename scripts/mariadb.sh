#!/usr/bin/env bash
# A private MariaDB server on loopback, for the tests and for -p:Provider=MariaDb runs.
#   scripts/mariadb.sh start   installs MariaDB if missing, starts the server, prints its connection string
#   scripts/mariadb.sh stop    stops it (and waits until it has)
#   scripts/mariadb.sh status  exits 0 (and prints the connection string) if the server runs, 3 if not
#   scripts/mariadb.sh env     prints the connection string only
#   scripts/mariadb.sh dir     prints the server's folder (IT_MARIADB_DIR: its data, password, socket and log)
# Settings: IT_MARIADB_DIR (default /tmp/integrationtasks-mariadb), IT_MARIADB_PORT (default 53306),
#           IT_MARIADB_MAX_CONNECTIONS (default 200).
# The suite's user signs in with a password generated when the server is made, kept in the owner-only folder; the database's
# own administrator signs in only through the folder's socket as the operating-system user that runs it. Nobody gets in without
# a password or that socket (the connection string printed carries the password; pass it on in the environment).
set -euo pipefail
umask 077
dir=${IT_MARIADB_DIR:-/tmp/integrationtasks-mariadb}
port=${IT_MARIADB_PORT:-53306}
max_connections=${IT_MARIADB_MAX_CONNECTIONS:-200}
data="$dir/data"
socket="$dir/mariadb.sock"
pid_file="$dir/mariadb.pid"
password_file="$dir/password"
made="$dir/made"
# Written first in a folder this script makes: only a folder holding it is ever removed.
mine="$dir/.made-by-integrationtasks"
user_name=integrationtasks
database=integrationtasks
connection() {
  [ -s "$password_file" ] && [ ! -L "$password_file" ] || { echo "mariadb.sh: no password in $dir: not made yet (start makes it)" >&2; exit 3; }
  echo "Server=127.0.0.1;Port=$port;User ID=$user_name;Password=$(cat "$password_file");Database=$database"
}

# As root the server runs as Debian's mysql user; otherwise as the user running this script.
if [ "$(id -u)" = 0 ]; then server_user=mysql; else server_user=$(id -un); fi
as_server() {
  if [ "$(id -u)" = 0 ]; then runuser -u mysql -- "$@"; else "$@"; fi
}
# The administrator is the user running this script (root, or the server's own user), signed in through the socket (unix_socket).
admin() { mariadb --no-defaults --socket="$socket" -u "$(id -un)" "$@"; }
# The server's pid, if the pid file names a live mariadbd (a stale file, or one naming another process, is no server).
server_pid() {
  [ -s "$pid_file" ] || return 1
  local pid; pid=$(cat "$pid_file")
  [[ "$pid" =~ ^[0-9]+$ ]] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = mariadbd ] && echo "$pid"
}
running() { server_pid >/dev/null; }

# Someone else's folder in its place (made before this script, a link, or readable by others) is refused, never used or removed.
check_folder() {
  [ -e "$dir" ] || [ -L "$dir" ] || return 0
  if [ -L "$dir" ] || [ ! -d "$dir" ]; then
    echo "mariadb.sh: $dir is not a folder this script made (remove it, or set IT_MARIADB_DIR)" >&2; exit 1
  fi
  local owner mode; owner=$(stat -c %U "$dir"); mode=$(stat -c %a "$dir")
  if [ "$owner" != "$server_user" ] || [ "$mode" != 700 ]; then
    echo "mariadb.sh: $dir belongs to $owner with mode $mode; it must be $server_user's with mode 700 (remove it, or set IT_MARIADB_DIR)" >&2
    exit 1
  fi
}

stop_server() {
  local pid; pid=$(server_pid) || return 0
  as_server kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 600); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  echo "mariadb.sh: the server (pid $pid) did not stop within 60 s of SIGTERM; killed" >&2
  as_server kill -KILL "$pid" 2>/dev/null || true
}

check_folder

case "${1:-start}" in
  start)
    if ! command -v mariadbd >/dev/null && [ ! -x /usr/sbin/mariadbd ]; then
      if [ "$(id -u)" != 0 ]; then
        echo "mariadb.sh: MariaDB is not installed and this user cannot install it (apt-get install mariadb-server)" >&2
        exit 1
      fi
      echo "mariadb.sh: installing MariaDB (apt)" >&2
      # Debian's own service is kept from starting: the suite runs a private server of its own.
      if [ ! -e /usr/sbin/policy-rc.d ]; then
        printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d
        trap 'rm -f /usr/sbin/policy-rc.d' EXIT # also when the install fails
      fi
      (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mariadb-server mariadb-client) >&2
      rm -f /usr/sbin/policy-rc.d; trap - EXIT
    fi
    PATH=$PATH:/usr/sbin
    # A server this script made halfway (or before its password) is a scratch server: made again.
    if [ -e "$dir" ] && { [ ! -s "$password_file" ] || [ ! -e "$made" ]; }; then
      if [ ! -e "$mine" ]; then
        echo "mariadb.sh: $dir holds no server this script made (remove it, or set IT_MARIADB_DIR)" >&2; exit 1
      fi
      stop_server
      rm -rf "$dir"
    fi
    if [ ! -e "$dir" ]; then
      mkdir -m 0700 "$dir"
      touch "$mine"
      [ "$(id -u)" = 0 ] && chown -R mysql:mysql "$dir"
      if ! as_server test -w "$dir"; then
        rm -rf "$dir"
        echo "mariadb.sh: user $server_user cannot reach $dir (a parent folder closed to it): set IT_MARIADB_DIR to a folder it can" >&2
        exit 1
      fi
      as_server sh -c "umask 077; head -c 24 /dev/urandom | base64 | tr -d '/+=\n' > '$password_file'"
      as_server mariadb-install-db --no-defaults --datadir="$data" --user="$server_user" --auth-root-authentication-method=socket \
        --skip-test-db >"$dir/install.log" 2>&1 \
        || { echo "mariadb.sh: mariadb-install-db failed; see $dir/install.log" >&2; exit 1; }
    fi
    check_folder
    if ! running; then
      # Loopback only; no flush at each commit and no doublewrite: a scratch server for tests and runs, as the PostgreSQL
      # cluster runs with fsync off. A megabyte row and more in one packet; LOAD DATA LOCAL for the peer.
      setsid mariadbd --no-defaults --user="$server_user" --datadir="$data" --socket="$socket" --port="$port" --bind-address=127.0.0.1 \
        --pid-file="$pid_file" --log-error="$dir/server.log" --skip-name-resolve --skip-log-bin \
        --character-set-server=utf8mb4 --collation-server=utf8mb4_bin --max-connections="$max_connections" \
        --max-allowed-packet=1G --local-infile=1 --innodb-flush-log-at-trx-commit=0 --innodb-doublewrite=0 \
        --innodb-buffer-pool-size=256M </dev/null >/dev/null 2>&1 &
      started=$!
      for _ in $(seq 1 600); do
        [ -S "$socket" ] && admin -e "SELECT 1" >/dev/null 2>&1 && break
        sleep 0.1
      done
      if ! admin -e "SELECT 1" >/dev/null 2>&1; then
        echo "mariadb.sh: the server did not start within 60 s; see $dir/server.log" >&2
        kill -KILL "$started" 2>/dev/null || true
        exit 1
      fi
    fi
    if [ ! -e "$made" ]; then
      # Read from standard input: the password never reaches a command line.
      admin <<SQL
DROP USER IF EXISTS ''@'localhost', ''@'$(hostname)';
CREATE DATABASE IF NOT EXISTS $database CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
CREATE USER IF NOT EXISTS '$user_name'@'127.0.0.1' IDENTIFIED BY '$(cat "$password_file")';
GRANT ALL PRIVILEGES ON \`$database\`.* TO '$user_name'@'127.0.0.1';
GRANT ALL PRIVILEGES ON \`it\\_%\`.* TO '$user_name'@'127.0.0.1';
SQL
      as_server touch "$made"
    fi
    connection
    ;;
  stop)
    stop_server
    ;;
  status)
    if running && [ -e "$made" ]; then connection; else exit 3; fi
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

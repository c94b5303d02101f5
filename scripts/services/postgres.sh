# shellcheck shell=bash
# Starts a PostgreSQL server for the tests and exports WEIR_POSTGRES_URL.
# Sourced by scripts/test.sh (see scripts/services/README.md); it can also be
# sourced on its own: `source scripts/services/postgres.sh`.
#
# Installs the Debian package `postgresql` when the server binaries are
# missing, initializes a cluster under $WEIR_SERVICES_DIR/postgres as the
# postgres user (initdb refuses root), allows prepared transactions (the
# exactly-once sink uses PREPARE TRANSACTION), starts it on 127.0.0.1 at a
# free port, waits until it answers and creates the database `weir`.
# Running it again while the server runs reuses that server.

weir_pg_main() {
  local dir="${WEIR_SERVICES_DIR:-$PWD/.services}/postgres"

  local bin
  bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
  if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
    echo "postgres.sh: installing the Debian package postgresql" >&2
    # shellcheck source=scripts/services/apt.sh
    source "$(dirname "${BASH_SOURCE[0]}")/apt.sh"
    weir_apt_install postgresql || return 1
    bin="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"
  fi

  # Run a command as the postgres user when we are root (initdb and the
  # server refuse root); as ourselves otherwise.
  local as=()
  if [ "$(id -u)" = 0 ]; then as=(runuser -u postgres --); fi

  mkdir -p "$dir"
  if [ "$(id -u)" = 0 ]; then chown postgres: "$dir"; fi

  # Reuse a server that still runs.
  if [ -f "$dir/port" ] && "${as[@]}" "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
    local port
    port="$(cat "$dir/port")"
    export WEIR_POSTGRES_URL="postgres://postgres@127.0.0.1:$port/weir?sslmode=disable"
    return 0
  fi

  if [ ! -f "$dir/data/PG_VERSION" ]; then
    "${as[@]}" "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 >"$dir/initdb.log" 2>&1 ||
      { cat "$dir/initdb.log" >&2; return 1; }
  fi

  local port
  port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null ||
    echo $((20000 + RANDOM % 20000)))"
  echo "$port" >"$dir/port"
  "${as[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start \
    -o "-h 127.0.0.1 -p $port -k $dir -c max_prepared_transactions=64 -c max_connections=200 -c fsync=off" >/dev/null ||
    { cat "$dir/server.log" >&2; return 1; }
  local i
  for i in $(seq 1 100); do
    "$bin/pg_isready" -q -h 127.0.0.1 -p "$port" && break
    sleep 0.1
  done
  "$bin/psql" -q -h 127.0.0.1 -p "$port" -U postgres -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'weir'" | grep -q 1 ||
    "$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres weir
  local pid
  pid="$(head -n 1 "$dir/data/postmaster.pid")"
  export WEIR_SERVICE_PIDS="${WEIR_SERVICE_PIDS:-} $pid"
  export WEIR_POSTGRES_URL="postgres://postgres@127.0.0.1:$port/weir?sslmode=disable"
}

weir_pg_main
unset -f weir_pg_main

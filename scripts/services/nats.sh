# shellcheck shell=bash
# Starts a NATS server with JetStream for the tests and exports
# WEIR_NATS_URL. Sourced by scripts/test.sh (see scripts/services/README.md);
# it can also be sourced on its own: `source scripts/services/nats.sh`.
#
# Debian's nats-server package is 2.9, older than the JetStream features
# the connector's tests use, so the server is built from its Go module with
# `go install` into $WEIR_SERVICES_DIR/nats/bin (once; later runs reuse the
# binary). It listens on 127.0.0.1 at a free port with JetStream storing
# under $WEIR_SERVICES_DIR/nats/js. Running it again while the server runs
# reuses that server.

weir_nats_main() {
  local dir="${WEIR_SERVICES_DIR:-$PWD/.services}/nats"
  local version="v2.15.2"
  local bin="$dir/bin/nats-server"
  mkdir -p "$dir/bin"

  if [ ! -x "$bin" ] || [ "$(cat "$dir/bin/version" 2>/dev/null)" != "$version" ]; then
    echo "nats.sh: building nats-server $version with go install" >&2
    GOBIN="$dir/bin" go install "github.com/nats-io/nats-server/v2@$version"
    echo "$version" >"$dir/bin/version"
  fi

  if [ -f "$dir/pid" ] && [ -f "$dir/port" ] && kill -0 "$(cat "$dir/pid")" 2>/dev/null; then
    export WEIR_NATS_URL="nats://127.0.0.1:$(cat "$dir/port")"
    return 0
  fi

  local port
  port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null ||
    echo $((20000 + RANDOM % 20000)))"
  rm -rf "$dir/js"
  "$bin" -a 127.0.0.1 -p "$port" -js -sd "$dir/js" >"$dir/server.log" 2>&1 &
  local pid=$!
  echo "$pid" >"$dir/pid"
  echo "$port" >"$dir/port"
  local i
  for i in $(seq 1 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
    if ! kill -0 "$pid" 2>/dev/null; then cat "$dir/server.log" >&2; return 1; fi
    sleep 0.1
  done
  export WEIR_SERVICE_PIDS="${WEIR_SERVICE_PIDS:-} $pid"
  export WEIR_NATS_URL="nats://127.0.0.1:$port"
}

weir_nats_main
unset -f weir_nats_main

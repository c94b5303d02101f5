#!/usr/bin/env bash
# Runs weir's whole test suite. It installs what the tests need first, so it
# works on a fresh machine with Go installed.
#
# Every step runs, even when an earlier one failed: a failure under load in
# one step must not hide the results of the others (the race detector runs
# last). Most of a step's time is tests waiting for events (checkpoints,
# worker processes, timers), not for the CPU: so the tests run four
# packages at a time, the pebble step beside them, and the two race
# detector steps beside each other. The set-up steps that do not share a lock run at the same time:
# the Debian packages (Chromium, then PostgreSQL; apt takes one lock), the
# Kafka broker's jars, the nats-server and versitygw builds, the Go modules
# and the browser test's npm packages. At the end a summary lists each
# step's result and time, and the script exits 1 if any step failed.
set -uo pipefail
cd "$(dirname "$0")/.."

export WEIR_SERVICES_DIR="${WEIR_SERVICES_DIR:-$PWD/.services}"
export WEIR_SERVICE_PIDS=""
export WEIR_REQUIRE_SERVICES=1
logs="$WEIR_SERVICES_DIR/setup"
mkdir -p "$logs"
rm -f "$logs"/*

stop_services() { for pid in $WEIR_SERVICE_PIDS; do kill "$pid" 2>/dev/null || true; done; }
trap stop_services EXIT

summary=()
failures=0

# record NAME STATUS SECONDS adds a line to the summary.
record() {
  summary+=("$(printf '%-7s %5ss  %s' "$2" "$3" "$1")")
  [ "$2" = ok ] || failures=$((failures + 1))
}

# step NAME CMD... runs CMD in the foreground and records how it went.
step() {
  local name=$1 start=$SECONDS status=ok
  shift
  echo "== $name"
  "$@" || status=FAILED
  record "$name" "$status" $((SECONDS - start))
}

# logged LOG CMD... runs CMD with its output in LOG.log, and writes its
# result and seconds to LOG.status.
logged() {
  local log=$1 start=$SECONDS status=ok
  shift
  "$@" >"$log.log" 2>&1 || status=FAILED
  echo "$status $((SECONDS - start))" >"$log.status"
}

# beside NAME CMD... starts CMD in the background as a step that runs
# beside the next foreground one; its output goes to a log of its own,
# which join_steps prints once it ended, and records how it went.
beside_names=()
beside_logs=()
beside_pids=()
beside_count=0
beside() {
  local name=$1 log="$logs/step-$beside_count"
  shift
  beside_count=$((beside_count + 1))
  echo "== $name (started, beside the next step; its output follows when it ends)"
  logged "$log" "$@" &
  beside_names+=("$name")
  beside_logs+=("$log")
  beside_pids+=($!)
}

join_steps() {
  local i log status seconds
  for i in "${!beside_pids[@]}"; do
    log=${beside_logs[$i]}
    wait "${beside_pids[$i]}"
    read -r status seconds <"$log.status" 2>/dev/null || { status=FAILED seconds=?; }
    echo "== ${beside_names[$i]} (ended: $status, ${seconds}s)"
    cat "$log.log"
    record "${beside_names[$i]}" "$status" "$seconds"
  done
  beside_names=()
  beside_logs=()
  beside_pids=()
}

# setup NAME FUNCTION starts FUNCTION in the background, its output in a log
# of its own; the services it starts write their variables to NAME.env (see
# export_service). finish_setup waits for them all and takes the variables.
setup_names=()
setup_pids=()
setup() {
  local name=$1 fn=$2
  (
    setup_env="$logs/$name.env"
    logged "$logs/$name" "$fn"
  ) &
  setup_names+=("$name")
  setup_pids+=($!)
}

finish_setup() {
  local i name status seconds
  for i in "${!setup_pids[@]}"; do
    name=${setup_names[$i]}
    wait "${setup_pids[$i]}"
    read -r status seconds <"$logs/$name.status" 2>/dev/null || { status=FAILED seconds=?; }
    echo "== set-up: $name ($status, ${seconds}s)"
    sed 's/^/   /' "$logs/$name.log"
    if [ -f "$logs/$name.env" ]; then
      local before=$WEIR_SERVICE_PIDS
      # shellcheck source=/dev/null
      source "$logs/$name.env"
      WEIR_SERVICE_PIDS="$before $WEIR_SERVICE_PIDS"
    fi
    record "set-up: $name" "$status" "$seconds"
  done
}

# export_service NAME sources scripts/services/NAME.sh in a set-up job and
# adds the variables it exported to the job's file, for the script's own
# shell.
export_service() {
  WEIR_SERVICE_PIDS=""
  # shellcheck source=/dev/null
  source "scripts/services/$1.sh" || return 1
  export -p | grep -E '^declare -x WEIR_' | sed 's/^declare -x /declare -gx /' >>"$setup_env"
}

# shellcheck source=scripts/services/apt.sh
source scripts/services/apt.sh

# The dashboard's browser test drives Debian's Chromium; PostgreSQL comes
# from Debian too. Both use apt, which allows one at a time.
debian() {
  if [ ! -x /usr/bin/chromium ] && [ -z "${CHROMIUM:-}" ]; then
    echo "installing Chromium (Debian package)"
    weir_apt_install chromium || return 1
  fi
  export_service postgres
}

modules() {
  go mod download || return 1
  if ! command -v node >/dev/null; then
    echo "the dashboard's browser test needs Node.js (node and npm) on PATH" >&2
    return 1
  fi
  npm ci --prefix cli/internal/web/uitest --no-audit --no-fund --loglevel=error
}

kafka() { export_service kafka; }
nats() { export_service nats; }
s3() { export_service s3; }

echo "== set-up (in parallel; each step's output follows when it ends)"
setup "Debian packages and PostgreSQL" debian
setup "Go modules and npm packages" modules
setup "Kafka broker" kafka
setup "nats-server" nats
setup "versitygw S3 server" s3
finish_setup

step "vet" go vet ./...
# The oracle's failure runs again, under the pebble state backend (their
# reference runs keep state in memory, so the outputs compare backends),
# the Nexmark queries against their hand-computed results, and the
# Nexmark SQL against the Go queries. -short: two failure schedules
# per oracle check (one for the fine-grained hang check) rather than the
# memory backend's ten above, to keep the suite within its time; this
# step and the race detector's -short one start past the schedules the
# tests step takes (1 to at most 20), so that every step tries schedules
# of its own.
pebble_tests() {
  local status=0 pid pids=()
  export WEIR_TEST_STATE_BACKEND=pebble WEIR_FIRST_SCHEDULE=21
  go test -count=1 -short -timeout 30m ./weirtest/ ./nexmark/queries/ &
  pids+=($!)
  go test -count=1 -run RescaleOracle . &
  pids+=($!)
  go test -count=1 -run NexmarkSQL ./sql/ &
  pids+=($!)
  for pid in "${pids[@]}"; do wait "$pid" || status=1; done
  return $status
}
beside "oracle harness, rescale oracle, Nexmark queries and Nexmark SQL under the pebble state backend" pebble_tests
# The packages that take longest are named first, so that they start
# first: go test starts packages in the order it is given them.
step "tests" go test -count=1 -timeout 30m -p 4 ./cli/ ./weirtest/ ./internal/cluster/ ./nexmark/queries/ ./sql/... ./...
join_steps
beside "race detector, -short, on the harness, engine, web and command line" \
  env WEIR_FIRST_SCHEDULE=24 go test -count=1 -timeout 30m -race -short ./weirtest/ ./cli/ ./internal/engine/ ./cli/internal/web/
# With the packages that share memory, the SQL join's append-only lists,
# which grow past the length a checkpoint encodes on another goroutine.
step "race detector on the packages that share memory between goroutines" \
  bash -c 'go test -count=1 -timeout 30m -race ./internal/cluster/ . ./internal/exchange/ ./internal/task/ ./internal/state/ ./internal/transport/ ./connectors/... && go test -count=1 -race -run TestAppendOnlySideListsGrowWhileCheckpointsEncodeThem ./sql/internal/exec/'
join_steps

echo "== summary"
printf '%s\n' "${summary[@]}"
if [ "$failures" -gt 0 ]; then
  echo "$failures of ${#summary[@]} steps failed"
  exit 1
fi
echo "all ${#summary[@]} steps passed"

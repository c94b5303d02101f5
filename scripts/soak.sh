#!/usr/bin/env bash
# A long correctness soak: the oracle harness with many schedules, many seeds
# of `weir run` with fine-grained failover and active standbys over keycount
# and the stateful Nexmark queries, and SIGKILLed workers on a cluster. It
# prints pass, fail, hang and panic counts per case and exits 1 if any run
# did not pass. It is not part of the test suite: it takes hours at the
# defaults.
#
# Usage: scripts/soak.sh [parts]
#   parts: any of oracle, run, cluster, coordinators (default: all)
# Env:
#   SCHEDULES  oracle schedules per case (WEIR_SCHEDULES, default 200)
#   SEEDS      seeds per `weir run` case and runs per cluster case (default 50)
#   FIRST      the first schedule and seed (default 1), so that a soak can
#              run in parts: SEEDS=10 FIRST=11 goes on after SEEDS=10
#   TIMEOUT    seconds a `weir run` may take before it counts as a hang and
#              gets SIGQUIT for a goroutine dump (default 300)
#   KEEP       a directory that keeps the log of every run that did not pass
#   WEIR       a weir binary to use instead of building this checkout
#
# A run passes when it exits 0 and its log has no panic; `weir run` cases use
# --verify, so the output is also compared with a failure-free run under the
# job's guarantee. A hang is a run still going after TIMEOUT seconds.
set -uo pipefail
cd "$(dirname "$0")/.."
parts=${*:-oracle run cluster coordinators}
schedules=${SCHEDULES:-200}; seeds=${SEEDS:-50}; limit=${TIMEOUT:-300}; first=${FIRST:-1}
last=$((first + seeds - 1))
tmp=$(mktemp -d)
pids=()
cleanup() { [ ${#pids[@]} -gt 0 ] && kill -9 "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
weir=${WEIR:-$tmp/weir}; [ -n "${WEIR:-}" ] || go build -o "$weir" ./cmd/weir || exit 1
[ -z "${KEEP:-}" ] || mkdir -p "$KEEP"

declare -A pass fail hang panics
cases=()
bad=0

# record CASE LOG RC: classify one run and keep its log if it did not pass.
record() {
  local c=$1 log=$2 rc=$3 kind
  [ -n "${pass[$c]+x}" ] || { cases+=("$c"); pass[$c]=0; fail[$c]=0; hang[$c]=0; panics[$c]=0; }
  if [ "$rc" = 124 ]; then kind=hang
  elif grep -q '^panic: \|fatal error: ' "$log"; then kind=panic
  elif [ "$rc" = 0 ]; then kind=pass
  else kind=fail
  fi
  case $kind in
    pass) pass[$c]=$((pass[$c] + 1)) ;;
    fail) fail[$c]=$((fail[$c] + 1)) ;;
    hang) hang[$c]=$((hang[$c] + 1)) ;;
    panic) panics[$c]=$((panics[$c] + 1)) ;;
  esac
  if [ "$kind" != pass ]; then
    bad=1
    echo "soak: $c: $kind (exit $rc)$( [ -n "${KEEP:-}" ] && echo ", log in $KEEP/$(basename "$log")")" >&2
    [ -z "${KEEP:-}" ] || cp "$log" "$KEEP/"
  fi
}

# runcase CASE SEED ARGS...: one `weir run` with a hang limit.
runcase() {
  local c=$1 seed=$2; shift 2
  local log="$tmp/${c//[^a-z0-9-]/_}-$seed.log" out="$tmp/out"
  rm -rf "$out"
  timeout --signal=QUIT --kill-after=20 "$limit" "$weir" run "$@" --failure-seed "$seed" \
    --output "$out" --verify --progress off >"$log" 2>&1
  record "$c" "$log" $?
}

oracle() {
  # Each top-level oracle test is one case; a test's schedules all pass or it fails.
  local log="$tmp/oracle.log"
  WEIR_SCHEDULES=$schedules WEIR_FIRST_SCHEDULE=$first timeout --signal=QUIT --kill-after=60 $((limit * 40)) \
    go test -count=1 -timeout 0 -v -run 'TestOracle' ./weirtest/ >"$log" 2>&1
  local rc=$?
  local t
  for t in $(grep -oE '^--- (PASS|FAIL): TestOracle[^ ]*' "$log" | awk '{print $3}' | grep -v / | sort -u); do
    if grep -q "^--- FAIL: $t " "$log"; then record "oracle $t" "$log" 1; else record "oracle $t" "$log" 0; fi
  done
  [ "$rc" = 124 ] && record "oracle (whole run)" "$log" 124
  grep -q '^panic: ' "$log" && record "oracle (whole run)" "$log" 2
}

run() {
  local s ft="--guarantee exactly-once --failover fine-grained"
  for s in $(seq "$first" "$last"); do
    runcase "keycount fine-grained" "$s" keycount --events 3000000 --keys 3000 --seed 13 -p 4 $ft \
      --checkpoint-interval 200ms --inject-failures 3
    runcase "keycount active-standby" "$s" keycount --events 1500000 --rate 1000000 --keys 1000 -p 2 $ft \
      --active-standby --chaining=false --checkpoint-interval 100ms --inject-failures 4
    local q
    for q in q4 q5 q8 q11 q18 q20; do
      runcase "nexmark $q fine-grained" "$s" nexmark --query "$q" --events 1000000 -p 3 $ft \
        --checkpoint-interval 100ms --inject-failures 4
      runcase "nexmark $q active-standby" "$s" nexmark --query "$q" --events 1000000 -p 2 $ft \
        --active-standby --chaining=false --checkpoint-interval 100ms --inject-failures 4
    done
  done
}

# free_port: a loopback port nothing answers on.
free_port() {
  local p
  while :; do
    p=$((20000 + RANDOM % 40000))
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
  done
}

# wait_line FILE PATTERN PID: wait until FILE has a line matching PATTERN;
# fail when process PID ends first.
wait_line() {
  while kill -0 "$3" 2>/dev/null; do
    grep -q "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

# cluster_run CASE SEED FAILOVER: a cluster of three workers runs keycount;
# a random worker is SIGKILLed after a random number of completed
# checkpoints and started again; the output must equal a local failure-free run.
cluster_run() {
  local c=$1 seed=$2 failover=$3 dir="$tmp/cluster" port
  rm -rf "$dir"; mkdir -p "$dir"
  local job=(keycount --events 4000000 --rate 1000000 --keys 2000 --seed "$seed" -p 4
    --guarantee exactly-once --failover "$failover" --checkpoint-interval 200ms --log-checkpoints)
  [ -s "$tmp/ref-$seed.sorted" ] || {
    "$weir" run "${job[@]}" --output "$dir/ref" --progress off >/dev/null 2>&1
    cat "$dir"/ref/part-*.jsonl | sort >"$tmp/ref-$seed.sorted"
  }
  port=$(free_port)
  local log="$dir/cluster.log" cpids=()
  "$weir" coordinator --listen "127.0.0.1:$port" --state-dir "$dir/state" >"$dir/coordinator.log" 2>&1 &
  cpids+=($!)
  wait_line "$dir/coordinator.log" "listening on" "${cpids[0]}" || { record "$c" "$dir/coordinator.log" 1; return; }
  local w
  for w in 1 2 3; do
    "$weir" worker --coordinator "127.0.0.1:$port" --id "w$w" --slots 2 >"$dir/w$w.log" 2>&1 &
    cpids+=($!)
  done
  pids+=("${cpids[@]}")
  timeout --signal=QUIT "$limit" "$weir" submit --coordinator "127.0.0.1:$port" "${job[@]}" \
    --output "$dir/out" --wait >"$dir/submit.log" 2>&1 &
  local submit=$!
  local victim=$((1 + RANDOM % 3)) after=$((1 + RANDOM % 4))
  local killed=0
  if wait_line "$dir/coordinator.log" ": checkpoint $after completed" "$submit"; then
    kill -9 "${cpids[$victim]}"
    echo "soak: killed worker w$victim after checkpoint $after" >>"$dir/submit.log"
    killed=1
    "$weir" worker --coordinator "127.0.0.1:$port" --id "w$victim" --slots 2 >>"$dir/w$victim.log" 2>&1 &
    cpids+=($!); pids+=($!)
  fi
  wait "$submit"
  local rc=$?
  if [ "$rc" = 0 ] && [ "$killed" = 0 ]; then
    echo "soak: the job finished before checkpoint $after completed: no worker was killed" >>"$dir/submit.log"
    rc=3
  fi
  if [ "$rc" = 0 ] && ! diff -q <(cat "$dir"/out/part-*.jsonl 2>/dev/null | sort) "$tmp/ref-$seed.sorted" >/dev/null; then
    echo "output differs from the failure-free run" >>"$dir/submit.log"
    rc=1
  fi
  kill -9 "${cpids[@]}" 2>/dev/null; wait "${cpids[@]}" 2>/dev/null
  cat "$dir"/*.log >"$tmp/${c// /_}-$seed.log"
  record "$c" "$tmp/${c// /_}-$seed.log" "$rc"
}

cluster() {
  local s
  for s in $(seq "$first" "$last"); do
    cluster_run "cluster kill global" "$s" global
    cluster_run "cluster kill fine-grained" "$s" fine-grained
  done
}

# coordinators: two coordinators on one checkpoint store (a deposed
# coordinator and its successor); the process test asserts that the output
# is exact and that the deposed one committed nothing.
coordinators() {
  local s log
  for s in $(seq "$first" "$last"); do
    log="$tmp/coordinators-$s.log"
    timeout --signal=QUIT --kill-after=20 "$limit" \
      go test -count=1 -run 'TestClusterASupersededCoordinatorCommitsNothing' ./cli/ >"$log" 2>&1
    local rc=$?
    ! grep -q 'no tests to run' "$log" || rc=1 # no such test: not a pass
    record "two coordinators" "$log" "$rc"
  done
}

for p in $parts; do
  echo "soak: $p" >&2
  $p
done

printf '%-34s %6s %6s %6s %6s\n' case pass fail hang panic
for c in "${cases[@]}"; do
  printf '%-34s %6d %6d %6d %6d\n' "$c" "${pass[$c]}" "${fail[$c]}" "${hang[$c]}" "${panics[$c]}"
done
exit $bad

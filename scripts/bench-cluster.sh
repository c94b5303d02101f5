#!/usr/bin/env bash
# Measures cluster mode on this machine:
#  1. a Nexmark query embedded (weir run) vs on 2 worker processes
#     (events per CPU-second of all processes involved);
#  2. recovery after a worker is killed with SIGKILL: detection (kill to
#     "worker lost") and restore to first output (the job's recovery time,
#     measured at heartbeat resolution).
# Usage: scripts/bench-cluster.sh [runs] [query] [events]
# KEYS and WINDOW set the keycount keys and window of the recovery runs
# (the state size; defaults 100000 and 1s), EVENTS its events (default
# 30000000), KILL_AT the checkpoint after
# which the worker is killed (default 4); STANDBY=1 makes the spare worker
# a passive standby; RECOVERY_ONLY=1 skips the throughput runs,
# THROUGHPUT_ONLY=1 the recovery runs. WEIR names a weir binary to run
# instead of building one; WORKER_FLAGS adds flags to every worker (e.g.
# "--exchange-compression lz4"); CPUS sets each worker's --cpus (default:
# half the machine's cores, as the two workers share it; 0: every core);
# PROFILE=DIR writes the workers' CPU
# profiles of the throughput runs there (w1-RUN.pprof, w2-RUN.pprof).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}; query=${2:-q5}; events=${3:-20000000}
tmp=$(mktemp -d); trap 'pkill -P $$ 2>/dev/null || true; rm -rf "$tmp"' EXIT
if [ -n "${WEIR:-}" ]; then weir=$WEIR; else go build -o "$tmp/weir" ./cmd/weir; weir="$tmp/weir"; fi
read -r -a wflags <<<"${WORKER_FLAGS:-}"
cpus=${CPUS:-$(( $(nproc) / 2 > 0 ? $(nproc) / 2 : 1 ))}
wflags+=(--cpus "$cpus")
hz=$(getconf CLK_TCK)
# cpu PID...: user+system seconds of the processes so far
cpu() { local t=0; for p in "$@"; do t=$((t + $(awk '{print $14+$15}' "/proc/$p/stat"))); done; echo "scale=3; $t/$hz" | bc; }
job=(nexmark --query "$query" --events "$events" -p 2 --guarantee exactly-once --checkpoint-interval 1s)

start_cluster() { # sets coord, w1, w2, addr; $1, $2: extra flags of w1, w2
  local f1=() f2=(); [ -n "${1:-}" ] && f1=("$1"); [ -n "${2:-}" ] && f2=("$2")
  rm -rf "$tmp/store" "$tmp"/*.log
  "$weir" coordinator --listen 127.0.0.1:0 --state-dir "$tmp/store" --heartbeat-interval 100ms >"$tmp/coord.log" 2>&1 & coord=$!
  until addr=$(grep -o 'listening on [^,]*' "$tmp/coord.log" | cut -d' ' -f3) && [ -n "$addr" ]; do sleep 0.05; done
  "$weir" worker --coordinator "$addr" --slots 1 --id w1 "${wflags[@]}" "${f1[@]}" >"$tmp/w1.log" 2>&1 & w1=$!
  "$weir" worker --coordinator "$addr" --slots 1 --id w2 "${wflags[@]}" "${f2[@]}" >"$tmp/w2.log" 2>&1 & w2=$!
  until grep -q "w2 joined" "$tmp/coord.log" && grep -q "w1 joined" "$tmp/coord.log"; do sleep 0.05; done
}
stop_cluster() { kill $coord $w1 $w2 2>/dev/null || true; wait $coord $w1 $w2 2>/dev/null || true; }

keys=${KEYS:-100000}
if [ -z "${RECOVERY_ONLY:-}" ]; then
echo "== throughput: $query, $events events, parallelism 2, exactly-once, checkpoints every 1s"
for i in $(seq "$runs"); do
  rm -rf "$tmp/out"
  /usr/bin/time -f "%e %U %S" -o "$tmp/time" "$weir" run "${job[@]}" --output "$tmp/out" --progress off 2>/dev/null
  read -r wall usr sys <"$tmp/time"
  emb=$(echo "scale=0; $events/($usr+$sys)" | bc)
  if [ -n "${PROFILE:-}" ]; then
    mkdir -p "$PROFILE"
    start_cluster "--cpuprofile=$PROFILE/w1-$i.pprof" "--cpuprofile=$PROFILE/w2-$i.pprof"
  else
    start_cluster
  fi
  rm -rf "$tmp/out"
  before=$(cpu $coord $w1 $w2); t0=$(date +%s.%N)
  "$weir" submit --coordinator "$addr" "${job[@]}" --output "$tmp/out" --wait >/dev/null 2>&1
  t1=$(date +%s.%N); after=$(cpu $coord $w1 $w2)
  stop_cluster
  cl=$(echo "scale=0; $events/($after-$before)" | bc)
  printf "run %d: embedded %s events/CPU-s (%.2fs wall), cluster %s events/CPU-s (%.2fs wall)\n" "$i" "$emb" "$wall" "$cl" "$(echo "$t1-$t0" | bc)"
  grep -ho "data plane sent .*" "$tmp/w1.log" "$tmp/w2.log" | sed 's/^/    /' || true
done

fi
[ -n "${THROUGHPUT_ONLY:-}" ] && exit 0

echo "== recovery after a worker kill: keycount at 2M events/s, exactly-once, checkpoints every 500ms"
for i in $(seq "$runs"); do
  start_cluster
  standby=(); [ -n "${STANDBY:-}" ] && standby=(--standby)
  "$weir" worker --coordinator "$addr" --slots 1 --id w3 "${standby[@]}" >"$tmp/w3.log" 2>&1 & w3=$!
  until grep -q "w3 joined" "$tmp/coord.log"; do sleep 0.05; done
  rm -rf "$tmp/out"
  "$weir" submit --coordinator "$addr" keycount --events "${EVENTS:-30000000}" --keys "$keys" --window "${WINDOW:-1s}" --rate 2000000 -p 2 --guarantee exactly-once \
    --checkpoint-interval 500ms --log-checkpoints --output "$tmp/out" --wait >"$tmp/submit.log" 2>&1 & sub=$!
  kill_at=${KILL_AT:-4}
  until grep -q "checkpoint $kill_at completed" "$tmp/coord.log"; do
    grep -q "keycount-1 \(failed\|finished\)" "$tmp/coord.log" && { echo "the job ended before checkpoint $kill_at"; exit 1; }
    sleep 0.01
  done
  killed=$(date +%s.%N); kill -9 $w1
  wait $sub || true
  lost=$(grep "worker w1 lost" "$tmp/coord.log" | head -1 | awk '{print $3}')
  lost_s=$(date -d "$(date +%F) $lost" +%s.%N)
  detect=$(echo "($lost_s-$killed)*1000" | bc)
  rec=$(grep -o "first output [^ ]* after" "$tmp/submit.log" | head -1 | cut -d' ' -f3)
  size=$(grep -o "checkpoint $kill_at completed in [^,]*, [0-9]* bytes" "$tmp/coord.log" | head -1 | awk '{print $(NF-1)}')
  running=$(grep -h "running: restored" "$tmp/w2.log" "$tmp/w3.log" | awk '{print $3}' | sort | tail -1)
  restore=$(echo "($(date -d "$(date +%F) $running" +%s.%N)-$lost_s)*1000" | bc)
  printf "run %d: state %s bytes; detection %.0f ms; lost to restored and running %.0f ms; failure to first output %s\n" \
    "$i" "$size" "$detect" "$restore" "$rec"
  grep -ho "restored [0-9]* bytes of state.* in [0-9.]*m\?s" "$tmp/w2.log" "$tmp/w3.log" | sed 's/^/    /' || true
  kill $w3 2>/dev/null || true; wait $w3 2>/dev/null || true
  stop_cluster
done

#!/usr/bin/env bash
# Measures cluster mode on this machine:
#  1. a Nexmark query embedded (weir run) vs on 2 worker processes
#     (events per CPU-second of all processes involved);
#  2. recovery after a worker is killed with SIGKILL: detection (kill to
#     "worker lost") and restore to first output (the job's recovery time,
#     measured at heartbeat resolution).
# Usage: scripts/bench-cluster.sh [runs] [query] [events]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}; query=${2:-q5}; events=${3:-20000000}
tmp=$(mktemp -d); trap 'pkill -P $$ 2>/dev/null || true; rm -rf "$tmp"' EXIT
go build -o "$tmp/weir" ./cmd/weir
weir="$tmp/weir"
hz=$(getconf CLK_TCK)
# cpu PID...: user+system seconds of the processes so far
cpu() { local t=0; for p in "$@"; do t=$((t + $(awk '{print $14+$15}' "/proc/$p/stat"))); done; echo "scale=3; $t/$hz" | bc; }
job=(nexmark --query "$query" --events "$events" -p 2 --guarantee exactly-once --checkpoint-interval 1s)

start_cluster() { # sets coord, w1, w2, addr
  rm -rf "$tmp/store"
  "$weir" coordinator --listen 127.0.0.1:0 --state-dir "$tmp/store" --heartbeat-interval 100ms >"$tmp/coord.log" 2>&1 & coord=$!
  until addr=$(grep -o 'listening on [^,]*' "$tmp/coord.log" | cut -d' ' -f3) && [ -n "$addr" ]; do sleep 0.05; done
  "$weir" worker --coordinator "$addr" --slots 1 --id w1 >"$tmp/w1.log" 2>&1 & w1=$!
  "$weir" worker --coordinator "$addr" --slots 1 --id w2 >"$tmp/w2.log" 2>&1 & w2=$!
  until grep -q "w2 joined" "$tmp/coord.log" && grep -q "w1 joined" "$tmp/coord.log"; do sleep 0.05; done
}
stop_cluster() { kill $coord $w1 $w2 2>/dev/null || true; wait $coord $w1 $w2 2>/dev/null || true; }

echo "== throughput: $query, $events events, parallelism 2, exactly-once, checkpoints every 1s"
for i in $(seq "$runs"); do
  rm -rf "$tmp/out"
  /usr/bin/time -f "%e %U %S" -o "$tmp/time" "$weir" run "${job[@]}" --output "$tmp/out" --progress off 2>/dev/null
  read -r wall usr sys <"$tmp/time"
  emb=$(echo "scale=0; $events/($usr+$sys)" | bc)
  start_cluster
  rm -rf "$tmp/out"
  before=$(cpu $coord $w1 $w2); t0=$(date +%s.%N)
  "$weir" submit --coordinator "$addr" "${job[@]}" --output "$tmp/out" --wait >/dev/null 2>&1
  t1=$(date +%s.%N); after=$(cpu $coord $w1 $w2)
  stop_cluster
  cl=$(echo "scale=0; $events/($after-$before)" | bc)
  printf "run %d: embedded %s events/CPU-s (%.2fs wall), cluster %s events/CPU-s (%.2fs wall)\n" "$i" "$emb" "$wall" "$cl" "$(echo "$t1-$t0" | bc)"
done

echo "== recovery after a worker kill: keycount at 2M events/s, exactly-once, checkpoints every 500ms"
for i in $(seq "$runs"); do
  start_cluster
  "$weir" worker --coordinator "$addr" --slots 1 --id w3 >"$tmp/w3.log" 2>&1 & w3=$!
  until grep -q "w3 joined" "$tmp/coord.log"; do sleep 0.05; done
  rm -rf "$tmp/out"
  "$weir" submit --coordinator "$addr" keycount --events 30000000 --keys 100000 --rate 2000000 -p 2 --guarantee exactly-once \
    --checkpoint-interval 500ms --log-checkpoints --output "$tmp/out" --wait >"$tmp/submit.log" 2>&1 & sub=$!
  until grep -q "checkpoint 4 completed" "$tmp/coord.log"; do sleep 0.01; done
  killed=$(date +%s.%N); kill -9 $w1
  wait $sub || true
  lost=$(grep "worker w1 lost" "$tmp/coord.log" | head -1 | awk '{print $3}')
  lost_s=$(date -d "$(date +%F) $lost" +%s.%N)
  detect=$(echo "($lost_s-$killed)*1000" | bc)
  rec=$(grep -o "first output [^ ]* after" "$tmp/submit.log" | head -1 | cut -d' ' -f3)
  size=$(grep -o "checkpoint 4 completed in [^,]*, [0-9]* bytes" "$tmp/coord.log" | head -1 | awk '{print $(NF-1), "bytes of state"}')
  printf "run %d: detection %.0f ms, failure to first output %s (%s)\n" "$i" "$detect" "$rec" "$size"
  kill $w3 2>/dev/null || true; wait $w3 2>/dev/null || true
  stop_cluster
done

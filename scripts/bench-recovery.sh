#!/usr/bin/env bash
# Recovery after a worker is killed with SIGKILL, by state size and mode.
# Usage: scripts/bench-recovery.sh [runs] [state MB] [modes]
#   modes: any of global, standby, fine-grained, fine-grained-standby,
#   active-standby (fine-grained with active standbys and --chaining=false,
#   so that the window task has a standby; default: all five); the runs go round-robin over the modes, so load
#   from other work falls on all of them alike.
# Each run starts a coordinator and workers w1, w2, w3 (one slot each; w3 a
# passive standby in the standby modes), submits keycount with parallelism 2 and
# one 1 h window over keys drawn from 10^18 (nearly every event a new key,
# so the window state grows with the input), kills w1 with SIGKILL once a
# completed checkpoint holds at least the given MB (in the standby modes,
# once the standby has loaded the latest completed one), samples the job
# until POST seconds after a checkpoint after the failure completed (so
# every task runs again) and the restarted source read past its position
# at the kill, then cancels it (the window never fires, so there is no output).
# Env: RATE (events/s, default 250000), KEYS (default 10^18), POST (s,
# default 3), FIT (s before the kill the rate is taken from, default 2),
# TIMEOUT (s to reach the size, and to recover; default 480), WEIR (a weir
# binary to use instead of building this checkout), KEEP (a directory that
# receives each run's logs and samples).
# Reported per run: detection (kill to "worker lost"), lost to the last
# worker line "running: restored" (global, standby) or "running:
# restarted" (fine-grained: only w1's subtasks restart, on w3), each
# logged once the tasks decoded their state, and with active standbys the
# line "took their place" of the promoted standbys; the longest pause of the
# keyed subtask that ran on w1 (its key groups failed) and of the one on
# w2 (unaffected key groups): the longest time between two samples at
# which its records in had changed, from 1 s before the kill to 1 s after
# recovery (and, as the sampling's resolution, the longest such time of
# the one on w2 in the FIT s before the kill); and records not processed
#   D = sum over source subtasks i of R_i*(t - t_kill) - (P_i(t) - P_i,kill),
# the input the sources would have read since the kill at the rate R_i
# they read before it, less what they read beyond their position at the
# kill (so replayed records count), also as time at the total rate. P_i is
# source subtask i's position: before the kill its records read (weir
# status, sampled every 100 ms, line fitted over the FIT s before the
# kill); after it, for a subtask that restarted, the restored checkpoint's
# position of it (read from the store) plus the records it read since,
# and for one that ran on, its records read. D is averaged over the
# samples from 1 s after recovery (both conditions above) to the end
# (POST - 1 s).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}; mb=${2:-10}; modes=${3:-global standby fine-grained fine-grained-standby active-standby}
rate=${RATE:-250000}; keys=${KEYS:-1000000000000000000}; post=${POST:-3}; timeout=${TIMEOUT:-480}
kill_bytes=$((mb * 1000000))
tmp=$(mktemp -d)
pids=()
cleanup() { [ ${#pids[@]} -gt 0 ] && kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
weir=${WEIR:-$tmp/weir}; [ -n "${WEIR:-}" ] || go build -o "$weir" ./cmd/weir
now() { date +%s.%N; }
at() { date -d "$(date +%F) $1" +%s.%N; } # HH:MM:SS.mmm of a log line today
hwm() { awk '/VmHWM/ {printf "%.1f", $2/1048576}' "/proc/$1/status" 2>/dev/null || echo "?"; }

# positions DIR: records each source subtask of a checkpoint had read, as
# "p0 p1", from their subtask snapshots (a position section: kind 2,
# uvarint id, uvarint length, then the generator's uvarint index of its
# next event, subtask + p*read).
positions() {
  local f p s pos out=(0 0)
  p=$(ls "$1/state" | awk -F- '{print $2}' | sort -n | tail -1); p=$((p + 1))
  for f in "$1"/state/*; do
    s=${f##*-}
    pos=$(head -c 32 "$f" 2>/dev/null | od -An -tu1 -v | tr -s ' \n' '\n' | awk 'NF {b[n++]=$1} END {
      if (n == 0 || b[0] != 2) exit; i = 1
      while (b[i] >= 128) i++; i++; while (b[i] >= 128) i++; i++
      v = 0; m = 1; while (1) { v += (b[i] % 128) * m; if (b[i] < 128) break; m *= 128; i++ }
      printf "%d", v }')
    [ -n "$pos" ] && out[$s]=$(((pos - s) / p))
  done
  echo "${out[0]} ${out[1]}"
}

# counters: the records in of source subtasks 0.0 and 0.1 and keyed
# subtasks 1.0 and 1.1 from weir status (-1: not reported).
counters() {
  awk 'BEGIN { c["0.0"] = c["0.1"] = c["1.0"] = c["1.1"] = -1 }
    $1 == "subtask" && $5 == "in" { sub(/,/, "", $6); c[$2] = $6 }
    END { if (c["0.0"] != -1 || c["0.1"] != -1) print c["0.0"], c["0.1"], c["1.0"], c["1.1"] }'
}

run() { # mode run
  local mode=$1 i=$2 standby=() failover=() ck killed lost running need=2
  rm -rf "$tmp/store" "$tmp"/*.log "$tmp/samples"
  case $mode in standby|fine-grained-standby) standby=(--standby) ;; esac
  case $mode in fine-grained*) failover=(--failover fine-grained --retain-limit 4294967296); need=1 ;; esac
  case $mode in active-standby) failover=(--failover fine-grained --retain-limit 4294967296 --active-standby --chaining=false); need=2 ;; esac
  "$weir" coordinator --listen 127.0.0.1:0 --state-dir "$tmp/store" --heartbeat-interval 100ms >"$tmp/coord.log" 2>&1 & coord=$!
  until addr=$(grep -o 'listening on [^,]*' "$tmp/coord.log" | cut -d' ' -f3) && [ -n "$addr" ]; do sleep 0.05; done
  "$weir" worker --coordinator "$addr" --slots 1 --id w1 >"$tmp/w1.log" 2>&1 & w1=$!
  "$weir" worker --coordinator "$addr" --slots 1 --id w2 >"$tmp/w2.log" 2>&1 & w2=$!
  "$weir" worker --coordinator "$addr" --slots 1 --id w3 "${standby[@]}" >"$tmp/w3.log" 2>&1 & w3=$!
  pids=($coord $w1 $w2 $w3)
  until grep -q "w1 joined" "$tmp/coord.log" && grep -q "w2 joined" "$tmp/coord.log" && grep -q "w3 joined" "$tmp/coord.log"; do sleep 0.05; done
  "$weir" submit --coordinator "$addr" keycount --events 100000000000 --keys "$keys" --window 1h --rate "$rate" -p 2 \
    --guarantee exactly-once --checkpoint-interval 500ms --log-checkpoints "${failover[@]}" --output "$tmp/out" --wait >"$tmp/submit.log" 2>&1 & sub=$!
  while :; do # every 100 ms: time and the counters of the subtasks where they run now
    t=$(now); r=$("$weir" status --coordinator "$addr" keycount-1 2>/dev/null | counters) || true
    [ -n "$r" ] && echo "$t $r" >>"$tmp/samples"; sleep 0.1
  done & sampler=$!
  pids+=($sub $sampler)
  local start; start=$(now)
  until ck=$(awk -v b="$kill_bytes" '/completed in/ && $(NF-1) >= b {print $5, $(NF-1); exit}' "$tmp/coord.log") && [ -n "$ck" ]; do
    if grep -q "keycount-1 \(failed\|finished\)\|failure 1:" "$tmp/coord.log" || [ "$(echo "$(now) - $start > $timeout" | bc)" = 1 ]; then
      echo "run $i $mode: no checkpoint of $mb MB after $(echo "$(now) - $start" | bc | cut -d. -f1) s; largest: $(grep -o '[0-9]* bytes' "$tmp/coord.log" | sort -n | tail -1); peak RSS GiB w1 $(hwm $w1) w2 $(hwm $w2) w3 $(hwm $w3); load $(cut -d' ' -f1-3 /proc/loadavg)"
      grep "failure 1:\|lost:" "$tmp/coord.log" | head -2 | sed 's/^/    /'
      kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; pids=()
      [ -z "${KEEP:-}" ] || { mkdir -p "$KEEP/$mb-$mode-$i" && cp "$tmp"/*.log "$tmp/samples" "$KEEP/$mb-$mode-$i/"; }
      return
    fi
    sleep 0.01
  done
  while [[ $mode == standby || $mode == fine-grained-standby ]]; do # kill once the standby holds the latest completed checkpoint
    ck=$(awk '/completed in/ {c = $5 " " $(NF-1)} END {print c}' "$tmp/coord.log")
    grep -q "standby: loaded checkpoint ${ck% *} of" "$tmp/w3.log" && break
    [ "$(echo "$(now) - $start > $timeout" | bc)" = 1 ] && { echo "run $i $mode: the standby did not load checkpoint ${ck% *}"; break; }
    sleep 0.01
  done
  local w1hwm pre past=""; w1hwm=$(hwm $w1); pre=$(tail -1 "$tmp/samples" | cut -d' ' -f2)
  killed=$(now); kill -9 $w1
  local pck; pck=$(positions "$tmp/store/jobs/keycount-1/chk-$(printf %012d "${ck% *}")") # before newer ones replace it
  until [ "$(grep -h "running: re\|took their place" "$tmp/w2.log" "$tmp/w3.log" | wc -l)" -ge $need ]; do
    grep -q "keycount-1 failed" "$tmp/coord.log" && break; sleep 0.05
  done
  running=$(grep -h "running: re\|took their place" "$tmp/w2.log" "$tmp/w3.log" | awk '{print $3}' | sort | tail -1)
  while :; do # until a checkpoint after the failure completed (every task runs) and the restarted source is past its kill position, then POST s more
    [ -z "$past" ] && [ "$(tail -1 "$tmp/samples" | cut -d' ' -f2)" -ge 0 ] && [ $((${pck% *} + $(tail -1 "$tmp/samples" | cut -d' ' -f2))) -gt "$pre" ] &&
      awk '/failure 1:/ {f = 1} f && /completed in/ {ok = 1} END {exit !ok}' "$tmp/coord.log" && past=$(now)
    [ -n "$past" ] && [ "$(echo "$(now) - $past > $post" | bc)" = 1 ] && break
    [ "$(echo "$(now) - $killed > $timeout" | bc)" = 1 ] && { echo "run $i $mode: not recovered after $timeout s"; break; }
    grep -q "keycount-1 failed" "$tmp/coord.log" && { echo "run $i $mode: the job failed"; break; }
    sleep 0.1
  done
  local w2hwm w3hwm; w2hwm=$(hwm $w2); w3hwm=$(hwm $w3)
  kill $sampler; wait $sampler 2>/dev/null || true
  "$weir" cancel --coordinator "$addr" keycount-1 >/dev/null 2>&1 || true
  wait $sub 2>/dev/null || true
  local from; from=$(grep -o 'from checkpoint [0-9]*' "$tmp/coord.log" | head -1 | awk '{print $3}')
  [ "$from" = "${ck% *}" ] || echo "    restored checkpoint $from, not ${ck% *}: not processed is wrong"
  lost=$(at "$(grep "worker w1 lost" "$tmp/coord.log" | head -1 | awk '{print $3}')")
  running=$(at "$running")
  awk -v fit="${FIT:-2}" -v k="$killed" -v l="$lost" -v r="$running" -v past="${past:-0}" -v pck="$pck" -v ck="$ck" -v i="$i" -v m="$mode" '
    # pause(c, from, to): the longest time between two samples at which column c changed, between from and to
    function pause(c, from, to,  j, prev, last, g) { last = ""; g = 0
      for (j = 0; j < n; j++) { if (t[j] < from || t[j] > to) continue
        if (last == "" || (v[j, c] != prev && v[j, c] >= 0)) { if (last != "" && t[j] - last > g) g = t[j] - last; last = t[j] }
        prev = v[j, c] }
      return g }
    { t[n] = $1 - k; for (c = 2; c <= 5; c++) v[n, c] = $c; n++ }   # seconds since the kill
    END {
      split(pck, p0, " "); split(ck, cp, " ")
      for (s = 0; s < 2; s++) {                                              # per source subtask: line through the FIT s before the kill
        sn = st = sx = stt = stx = 0
        for (j = 0; j < n; j++) if (t[j] < 0 && t[j] >= -fit && v[j, 2+s] >= 0) { sn++; st += t[j]; sx += v[j, 2+s]; stt += t[j]*t[j]; stx += t[j]*v[j, 2+s] }
        R[s] = (sn*stx - st*sx) / (sn*stt - st*st); pk[s] = (sx - R[s]*st)/sn
        re[s] = m !~ /^(fine-grained|active)/ || s == 0                             # restarted: from the checkpoint, counting anew
      }
      lo = past > 0 ? past - k + 1 : t[n-1] - 2; hi = past > 0 ? past - k + 1 : t[n-1]
      for (j = 0; j < n; j++) if (t[j] >= lo && v[j, 2] >= 0 && v[j, 3] >= 0) { # from 1 s after recovery on
        an++; for (s = 0; s < 2; s++) d += R[s]*t[j] - ((re[s] ? p0[s+1] : 0) + v[j, 2+s] - pk[s]) }
      rate = R[0] + R[1]
      printf "run %d %s: checkpoint %d, %.0f bytes; detection %.0f ms; lost to running %.0f ms; pause failed %.0f ms, unaffected %.0f ms, before the kill %.0f ms; rate %.0f/s; replayed %.0f; not processed %.0f = %.0f ms at the rate (%d samples)\n",
        i, m, cp[1], cp[2], (l-k)*1000, (r-l)*1000, pause(4, -1, hi)*1000, pause(5, -1, hi)*1000, pause(5, -fit, 0)*1000, rate, pk[0] - p0[1] + (re[1] ? pk[1] - p0[2] : 0), d/an, d/an/rate*1000, an }' "$tmp/samples" | tee -a "$tmp/results"
  echo "    load $(cut -d' ' -f1-3 /proc/loadavg); peak RSS GiB w1 $w1hwm w2 $w2hwm w3 $w3hwm; $(grep -o 'recovery 1: .*; cause' "$tmp/submit.log" | head -1 | sed 's/; cause//')"
  grep -ho "re[a-z]* [0-9]* [a-z ]*bytes of state.* in [0-9.]*m\?s" "$tmp/w2.log" "$tmp/w3.log" | sed 's/^/    /' || true
  kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; pids=()
  [ -z "${KEEP:-}" ] || { mkdir -p "$KEEP/$mb-$mode-$i" && cp "$tmp"/*.log "$tmp/samples" "$KEEP/$mb-$mode-$i/"; }
}

echo "== recovery by state size: keycount, $mb MB target, rate $rate/s, exactly-once, checkpoints every 500ms, heartbeats 100ms"
for i in $(seq "$runs"); do for m in $modes; do run "$m" "$i"; done; done
echo "== medians (range) per mode"
for m in $modes; do
  grep " $m: " "$tmp/results" 2>/dev/null | awk -v m="$m" '
    function med(a, n, f,  s, j, k, t) { if (f == "") f = "%.0f"; for (j = 1; j <= n; j++) s[j] = a[j]; for (j = 1; j <= n; j++) for (k = j+1; k <= n; k++) if (s[k] < s[j]) { t = s[j]; s[j] = s[k]; s[k] = t }
      return sprintf(f " (" f "-" f ")", n % 2 ? s[(n+1)/2] : (s[n/2]+s[n/2+1])/2, s[1], s[n]) }
    { n++; for (f = 1; f <= NF; f++) { if ($f == "checkpoint") b[n] = $(f+2)/1e6; if ($f == "detection") d[n] = $(f+1); if ($f == "running") r[n] = $(f+1); if ($f == "=") g[n] = $(f+1); if ($f == "not") p[n] = $(f+2)
      if ($f == "failed") pf[n] = $(f+1); if ($f == "unaffected") pu[n] = $(f+1); if ($f == "kill") pb[n] = $(f+1) } }
    END { if (n) printf "%s: %d runs; state MB %s; detection ms %s; lost to running ms %s; pause failed ms %s, unaffected ms %s, before the kill ms %s; not processed %s = ms %s\n", m, n, med(b, n, "%.1f"), med(d, n), med(r, n), med(pf, n), med(pu, n), med(pb, n), med(p, n), med(g, n) }'
done

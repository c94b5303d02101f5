# shellcheck shell=bash
# Starts an Apache Kafka broker in KRaft mode (one process that is broker
# and controller) for the tests and exports WEIR_KAFKA_BROKERS. Sourced by
# scripts/test.sh (see scripts/services/README.md); it can also be sourced
# on its own: `source scripts/services/kafka.sh`.
#
# The broker's jars come from Maven Central through mvn, by coordinates:
# scripts/services/kafka/pom.xml names org.apache.kafka:kafka_2.13, and
# `mvn dependency:copy-dependencies` copies it and its dependencies into
# $WEIR_SERVICES_DIR/kafka/libs (once per version; later runs reuse them).
# Java 17 runs it with a small heap. Each start formats fresh storage under
# $WEIR_SERVICES_DIR/kafka/data and listens on 127.0.0.1 at a free port.
# Running it again while the broker runs reuses that broker.
#
# Retention is off (log.retention.ms=-1): tests stamp records with event
# times from long ago (1970 and 2024), and the broker's retention check,
# every five minutes, would delete such records in the middle of a test.

weir_kafka_main() {
  local here dir
  here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
  dir="${WEIR_SERVICES_DIR:-$PWD/.services}/kafka"
  mkdir -p "$dir"

  local stamp
  stamp="$(cksum <"$here/kafka/pom.xml" | cut -d' ' -f1)"
  if [ "$(cat "$dir/libs.stamp" 2>/dev/null)" != "$stamp" ]; then
    echo "kafka.sh: fetching the Kafka broker's jars with mvn" >&2
    rm -rf "$dir/libs"
    mvn -q -B -f "$here/kafka/pom.xml" dependency:copy-dependencies \
      -DoutputDirectory="$dir/libs" -DincludeScope=runtime || return 1
    echo "$stamp" >"$dir/libs.stamp"
  fi

  if [ -f "$dir/pid" ] && [ -f "$dir/port" ] && kill -0 "$(cat "$dir/pid")" 2>/dev/null; then
    export WEIR_KAFKA_BROKERS="127.0.0.1:$(cat "$dir/port")"
    return 0
  fi

  local port cport
  read -r port cport < <(python3 -c 'import socket
s=[socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1",0))
print(*[x.getsockname()[1] for x in s])')
  rm -rf "$dir/data"
  mkdir -p "$dir/data"
  cat >"$dir/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$cport
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport
advertised.listeners=PLAINTEXT://127.0.0.1:$port
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
log.dirs=$dir/data
num.partitions=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=4
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=false
log.retention.ms=-1
PROPS
  local java=(java -Xms128m -Xmx512m -XX:+UseSerialGC -XX:TieredStopAtLevel=1
    "-Dlog4j2.configurationFile=$here/kafka/log4j2.properties" -cp "$dir/libs/*")
  "${java[@]}" kafka.tools.StorageTool format -t "$(echo weir-test-cluster | base64 | tr -d '=' | tr '/+' '_-' | cut -c1-22)" \
    -c "$dir/server.properties" >"$dir/format.log" 2>&1 || { cat "$dir/format.log" >&2; return 1; }
  "${java[@]}" kafka.Kafka "$dir/server.properties" >"$dir/server.log" 2>&1 &
  local pid=$!
  echo "$pid" >"$dir/pid"
  echo "$port" >"$dir/port"
  local i
  for i in $(seq 1 600); do
    if grep -q "Kafka Server started" "$dir/server.log" 2>/dev/null ||
      (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
    if ! kill -0 "$pid" 2>/dev/null; then cat "$dir/server.log" >&2; return 1; fi
    sleep 0.1
  done
  export WEIR_SERVICE_PIDS="${WEIR_SERVICE_PIDS:-} $pid"
  export WEIR_KAFKA_BROKERS="127.0.0.1:$port"
}

weir_kafka_main
unset -f weir_kafka_main

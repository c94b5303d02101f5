# shellcheck shell=bash
# Starts versitygw, an S3-compatible server (Apache-2.0), for the tests of
# the S3 checkpoint store, and exports WEIR_S3_ENDPOINT, WEIR_S3_ACCESS_KEY,
# WEIR_S3_SECRET_KEY and WEIR_S3_BUCKET. Sourced by scripts/test.sh (see
# scripts/services/README.md); it can also be sourced on its own:
# `source scripts/services/s3.sh`.
#
# The server is built from its Go module with `go install`, once per
# version, into $WEIR_SERVICES_DIR/bin/versitygw-VERSION. It serves its
# posix backend: every bucket is a directory under $WEIR_SERVICES_DIR/s3/data,
# which each start empties. It listens on 127.0.0.1 at a free port with
# root keys made up by this script, and one bucket is created for the
# tests. Sourcing the script while the server runs reuses that server.

weir_s3_main() {
  local version=v1.8.0
  local services="${WEIR_SERVICES_DIR:-$PWD/.services}"
  local dir="$services/s3" bin="$services/bin/versitygw-$version"
  local bucket=weir-test
  mkdir -p "$dir" "$services/bin"

  if [ ! -x "$bin" ]; then
    echo "s3.sh: building versitygw $version with go install" >&2
    local gobin
    gobin="$(mktemp -d "$dir/gobin.XXXXXX")"
    GOBIN="$gobin" GOFLAGS=-buildvcs=false go install "github.com/versity/versitygw/cmd/versitygw@$version" || {
      rm -rf "$gobin"
      return 1
    }
    mv "$gobin/versitygw" "$bin"
    rm -rf "$gobin"
  fi

  if [ -f "$dir/pid" ] && [ -f "$dir/env" ] && kill -0 "$(cat "$dir/pid")" 2>/dev/null; then
    # shellcheck source=/dev/null
    source "$dir/env"
    return 0
  fi

  local access=weir secret
  secret="$(head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  local port="" pid="" attempt i
  for attempt in 1 2 3 4 5; do
    # A port nothing answers on; if another process takes it before the
    # server does, the server exits and we try another.
    while :; do
      port=$((20000 + RANDOM % 40000))
      (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || break
    done
    rm -rf "$dir/data"
    mkdir -p "$dir/data"
    ROOT_ACCESS_KEY="$access" ROOT_SECRET_KEY="$secret" \
      "$bin" --port "127.0.0.1:$port" --quiet posix "$dir/data" >"$dir/server.log" 2>&1 &
    pid=$!
    for i in $(seq 1 300); do
      if ! kill -0 "$pid" 2>/dev/null; then pid=""; break; fi
      if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
      sleep 0.1
    done
    [ -n "$pid" ] && break
  done
  if [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null; then
    echo "s3.sh: versitygw did not start:" >&2
    cat "$dir/server.log" >&2
    [ -n "$pid" ] && kill "$pid" 2>/dev/null
    return 1
  fi
  export WEIR_SERVICE_PIDS="${WEIR_SERVICE_PIDS:-} $pid"

  # Create the bucket with a signed request (curl's SigV4 support).
  local status
  status="$(curl -s -o "$dir/create-bucket.out" -w '%{http_code}' -X PUT \
    --user "$access:$secret" --aws-sigv4 "aws:amz:us-east-1:s3" \
    -H "x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" \
    "http://127.0.0.1:$port/$bucket")"
  if [ "$status" != 200 ]; then
    echo "s3.sh: creating bucket $bucket: HTTP $status" >&2
    cat "$dir/create-bucket.out" >&2
    return 1
  fi

  echo "$pid" >"$dir/pid"
  cat >"$dir/env" <<ENV
export WEIR_S3_ENDPOINT=http://127.0.0.1:$port
export WEIR_S3_ACCESS_KEY=$access
export WEIR_S3_SECRET_KEY=$secret
export WEIR_S3_BUCKET=$bucket
ENV
  # shellcheck source=/dev/null
  source "$dir/env"
}

weir_s3_main
unset -f weir_s3_main

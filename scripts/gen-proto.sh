#!/usr/bin/env bash
# Regenerates the control plane's Go code from internal/cluster/pb/weir.proto.
# Needs protoc (Debian package protobuf-compiler) and the Go plugins, which
# it installs with the go command if they are missing.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(go env GOPATH)/bin"
[ -x "$bin/protoc-gen-go" ] || go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
[ -x "$bin/protoc-gen-go-grpc" ] || go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.5.1
PATH="$bin:$PATH" protoc -I internal/cluster/pb \
  --go_out=internal/cluster/pb --go_opt=paths=source_relative \
  --go-grpc_out=internal/cluster/pb --go-grpc_opt=paths=source_relative \
  internal/cluster/pb/weir.proto

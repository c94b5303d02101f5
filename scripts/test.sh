#!/usr/bin/env bash
# Runs weir's whole test suite. It installs what the tests need first, so it
# works on a fresh machine with Go installed.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== installing Go modules"
go mod download

echo "== vet"
go vet ./...

echo "== tests"
go test -count=1 ./...

echo "== race detector on the packages that share memory between goroutines"
go test -count=1 -race . ./internal/exchange/ ./internal/task/ ./internal/state/ ./connectors/...
go test -count=1 -race -short ./weirtest/

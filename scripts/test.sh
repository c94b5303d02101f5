#!/usr/bin/env bash
# Runs weir's whole test suite. It installs what the tests need first, so it
# works on a fresh machine with Go installed.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== installing Go modules"
go mod download

# The dashboard's browser test drives Debian's Chromium with playwright-core.
if [ ! -x /usr/bin/chromium ] && [ -z "${CHROMIUM:-}" ]; then
  echo "== installing Chromium (Debian package)"
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq chromium >/dev/null
fi
if ! command -v node >/dev/null; then
  echo "the dashboard's browser test needs Node.js (node and npm) on PATH" >&2
  exit 1
fi
echo "== installing the browser test's npm packages"
npm ci --prefix internal/web/uitest --no-audit --no-fund --loglevel=error

# Real servers for the connector and cluster tests. Each script installs
# and starts one and exports its address; see scripts/services/README.md.
export WEIR_SERVICES_DIR="${WEIR_SERVICES_DIR:-$PWD/.services}"
export WEIR_SERVICE_PIDS=""
export WEIR_REQUIRE_SERVICES=1
stop_services() { for pid in $WEIR_SERVICE_PIDS; do kill "$pid" 2>/dev/null || true; done; }
trap stop_services EXIT
mkdir -p "$WEIR_SERVICES_DIR"
for s in scripts/services/*.sh; do
  echo "== starting $(basename "$s" .sh)"
  # shellcheck source=/dev/null
  source "$s"
done

echo "== vet"
go vet ./...

echo "== tests"
go test -count=1 ./...

echo "== race detector on the packages that share memory between goroutines"
go test -count=1 -race . ./internal/exchange/ ./internal/task/ ./internal/state/ ./internal/transport/ ./internal/cluster/ ./connectors/...
go test -count=1 -race -short ./weirtest/ ./internal/engine/ ./internal/web/ ./cli/

// Package testenv gives tests the addresses of the real servers they need
// (Kafka, PostgreSQL, NATS, an S3-compatible store), which the test script
// scripts/test.sh installs and starts.
//
// Each server's address comes from an environment variable. A test whose
// server is missing is skipped when run on its own (go test ./...), and
// fails when WEIR_REQUIRE_SERVICES is set, as the test script sets it: a
// missing server there is a broken set-up, never a pass.
package testenv

import (
	"os"
	"testing"
)

// Require returns the value of the environment variable name, which
// locates a server the test needs. Without it the test is skipped, or
// fails under WEIR_REQUIRE_SERVICES.
func Require(t testing.TB, name string) string {
	t.Helper()
	if v := os.Getenv(name); v != "" {
		return v
	}
	if os.Getenv("WEIR_REQUIRE_SERVICES") != "" {
		t.Fatalf("%s is not set: the test script (scripts/test.sh) starts this server and sets it", name)
	}
	t.Skipf("%s is not set; run ./scripts/test.sh, which starts the server this test needs", name)
	return ""
}

package objstore_test

import (
	"context"
	"crypto/rand"
	"testing"

	"github.com/weir-stream/weir/connectors/objstore"
	"github.com/weir-stream/weir/internal/testenv"
)

// server is the S3-compatible server the test script starts (versitygw).
type server struct{ endpoint, bucket string }

// s3Server returns the test server and puts its credentials where a
// location's client takes them from.
func s3Server(t *testing.T) server {
	t.Helper()
	s := server{endpoint: testenv.Require(t, "WEIR_S3_ENDPOINT"), bucket: testenv.Require(t, "WEIR_S3_BUCKET")}
	t.Setenv("AWS_ACCESS_KEY_ID", testenv.Require(t, "WEIR_S3_ACCESS_KEY"))
	t.Setenv("AWS_SECRET_ACCESS_KEY", testenv.Require(t, "WEIR_S3_SECRET_KEY"))
	return s
}

// location returns a location under a prefix no other test uses.
func (s server) location() string {
	return "s3://" + s.bucket + "/objstore-" + rand.Text()[:12] + "?endpoint=" + s.endpoint
}

func readLines(t *testing.T, loc string) []string {
	t.Helper()
	lines, err := objstore.ReadLines(context.Background(), loc)
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

func noPendingUploads(t *testing.T, loc string) {
	t.Helper()
	pending, err := objstore.PendingUploads(context.Background(), loc)
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 0 {
		t.Fatalf("uploads left in progress: %v", pending)
	}
}

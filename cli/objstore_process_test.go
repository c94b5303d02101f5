package cli_test

import (
	"context"
	"crypto/rand"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	weirapi "github.com/weir-stream/weir"
	"github.com/weir-stream/weir/cli"
	"github.com/weir-stream/weir/connectors/objstore"
	"github.com/weir-stream/weir/internal/testenv"
)

// s3Output returns an s3:// --output location on the test server under a
// prefix of its own, with the server's credentials in the environment the
// weir processes inherit.
func s3Output(t *testing.T) string {
	t.Helper()
	endpoint := testenv.Require(t, "WEIR_S3_ENDPOINT")
	bucket := testenv.Require(t, "WEIR_S3_BUCKET")
	t.Setenv("AWS_ACCESS_KEY_ID", testenv.Require(t, "WEIR_S3_ACCESS_KEY"))
	t.Setenv("AWS_SECRET_ACCESS_KEY", testenv.Require(t, "WEIR_S3_SECRET_KEY"))
	return "s3://" + bucket + "/cli-" + rand.Text()[:12] + "?endpoint=" + endpoint
}

// killDuringUploads runs weir with args and kills it with SIGKILL at the
// first checkpoint completion, from the nth on, after which multipart
// uploads are in progress under out. It returns the number seen.
func killDuringUploads(t *testing.T, out string, n int, args ...string) int {
	t.Helper()
	completed, seen := 0, 0
	killed := killWhen(t, func(line string) bool {
		if !completedRE.MatchString(line) {
			return false
		}
		if completed++; completed < n {
			return false
		}
		pending, err := objstore.PendingUploads(context.Background(), out)
		if err != nil {
			t.Error(err)
			return true
		}
		seen = len(pending)
		return seen > 0
	}, args...)
	if !killed {
		t.Fatal("the job ended before it was killed with uploads in progress")
	}
	return seen
}

// Kill weir with SIGKILL twice while it writes keycount's output to S3
// and multipart uploads are in progress, restore it each time, and the
// committed objects hold exactly the failure-free run's rows, with no
// upload left in progress.
func TestS3OutputIsExactlyOnceAfterSIGKILLs(t *testing.T) {
	ctx := context.Background()
	out := s3Output(t)
	dir := t.TempDir()
	job := []string{"run", "keycount", "--events", "300000", "--keys", "50", "--window", "2ms", "-p", "2", "--progress", "off"}
	ref := filepath.Join(dir, "ref")
	if res, err := exec.Command(weirBinary(t), append(job, "--output", ref)...).CombinedOutput(); err != nil {
		t.Fatalf("reference run: %v\n%s", err, res)
	}
	// A slow sink keeps part files open while rows arrive.
	ft := []string{"--guarantee", "exactly-once", "--checkpoint-interval", "50ms", "--state-dir", filepath.Join(dir, "state"), "--output", out,
		"--rate", "100000", "--sink-delay", "2ms", "--log-checkpoints"}
	first := killDuringUploads(t, out, 3, append(job, ft...)...)
	second := killDuringUploads(t, out, 3, append(append(job, ft...), "--restore", "latest")...)
	t.Logf("killed with %d and %d uploads in progress", first, second)
	res, err := exec.Command(weirBinary(t), append(append(job, ft...), "--restore", "latest")...).CombinedOutput()
	if err != nil {
		t.Fatalf("restored run: %v\n%s", err, res)
	}
	if !strings.Contains(string(res), "restoring checkpoint") {
		t.Fatalf("no restore reported:\n%s", res)
	}
	got, err := objstore.ReadLines(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	if err := cli.VerifyLines(weirapi.ExactlyOnce, lines(t, ref), got); err != nil {
		t.Fatalf("output in S3 after kills and restores is not exactly-once: %v\n%s", err, res)
	}
	if pending, err := objstore.PendingUploads(ctx, out); err != nil || len(pending) != 0 {
		t.Fatalf("uploads left in progress after the job ended: %v %v", pending, err)
	}
}

// An --output location whose bucket is missing, or whose credentials are
// refused, fails the job at once with an error naming the location.
func TestS3OutputErrorsNameTheLocation(t *testing.T) {
	out := s3Output(t)
	missing := strings.Replace(out, "s3://"+testenv.Require(t, "WEIR_S3_BUCKET")+"/", "s3://no-such-bucket-weir/", 1)
	job := []string{"run", "keycount", "--events", "1000", "--keys", "5", "-p", "1", "--progress", "off"}
	res, err := exec.Command(weirBinary(t), append(job, "--output", missing)...).CombinedOutput()
	if err == nil || !strings.Contains(string(res), "no-such-bucket-weir") || !strings.Contains(string(res), "does not exist") {
		t.Fatalf("missing bucket: %v\n%s", err, res)
	}
	t.Setenv("AWS_SECRET_ACCESS_KEY", "wrong")
	res, err = exec.Command(weirBinary(t), append(job, "--output", out)...).CombinedOutput()
	if err == nil || !strings.Contains(string(res), "access to bucket") {
		t.Fatalf("bad credentials: %v\n%s", err, res)
	}
}

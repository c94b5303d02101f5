package cli_test

import (
	"context"
	"crypto/rand"
	"os/exec"
	"path/filepath"
	"strconv"
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

// Kill weir with SIGKILL twice while it writes keycount's output to S3
// as multipart uploads, restore it each time, and the committed objects
// hold exactly the failure-free run's rows, with no upload left in
// progress.
func TestS3OutputIsExactlyOnceAfterSIGKILLs(t *testing.T) {
	ctx := context.Background()
	out := s3Output(t)
	dir := t.TempDir()
	// Windows of 2ms of event time close every 2ms of wall-clock time at
	// this rate, so rows reach the sink all the time and part files are
	// open, as uploads in progress, whenever the process is killed.
	job := []string{"run", "keycount", "--events", "300000", "--keys", "50", "--window", "2ms", "-p", "2", "--progress", "off"}
	ref := filepath.Join(dir, "ref")
	if res, err := exec.Command(weirBinary(t), append(job, "--output", ref)...).CombinedOutput(); err != nil {
		t.Fatalf("reference run: %v\n%s", err, res)
	}
	ft := []string{"--guarantee", "exactly-once", "--checkpoint-interval", "50ms", "--state-dir", filepath.Join(dir, "state"), "--output", out,
		"--rate", "100000", "--log-checkpoints"}
	// The first run is killed after checkpoint 3, the restored one three
	// checkpoints after the one it restored.
	killAfter(t, "checkpoint 3 completed", append(job, ft...)...)
	pending, err := objstore.PendingUploads(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	killedUploads := len(pending)
	restored := 0
	killWhen(t, func(line string) bool {
		if m := completedRE.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[1])
			if restored == 0 {
				restored = n - 1
			}
			return n >= restored+3
		}
		return false
	}, append(append(job, ft...), "--restore", "latest")...)
	pending, err = objstore.PendingUploads(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	killedUploads += len(pending)
	t.Logf("%d uploads in progress after the kills", killedUploads)
	if killedUploads == 0 {
		t.Fatal("no upload was in progress when the process was killed: the test proved nothing")
	}
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
	if pending, err = objstore.PendingUploads(ctx, out); err != nil || len(pending) != 0 {
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

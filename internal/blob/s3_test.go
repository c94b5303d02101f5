package blob_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/weir-stream/weir/internal/blob"
	"github.com/weir-stream/weir/internal/blob/blobtest"
	"github.com/weir-stream/weir/internal/testenv"
)

// fakeS3 is an in-process S3 server (gofakes3, in memory) for unit tests.
// It honours If-None-Match: * on PUT atomically (it checks and writes
// under one lock), so the whole conformance suite runs against it.
type fakeS3 struct {
	endpoint string
	backend  *s3mem.Backend
}

// startFakeS3 starts a fake S3 server with the given buckets, stopped when
// the test ends. wrap, if not nil, sits in front of the server, to inject
// faults.
func startFakeS3(t *testing.T, wrap func(http.Handler) http.Handler, buckets ...string) *fakeS3 {
	t.Helper()
	backend := s3mem.New()
	for _, b := range buckets {
		if err := backend.CreateBucket(b); err != nil {
			t.Fatal(err)
		}
	}
	var h http.Handler = gofakes3.New(backend).Server()
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &fakeS3{endpoint: srv.URL, backend: backend}
}

func (f *fakeS3) config(bucket, prefix string) blob.S3Config {
	return blob.S3Config{Bucket: bucket, Prefix: prefix, Endpoint: f.endpoint, PathStyle: true, AccessKey: "test", SecretKey: "test"}
}

func newS3(t *testing.T, cfg blob.S3Config) *blob.S3Store {
	t.Helper()
	s, err := blob.NewS3(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestS3ConformanceInProcess(t *testing.T) {
	fake := startFakeS3(t, nil, "weir")
	var n atomic.Int64
	t.Run("under a prefix", func(t *testing.T) {
		blobtest.Run(t, func(t *testing.T) blob.Store {
			return newS3(t, fake.config("weir", fmt.Sprintf("stores/%d", n.Add(1))))
		})
	})
	t.Run("at the bucket root", func(t *testing.T) {
		blobtest.Run(t, func(t *testing.T) blob.Store {
			bucket := fmt.Sprintf("root-%d", n.Add(1))
			if err := fake.backend.CreateBucket(bucket); err != nil {
				t.Fatal(err)
			}
			return newS3(t, fake.config(bucket, ""))
		})
	})
	t.Run("listing two keys a page", func(t *testing.T) {
		blobtest.Run(t, func(t *testing.T) blob.Store {
			cfg := fake.config("weir", fmt.Sprintf("stores/%d", n.Add(1)))
			cfg.ListPageSize = 2
			return newS3(t, cfg)
		})
	})
}

// versity returns the configuration of the real S3-compatible server the
// test script starts (versitygw), with a prefix no other test uses.
func versity(t *testing.T) blob.S3Config {
	t.Helper()
	endpoint := testenv.Require(t, "WEIR_S3_ENDPOINT")
	return blob.S3Config{
		Endpoint:  endpoint,
		Bucket:    testenv.Require(t, "WEIR_S3_BUCKET"),
		AccessKey: testenv.Require(t, "WEIR_S3_ACCESS_KEY"),
		SecretKey: testenv.Require(t, "WEIR_S3_SECRET_KEY"),
		PathStyle: true,
		Prefix:    "test-" + rand.Text()[:12],
	}
}

// emptyAtEnd deletes every blob of s when the test ends, so the shared
// bucket does not fill up.
func emptyAtEnd(t *testing.T, s blob.Store) {
	t.Cleanup(func() {
		ctx := context.Background() // t.Context() is done by now
		keys, err := s.List(ctx, "")
		if err != nil {
			t.Errorf("cleaning up: %v", err)
		}
		for _, k := range keys {
			if err := s.Delete(ctx, k); err != nil {
				t.Errorf("cleaning up: %v", err)
			}
		}
	})
}

func TestS3ConformanceVersityGW(t *testing.T) {
	base := versity(t)
	var n atomic.Int64
	for _, pageSize := range []int32{0, 2} {
		t.Run(fmt.Sprintf("page size %d", pageSize), func(t *testing.T) {
			blobtest.Run(t, func(t *testing.T) blob.Store {
				cfg := base
				cfg.Prefix = fmt.Sprintf("%s/%d", base.Prefix, n.Add(1))
				cfg.ListPageSize = pageSize
				s := newS3(t, cfg)
				emptyAtEnd(t, s)
				return s
			})
		})
	}
}

// TestS3ConcurrentStoresFenceEachOther is the cluster case: separate
// clients (as separate processes would have) race to create the same key
// on the real server, and exactly one wins.
func TestS3ConcurrentStoresFenceEachOther(t *testing.T) {
	cfg := versity(t)
	const writers = 8
	stores := make([]*blob.S3Store, writers)
	for i := range stores {
		stores[i] = newS3(t, cfg)
	}
	emptyAtEnd(t, stores[0])
	for round := range 5 {
		key := fmt.Sprintf("jobs/j/chk-%d/_metadata", round)
		errs := make([]error, writers)
		var wg sync.WaitGroup
		for i, s := range stores {
			wg.Go(func() { errs[i] = s.PutIfAbsent(t.Context(), key, fmt.Appendf(nil, "writer %d", i)) })
		}
		wg.Wait()
		var winners []int
		for i, err := range errs {
			switch {
			case err == nil:
				winners = append(winners, i)
			case !errors.Is(err, blob.ErrExists):
				t.Fatalf("writer %d: %v", i, err)
			}
		}
		if len(winners) != 1 {
			t.Fatalf("round %d: writers %v won, want exactly one", round, winners)
		}
		got, err := stores[(winners[0]+1)%writers].Get(t.Context(), key)
		if want := fmt.Sprintf("writer %d", winners[0]); err != nil || string(got) != want {
			t.Fatalf("round %d: another client reads %q, %v; want %q", round, got, err, want)
		}
	}
}

// conditionalPuts counts PUT requests with If-None-Match and answers the
// first `fail` of them with status, without passing them on (unless
// apply is set, which passes them on and then answers status anyway: a
// write that took effect but whose response was lost).
type conditionalPuts struct {
	next   http.Handler
	status int
	fail   int64
	apply  bool
	seen   atomic.Int64
}

func (c *conditionalPuts) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPut || r.Header.Get("If-None-Match") == "" {
		c.next.ServeHTTP(w, r)
		return
	}
	if c.seen.Add(1) > c.fail {
		c.next.ServeHTTP(w, r)
		return
	}
	if c.apply {
		c.next.ServeHTTP(httptest.NewRecorder(), r)
	}
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(c.status)
	fmt.Fprintf(w, "<Error><Code>%s</Code><Message>injected</Message></Error>", strings.ReplaceAll(http.StatusText(c.status), " ", ""))
}

func TestS3PutIfAbsentRetriesAConditionalConflict(t *testing.T) {
	cp := &conditionalPuts{status: http.StatusConflict, fail: 2}
	fake := startFakeS3(t, func(h http.Handler) http.Handler { cp.next = h; return cp }, "b")
	s := newS3(t, fake.config("b", ""))
	if err := s.PutIfAbsent(t.Context(), "k", []byte("v")); err != nil {
		t.Fatalf("PutIfAbsent after two 409 Conflicts = %v, want success on the third try", err)
	}
	if got := cp.seen.Load(); got != 3 {
		t.Errorf("server saw %d conditional PUTs, want 3", got)
	}
	if got, err := s.Get(t.Context(), "k"); err != nil || string(got) != "v" {
		t.Errorf("Get = %q, %v; want v", got, err)
	}
}

func TestS3PutIfAbsentDoesNotRetryAWriteThatMayHaveHappened(t *testing.T) {
	cp := &conditionalPuts{status: http.StatusInternalServerError, fail: 1, apply: true}
	fake := startFakeS3(t, func(h http.Handler) http.Handler { cp.next = h; return cp }, "b")
	s := newS3(t, fake.config("b", ""))
	err := s.PutIfAbsent(t.Context(), "k", []byte("v"))
	if err == nil || errors.Is(err, blob.ErrExists) {
		t.Fatalf("PutIfAbsent whose response was lost = %v, want an error other than ErrExists", err)
	}
	if got := cp.seen.Load(); got != 1 {
		t.Errorf("server saw %d conditional PUTs, want 1 (no retry)", got)
	}
}

func TestS3ErrorsNameBucketAndKey(t *testing.T) {
	fake := startFakeS3(t, nil, "b")
	s := newS3(t, fake.config("b", "pre/fix"))
	_, err := s.Get(t.Context(), "jobs/missing")
	if !errors.Is(err, blob.ErrNotFound) || !strings.Contains(err.Error(), "get s3://b/pre/fix/jobs/missing: ") {
		t.Errorf("Get of a missing key = %v, want ErrNotFound naming s3://b/pre/fix/jobs/missing", err)
	}
	if err := s.PutIfAbsent(t.Context(), "k", nil); err != nil {
		t.Fatal(err)
	}
	err = s.PutIfAbsent(t.Context(), "k", nil)
	if !errors.Is(err, blob.ErrExists) || !strings.Contains(err.Error(), "s3://b/pre/fix/k") {
		t.Errorf("second PutIfAbsent = %v, want ErrExists naming s3://b/pre/fix/k", err)
	}

	nobucket := newS3(t, fake.config("no-such-bucket", ""))
	_, err = nobucket.Get(t.Context(), "k")
	if err == nil || errors.Is(err, blob.ErrNotFound) || !strings.Contains(err.Error(), "s3://no-such-bucket/k") {
		t.Errorf("Get from a missing bucket = %v, want an error naming the bucket that is not ErrNotFound", err)
	}
	if err := nobucket.Check(t.Context()); err == nil || !strings.Contains(err.Error(), "bucket does not exist") {
		t.Errorf("Check of a missing bucket = %v, want it to say the bucket does not exist", err)
	}
	if err := s.Check(t.Context()); err != nil {
		t.Errorf("Check of an existing bucket = %v", err)
	}
}

func TestS3ListSkipsObjectsThatAreNotKeys(t *testing.T) {
	fake := startFakeS3(t, nil, "b")
	s := newS3(t, fake.config("b", "p"))
	if err := s.Put(t.Context(), "a/k", []byte("x")); err != nil {
		t.Fatal(err)
	}
	// Objects other tools leave: a directory marker, a hidden file, and
	// an object just outside the prefix.
	for _, name := range []string{"p/a/", "p/a/.tmp", "pa/k"} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPut, fake.endpoint+"/b/"+name, strings.NewReader("junk"))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("raw PUT %s: %s", name, resp.Status)
		}
	}
	got, err := s.List(t.Context(), "")
	if want := []string{"a/k"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("List = %q, %v; want %q", got, err, want)
	}
}

func TestNewS3RejectsIncompleteConfigs(t *testing.T) {
	for _, tc := range []struct {
		cfg  blob.S3Config
		want string
	}{
		{blob.S3Config{AccessKey: "a", SecretKey: "s"}, "no bucket"},
		{blob.S3Config{Bucket: "b", AccessKey: "a"}, "AWS_SECRET_ACCESS_KEY"},
		{blob.S3Config{Bucket: "b", AccessKey: "a", SecretKey: "s", Prefix: "a/../b"}, "invalid key"},
	} {
		if _, err := blob.NewS3(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewS3(%+v) = %v, want an error containing %q", tc.cfg, err, tc.want)
		}
	}
}

package blob_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/weir-stream/weir/internal/blob"
)

func TestOpenPathsAndFileURLsAreDirectories(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for location, want := range map[string]string{
		"state":                              filepath.Join(dir, "state"),
		filepath.Join(dir, "abs"):            filepath.Join(dir, "abs"),
		"file://" + filepath.Join(dir, "u"):  filepath.Join(dir, "u"),
		"file://localhost" + dir + "/x/../y": filepath.Join(dir, "y"),
	} {
		s, err := blob.Open(t.Context(), location)
		if err != nil {
			t.Errorf("Open(%q): %v", location, err)
			continue
		}
		d, ok := s.(*blob.DirStore)
		if !ok || d.Root() != want {
			t.Errorf("Open(%q) = %#v, want a directory store at %s", location, s, want)
		}
	}
}

func TestOpenMemoryIsANewEmptyStore(t *testing.T) {
	a, err := blob.Open(t.Context(), "memory://")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Put(t.Context(), "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	b, err := blob.Open(t.Context(), "memory://")
	if err != nil {
		t.Fatal(err)
	}
	if keys, err := b.List(t.Context(), ""); err != nil || len(keys) != 0 {
		t.Errorf("a second memory:// store holds %q, %v; want nothing", keys, err)
	}
}

func TestOpenRejectsBadLocations(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "a")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "s")
	for location, want := range map[string]string{
		"":                                 "empty location",
		"gs://bucket/x":                    `unknown scheme "gs"`,
		"file:relative":                    "file:///absolute/path",
		"file://otherhost/x":               `not host "otherhost"`,
		"file:///x?mode=1":                 "file:///absolute/path",
		"memory://name":                    "just memory://",
		"s3://":                            "no bucket",
		"s3:///prefix":                     "no bucket",
		"s3://b/p?endpoint=127.0.0.1:9000": "is not an http:// or https:// URL",
		"s3://b/p?bogus=1":                 `unknown parameter "bogus"`,
		"s3://b/p?region=a&region=b":       "region given 2 times",
		"s3://b/p?path-style=maybe":        `path-style="maybe" is not true or false`,
		"s3://b/a/../b":                    `".." segment`,
		"s3://key:secret@b/p":              "credentials do not belong in the URL",
		"s3://b/p#frag":                    "unexpected fragment",
		"s3://b/%zz":                       "invalid URL escape",
	} {
		_, err := blob.Open(t.Context(), location)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Open(%q) = %v, want an error containing %q", location, err, want)
		} else if location != "" && !strings.Contains(err.Error(), location) {
			t.Errorf("Open(%q) = %v, want the error to name the location", location, err)
		}
	}
}

func TestOpenS3NeedsCredentialsFromTheEnvironment(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	_, err := blob.Open(t.Context(), "s3://b/p?endpoint=http://127.0.0.1:1")
	if err == nil || !strings.Contains(err.Error(), "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY") {
		t.Errorf("Open without credentials = %v, want it to name the variables", err)
	}
}

func TestOpenS3SharesOneBucketBetweenStores(t *testing.T) {
	fake := startFakeS3(t, nil, "shared")
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_REGION", "eu-west-1")
	location := "s3://shared/weir/prod?endpoint=" + fake.endpoint
	writer, err := blob.Open(t.Context(), location)
	if err != nil {
		t.Fatal(err)
	}
	if err := writer.PutIfAbsent(t.Context(), "jobs/j/chk-1/_metadata", []byte("m")); err != nil {
		t.Fatal(err)
	}
	// Another process opening the same location sees the blob, and its
	// create of the same key is fenced.
	reader, err := blob.Open(t.Context(), location+"&path-style=true&region=us-east-2")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := reader.Get(t.Context(), "jobs/j/chk-1/_metadata"); err != nil || string(got) != "m" {
		t.Errorf("Get through a second store = %q, %v; want m", got, err)
	}
	if err := reader.PutIfAbsent(t.Context(), "jobs/j/chk-1/_metadata", []byte("stale")); err == nil {
		t.Error("a second store's PutIfAbsent of a taken key succeeded")
	}
	// The prefix keeps the store's keys apart from the rest of the bucket.
	whole, err := blob.Open(t.Context(), "s3://shared?endpoint="+fake.endpoint)
	if err != nil {
		t.Fatal(err)
	}
	if keys, err := whole.List(t.Context(), ""); err != nil || len(keys) != 1 || keys[0] != "weir/prod/jobs/j/chk-1/_metadata" {
		t.Errorf("the bucket holds %q, %v; want the blob under weir/prod/", keys, err)
	}
}

func TestOpenS3FailsAtOnceForAMissingBucket(t *testing.T) {
	fake := startFakeS3(t, nil, "exists")
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	_, err := blob.Open(t.Context(), "s3://missing/p?endpoint="+fake.endpoint)
	if err == nil || !strings.Contains(err.Error(), "bucket does not exist") {
		t.Errorf("Open of a missing bucket = %v, want it to say the bucket does not exist", err)
	}
}

package objstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/objstore"
)

// Open fails with an error that names the location and says what is
// wrong; what no restart cures wraps connector.ErrConfig.
func TestSinkOpenErrorsSayWhatIsWrong(t *testing.T) {
	srv := s3Server(t)
	cases := []struct {
		name, location string
		setup          func(t *testing.T)
		want           []string
		config         bool
	}{
		{name: "missing bucket", location: "s3://no-such-bucket-weir/x?endpoint=" + srv.endpoint,
			want: []string{"no-such-bucket-weir", "does not exist"}, config: true},
		{name: "bad credentials", location: srv.location(),
			setup: func(t *testing.T) { t.Setenv("AWS_SECRET_ACCESS_KEY", "wrong") },
			want:  []string{"access to bucket", "AWS_SECRET_ACCESS_KEY"}, config: true},
		{name: "no credentials", location: srv.location(),
			setup: func(t *testing.T) { t.Setenv("AWS_ACCESS_KEY_ID", "") },
			want:  []string{"no credentials"}, config: true},
		{name: "unreachable endpoint", location: "s3://" + srv.bucket + "/x?endpoint=http://127.0.0.1:1",
			want: []string{"cannot reach bucket", "127.0.0.1:1"}},
		{name: "not an s3 URL", location: "gs://b/x", want: []string{`"gs://b/x"`, "not an s3:// URL"}, config: true},
		{name: "credentials in the URL", location: "s3://k:s@b/x", want: []string{"credentials do not belong in the URL"}, config: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.setup != nil {
				c.setup(t)
			}
			_, err := objstore.NewSink(objstore.SinkConfig[int]{Location: c.location, Format: objstore.JSONLines[int]()}).
				Open(context.Background(), connector.SubtaskInfo{Subtask: 0, Parallelism: 1})
			if err == nil {
				t.Fatal("Open succeeded")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if got := errors.Is(err, connector.ErrConfig); got != c.config {
				t.Errorf("errors.Is(err, ErrConfig) = %v, want %v: %v", got, c.config, err)
			}
		})
	}
}

// Bad configurations fail at Open, naming what is wrong.
func TestSinkRefusesAnIncompleteConfiguration(t *testing.T) {
	loc := s3Server(t).location()
	for _, c := range []struct {
		cfg  objstore.SinkConfig[int]
		want string
	}{
		{objstore.SinkConfig[int]{Format: objstore.JSONLines[int]()}, "no location"},
		{objstore.SinkConfig[int]{Location: loc}, "no format"},
		{objstore.SinkConfig[int]{Location: loc, Format: objstore.JSONLines[int](), PartSize: 1 << 20}, "under S3's minimum"},
	} {
		_, err := objstore.NewSink(c.cfg).Open(context.Background(), connector.SubtaskInfo{Subtask: 0, Parallelism: 1})
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, connector.ErrConfig) {
			t.Errorf("Open: %v, want a configuration error saying %q", err, c.want)
		}
	}
}

// Package objstore is a file connector for S3-compatible object stores:
// a sink that writes part files exactly-once, in JSON lines, CSV or
// Parquet, partitioned into buckets (by event time or by a column) and
// rolled by size and time, and a source that reads the objects under a
// prefix, once or discovering new ones as they appear. It is what Flink's
// FileSink and FileSource are on S3.
//
// # Locations
//
// A location is an s3:// URL, as the checkpoint store takes it:
// s3://bucket/prefix?endpoint=URL&region=NAME&path-style=true|false, with
// the credentials in AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
// AWS_SESSION_TOKEN (never in the URL). The client is set up as the
// checkpoint store's is. A sink or source checks at Open that the bucket
// can be reached with those credentials: a missing bucket or rejected
// credentials fail the job at once (an error wrapping
// connector.ErrConfig) naming the location; an unreachable endpoint is an
// ordinary error, which the restart strategy retries.
//
// # Objects the sink writes
//
// A part file is the object
//
//	<prefix>/<bucket>/part-<subtask>-<epoch>-<writer>-<seq><extension>
//
// where <bucket> is what the bucket assigner returned (absent without
// one), <subtask> the sink subtask that wrote it, <epoch> one more than
// the last checkpoint the writer had pre-committed when it began the file
// (0 without checkpoints), <writer> a random id per writer and <seq> a
// counter per writer. ReadLines and List return them in the order of
// epoch, subtask and counter. See NewSink for how and when they appear.
package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/internal/blob"
)

// store is a bucket and prefix with the client that reaches them.
type store struct {
	client   *s3.Client
	bucket   string
	prefix   string // "" or ending in "/"
	location string // for messages
}

// open parses location and checks that its bucket can be reached.
func open(ctx context.Context, location string) (*store, error) {
	cfg, err := blob.ParseS3URL(location)
	if err != nil {
		return nil, connector.ConfigError(fmt.Errorf("objstore: location %w", err))
	}
	s3s, err := blob.NewS3(cfg)
	if err != nil {
		return nil, connector.ConfigError(fmt.Errorf("objstore: %s: %w", location, err))
	}
	s := &store{client: s3s.Client(), bucket: s3s.Bucket(), prefix: s3s.Prefix(), location: location}
	if _, err := s.client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &s.bucket}); err != nil {
		switch httpStatus(err) {
		case http.StatusNotFound:
			return nil, connector.ConfigError(fmt.Errorf("objstore: %s: bucket %s does not exist: %w", s.location, s.bucket, err))
		case http.StatusForbidden, http.StatusUnauthorized:
			return nil, connector.ConfigError(fmt.Errorf("objstore: %s: access to bucket %s denied (check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY): %w", s.location, s.bucket, err))
		}
		return nil, fmt.Errorf("objstore: %s: cannot reach bucket %s: %w", s.location, s.bucket, err)
	}
	return s, nil
}

// httpStatus returns the HTTP status of a failed request, 0 if none.
func httpStatus(err error) int {
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

// partName is a part file's parsed name.
type partName struct {
	bucket  string // the directory under the prefix, "" for none
	subtask int
	epoch   int64
	writer  string
	seq     int
	key     string // the whole object key
}

func (s *store) partKey(bucket string, subtask int, epoch int64, writer string, seq int, ext string) string {
	dir := s.prefix
	if bucket != "" {
		dir += bucket + "/"
	}
	return fmt.Sprintf("%spart-%d-%d-%s-%d%s", dir, subtask, epoch, writer, seq, ext)
}

// parsePart parses an object key under the store's prefix as a part
// file's name; ok is false for any other object.
func (s *store) parsePart(key string) (p partName, ok bool) {
	rest, found := strings.CutPrefix(key, s.prefix)
	if !found {
		return p, false
	}
	base := rest
	if i := strings.LastIndexByte(rest, '/'); i >= 0 {
		p.bucket, base = rest[:i], rest[i+1:]
	}
	base, found = strings.CutPrefix(base, "part-")
	if !found {
		return p, false
	}
	if i := strings.IndexByte(base, '.'); i >= 0 {
		base = base[:i]
	}
	f := strings.Split(base, "-")
	if len(f) != 4 || f[2] == "" {
		return p, false
	}
	var err1, err2, err3 error
	p.subtask, err1 = strconv.Atoi(f[0])
	p.epoch, err2 = strconv.ParseInt(f[1], 10, 64)
	p.writer = f[2]
	p.seq, err3 = strconv.Atoi(f[3])
	if err1 != nil || err2 != nil || err3 != nil || p.subtask < 0 || p.epoch < 0 {
		return p, false
	}
	p.key = key
	return p, true
}

// parts lists the committed part files under the prefix, in the order of
// epoch, subtask, writer and counter.
func (s *store) parts(ctx context.Context) ([]partName, error) {
	var out []partName
	pages := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: &s.bucket, Prefix: aws.String(s.prefix)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("objstore: listing %s: %w", s.location, err)
		}
		for _, o := range page.Contents {
			if p, ok := s.parsePart(aws.ToString(o.Key)); ok {
				out = append(out, p)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.epoch != b.epoch {
			return a.epoch < b.epoch
		}
		if a.subtask != b.subtask {
			return a.subtask < b.subtask
		}
		if a.writer != b.writer {
			return a.writer < b.writer
		}
		if a.seq != b.seq {
			return a.seq < b.seq
		}
		return a.key < b.key
	})
	return out, nil
}

// upload is a multipart upload in progress.
type upload struct {
	Key string `json:"k"`
	ID  string `json:"u"`
}

// uploads lists the multipart uploads in progress under the prefix.
func (s *store) uploads(ctx context.Context) ([]upload, error) {
	var out []upload
	in := &s3.ListMultipartUploadsInput{Bucket: &s.bucket, Prefix: aws.String(s.prefix)}
	for {
		page, err := s.client.ListMultipartUploads(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("objstore: listing the uploads in progress under %s: %w", s.location, err)
		}
		for _, u := range page.Uploads {
			out = append(out, upload{Key: aws.ToString(u.Key), ID: aws.ToString(u.UploadId)})
		}
		if !aws.ToBool(page.IsTruncated) {
			return out, nil
		}
		in.KeyMarker, in.UploadIdMarker = page.NextKeyMarker, page.NextUploadIdMarker
	}
}

// List returns the keys of the part files a sink committed under
// location, in the order of epoch, subtask and counter: for each subtask
// the order it wrote them in.
func List(ctx context.Context, location string) ([]string, error) {
	s, err := open(ctx, location)
	if err != nil {
		return nil, err
	}
	ps, err := s.parts(ctx)
	if err != nil {
		return nil, err
	}
	keys := make([]string, len(ps))
	for i, p := range ps {
		keys[i] = p.key
	}
	return keys, nil
}

// PendingUploads returns the keys of the multipart uploads in progress
// under location: the part files written but not yet committed or
// aborted. After a job ended, or after a restored job's sinks recovered,
// none of its own are left.
func PendingUploads(ctx context.Context, location string) ([]string, error) {
	s, err := open(ctx, location)
	if err != nil {
		return nil, err
	}
	us, err := s.uploads(ctx)
	if err != nil {
		return nil, err
	}
	keys := make([]string, len(us))
	for i, u := range us {
		keys[i] = u.Key
	}
	return keys, nil
}

// ReadLines returns the lines of every part file a sink committed under
// location (see List), part file by part file: the output of a JSON lines
// or CSV sink as it is visible.
func ReadLines(ctx context.Context, location string) ([]string, error) {
	s, err := open(ctx, location)
	if err != nil {
		return nil, err
	}
	ps, err := s.parts(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range ps {
		data, err := s.get(ctx, p.key)
		if err != nil {
			return nil, err
		}
		text := strings.TrimSuffix(string(data), "\n")
		if text != "" {
			out = append(out, strings.Split(text, "\n")...)
		}
	}
	return out, nil
}

// get reads a whole object.
func (s *store) get(ctx context.Context, key string) ([]byte, error) {
	o, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: &key})
	if err != nil {
		return nil, fmt.Errorf("objstore: reading s3://%s/%s: %w", s.bucket, key, err)
	}
	defer o.Body.Close()
	data, err := io.ReadAll(o.Body)
	if err != nil {
		return nil, fmt.Errorf("objstore: reading s3://%s/%s: %w", s.bucket, key, err)
	}
	return data, nil
}

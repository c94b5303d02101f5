package blob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// S3Config locates a bucket of an S3-compatible object store and says how
// to reach it. Open builds one from an s3:// URL and the standard AWS
// environment variables.
type S3Config struct {
	// Bucket is the bucket's name. It must exist.
	Bucket string
	// Prefix is put before every key, so that several stores (or other
	// data) can share a bucket. A non-empty prefix is a valid key such
	// as "weir/prod"; the store adds the slash after it.
	Prefix string
	// Endpoint is the service's base URL, such as "http://127.0.0.1:7070";
	// empty means AWS S3 in Region.
	Endpoint string
	// Region signs the requests (default "us-east-1"). Most S3-compatible
	// servers accept any region.
	Region string
	// PathStyle addresses the bucket in the URL path (endpoint/bucket/key)
	// rather than in the host name (bucket.endpoint/key). Self-hosted
	// servers usually need it.
	PathStyle bool
	// AccessKey and SecretKey (and SessionToken for temporary
	// credentials) sign the requests. Both keys are required.
	AccessKey, SecretKey, SessionToken string
	// ListPageSize is the most keys one list request returns; zero means
	// the server's default (1,000 for S3). Tests set it small to exercise
	// pagination.
	ListPageSize int32
	// HTTPClient sends the requests; nil means the SDK's default client.
	HTTPClient *http.Client
}

// S3Store is a Store over a bucket of an S3-compatible object store: key
// "a/b" is the object Prefix + "/a/b" (or "a/b" without a prefix). Many
// processes on many machines may share one store, as the coordinator and
// the workers of a cluster do.
//
// S3 writes whole objects atomically and, since 2020, reads after writes
// and lists are strongly consistent, which is what Put, Get and List
// promise. PutIfAbsent is a conditional write (If-None-Match: *): the
// server creates the object only if the key has none, so of several
// writers exactly one succeeds and the others get 412 Precondition
// Failed, reported as ErrExists. A server that ignores the header would
// silently break fencing; conformance tests against the server in use
// catch that (AWS S3, versitygw and gofakes3 honour it).
//
// Objects under the prefix whose names are not valid keys (such as the
// "dir/" markers some tools create) are not blobs: List skips them.
type S3Store struct {
	client   *s3.Client
	bucket   string
	prefix   string // "" or ending in "/"
	pageSize int32
}

// NewS3 returns a store over the bucket cfg names. It does no I/O; Open
// also checks that the bucket can be reached.
func NewS3(cfg S3Config) (*S3Store, error) {
	if cfg.Bucket == "" {
		return nil, errors.New("s3: no bucket")
	}
	if cfg.AccessKey == "" || cfg.SecretKey == "" {
		return nil, fmt.Errorf("s3 bucket %s: no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY", cfg.Bucket)
	}
	prefix := ""
	if cfg.Prefix != "" {
		if err := ValidKey(cfg.Prefix); err != nil {
			return nil, fmt.Errorf("s3 bucket %s: prefix: %w", cfg.Bucket, err)
		}
		prefix = cfg.Prefix + "/"
	}
	region := cfg.Region
	if region == "" {
		region = "us-east-1"
	}
	opts := s3.Options{
		Region:       region,
		Credentials:  credentials.NewStaticCredentialsProvider(cfg.AccessKey, cfg.SecretKey, cfg.SessionToken),
		UsePathStyle: cfg.PathStyle,
		// Checksums only where the API requires them: the store's
		// callers checksum what they store, and S3-compatible servers
		// differ in their support of the newer trailing checksums.
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	}
	if cfg.Endpoint != "" {
		opts.BaseEndpoint = aws.String(cfg.Endpoint)
	}
	if cfg.HTTPClient != nil {
		opts.HTTPClient = cfg.HTTPClient
	} else {
		// The engine writes checkpoints without a deadline; a server that
		// takes a request and never answers must not hang it. The limit
		// starts after the request body is sent, so large blobs are not
		// cut short, and the SDK retries a timed-out request (except a
		// conditional create, see PutIfAbsent).
		opts.HTTPClient = awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
			t.ResponseHeaderTimeout = time.Minute
		})
	}
	return &S3Store{client: s3.New(opts), bucket: cfg.Bucket, prefix: prefix, pageSize: cfg.ListPageSize}, nil
}

// String returns the store's location as an s3:// URL without the
// endpoint, for messages.
func (s *S3Store) String() string { return "s3://" + s.bucket + "/" + s.prefix }

// name returns the location of key for error messages: bucket and object.
func (s *S3Store) name(key string) string { return "s3://" + s.bucket + "/" + s.prefix + key }

// fail wraps err from an operation on key with the operation and the
// object's location. A request that failed because ctx ended yields an
// error wrapping ctx.Err(), whatever the SDK made of it.
func (s *S3Store) fail(ctx context.Context, op, key string, err error) error {
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		err = fmt.Errorf("%w (%v)", cerr, err)
	}
	return opError(op, s.name(key), err)
}

// Check reports whether the bucket can be reached with the store's
// credentials, by a HEAD request on the bucket.
func (s *S3Store) Check(ctx context.Context) error {
	_, err := s.client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &s.bucket})
	if err != nil {
		if httpStatus(err) == http.StatusNotFound {
			err = fmt.Errorf("bucket does not exist: %w", err)
		}
		return fmt.Errorf("s3 bucket %s: %w", s.bucket, err)
	}
	return nil
}

// Put implements Store.
func (s *S3Store) Put(ctx context.Context, key string, data []byte) error {
	if err := check(ctx, "put", key); err != nil {
		return err
	}
	_, err := s.client.PutObject(ctx, s.putInput(key, data))
	if err != nil {
		return s.fail(ctx, "put", key, err)
	}
	return nil
}

// conflictRetries bounds how often PutIfAbsent retries after 409
// ConditionalRequestConflict, which S3 returns while another conditional
// write of the key is in progress.
const conflictRetries = 8

// PutIfAbsent implements Store with a conditional write.
//
// The SDK's own retries are off for it: if a write took effect but its
// response was lost, a retry would find the object and report ErrExists
// to the writer that won. A transient failure is returned instead (the
// write may or may not have taken effect, as the Store contract allows),
// except 409 Conflict, which means this write did not happen and is
// retried here.
func (s *S3Store) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	if err := check(ctx, "put-if-absent", key); err != nil {
		return err
	}
	in := s.putInput(key, data)
	in.IfNoneMatch = aws.String("*")
	noRetry := func(o *s3.Options) { o.RetryMaxAttempts = 1 }
	for attempt := 0; ; attempt++ {
		in.Body = bytes.NewReader(data)
		_, err := s.client.PutObject(ctx, in, noRetry)
		switch status := httpStatus(err); {
		case err == nil:
			return nil
		case status == http.StatusPreconditionFailed:
			return opError("put-if-absent", s.name(key), ErrExists)
		case status == http.StatusConflict && attempt < conflictRetries:
			if werr := sleep(ctx, time.Duration(10<<attempt)*time.Millisecond); werr != nil {
				return s.fail(ctx, "put-if-absent", key, werr)
			}
		default:
			return s.fail(ctx, "put-if-absent", key, err)
		}
	}
}

func (s *S3Store) putInput(key string, data []byte) *s3.PutObjectInput {
	return &s3.PutObjectInput{
		Bucket:        &s.bucket,
		Key:           aws.String(s.prefix + key),
		Body:          bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))),
	}
}

// sleep waits for d or until ctx is done, returning ctx.Err() then.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Get implements Store.
func (s *S3Store) Get(ctx context.Context, key string) ([]byte, error) {
	if err := check(ctx, "get", key); err != nil {
		return nil, err
	}
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: aws.String(s.prefix + key)})
	if err != nil {
		return nil, s.fail(ctx, "get", key, s.notFound(err))
	}
	defer out.Body.Close()
	var buf bytes.Buffer
	if out.ContentLength != nil && *out.ContentLength > 0 {
		buf.Grow(int(*out.ContentLength))
	}
	if _, err := buf.ReadFrom(out.Body); err != nil {
		return nil, s.fail(ctx, "get", key, err)
	}
	if out.ContentLength != nil && int64(buf.Len()) != *out.ContentLength {
		return nil, s.fail(ctx, "get", key, fmt.Errorf("read %d bytes of %d: %w", buf.Len(), *out.ContentLength, io.ErrUnexpectedEOF))
	}
	return buf.Bytes(), nil
}

// Stat implements Stater with a HEAD request.
func (s *S3Store) Stat(ctx context.Context, key string) (Attrs, error) {
	if err := check(ctx, "stat", key); err != nil {
		return Attrs{}, err
	}
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: aws.String(s.prefix + key)})
	if err != nil {
		return Attrs{}, s.fail(ctx, "stat", key, s.notFound(err))
	}
	return Attrs{Size: aws.ToInt64(out.ContentLength)}, nil
}

// notFound returns ErrNotFound if err says the object does not exist,
// and err otherwise. A missing bucket is not a missing blob: GET says
// NoSuchBucket, which stays an error. HEAD responses have no body to tell
// the two apart; a missing bucket then shows at the next List or Put.
func (s *S3Store) notFound(err error) error {
	var api smithy.APIError
	if errors.As(err, &api) && api.ErrorCode() == "NoSuchBucket" {
		return err
	}
	if httpStatus(err) == http.StatusNotFound {
		return ErrNotFound
	}
	return err
}

// List implements Store, following continuation tokens over as many
// pages as the listing takes.
func (s *S3Store) List(ctx context.Context, prefix string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, opError("list", s.name(prefix), err)
	}
	// A prefix that no valid key can have lists nothing. Not sending it
	// also keeps names such as "../" from servers that map keys to files.
	if prefix != "" && ValidKey(prefix) != nil && ValidKey(prefix+"x") != nil {
		return nil, nil
	}
	in := &s3.ListObjectsV2Input{Bucket: &s.bucket, Prefix: aws.String(s.prefix + prefix)}
	if s.pageSize > 0 {
		in.MaxKeys = aws.Int32(s.pageSize)
	}
	var keys []string
	pages := s3.NewListObjectsV2Paginator(s.client, in)
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, s.fail(ctx, "list", prefix, err)
		}
		for _, o := range page.Contents {
			key, ok := strings.CutPrefix(aws.ToString(o.Key), s.prefix)
			if ok && strings.HasPrefix(key, prefix) && ValidKey(key) == nil {
				keys = append(keys, key)
			}
		}
	}
	// S3 lists in UTF-8 byte order already; not every compatible server
	// does.
	slices.Sort(keys)
	return slices.Compact(keys), nil
}

// Delete implements Store. S3 answers a delete of a missing key with
// success, which is what Store asks.
func (s *S3Store) Delete(ctx context.Context, key string) error {
	if err := check(ctx, "delete", key); err != nil {
		return err
	}
	_, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: aws.String(s.prefix + key)})
	if err != nil && !errors.Is(s.notFound(err), ErrNotFound) {
		return s.fail(ctx, "delete", key, err)
	}
	return nil
}

// httpStatus returns the HTTP status code of a failed request, or 0 if
// err carries none (nil, or a failure before a response).
func httpStatus(err error) int {
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

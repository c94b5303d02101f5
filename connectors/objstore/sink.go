package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/weir-stream/weir/connector"
)

// MinPartSize is the smallest part of a multipart upload that S3 accepts
// other than the last: 5 MiB.
const MinPartSize = 5 << 20

// SinkConfig configures NewSink.
type SinkConfig[T any] struct {
	// Location is where the part files go: s3://bucket/prefix with the
	// parameters the package documents. Required.
	Location string
	// Format encodes the records: JSONLines, CSV or Parquet. Required.
	Format Format[T]
	// Bucket, if set, names the directory under the prefix a record's
	// part file is in, such as "dt=2024-05-01/hour=13" (EventTimeBuckets)
	// or "country=NL" (a column): slash-separated names, none empty, "."
	// or "..". Nil puts every part file directly under the prefix.
	Bucket func(T) string
	// Rolling says when a part file is finished before the next
	// checkpoint finishes it anyway.
	Rolling RollingPolicy
	// PartSize is the size of the parts of the multipart uploads; zero
	// means MinPartSize, and less is refused. Each open part file keeps
	// up to this much in memory.
	PartSize int64
	// Now is the clock of the rolling policy; nil means time.Now.
	Now func() time.Time
}

// RollingPolicy says when the sink finishes a part file and starts the
// next one in its bucket. A file is also finished at every checkpoint
// (its upload is then completed when the checkpoint completes), and when
// a sink without checkpoints is flushed. Zero fields never roll. The
// intervals are checked when records arrive, before they are written (a
// writer that gets no records keeps its files until the next checkpoint
// or flush), and the size after each record.
type RollingPolicy struct {
	// MaxFileSize finishes a file once it holds this many bytes (as
	// encoded so far: a Parquet file's buffered row group not counted).
	MaxFileSize int64
	// RolloverInterval finishes a file this long after its first record.
	RolloverInterval time.Duration
	// InactivityInterval finishes a file that got no record for this
	// long.
	InactivityInterval time.Duration
}

// EventTimeBuckets returns a bucket assigner for SinkConfig.Bucket that
// partitions by the hour of a record's event time in UTC, Hive style:
// "dt=2006-01-02/hour=15".
func EventTimeBuckets[T any](eventTime func(T) time.Time) func(T) string {
	return func(v T) string { return eventTime(v).UTC().Format("dt=2006-01-02/hour=15") }
}

// NewSink returns a sink that writes part files under cfg.Location, each
// as a multipart upload, and commits them with checkpoints, exactly-once.
//
// A writer keeps one open part file per bucket. Encoded bytes collect in
// memory until they fill a part (cfg.PartSize), which is then uploaded;
// when the file is finished (by the rolling policy, or at a checkpoint)
// what remains is uploaded as the last part, which may be smaller. So no
// part but the last is under S3's 5 MiB minimum, whatever the checkpoint
// interval, and a small file is one part uploaded at the checkpoint. A
// file's upload is begun with its first record, so that a crash leaves
// every file it interrupted as an upload in progress, which the next
// restore finds and aborts.
//
// With checkpoints the sink commits with them (connector.Committer): at a
// checkpoint barrier every open file is finished and its upload's last
// part uploaded (pre-commit); the uploads finished since the last barrier
// are the transaction the checkpoint records; when the checkpoint
// completes their uploads are completed (commit) and the objects appear.
// A restore completes the restored checkpoint's uploads (again, which is
// harmless), aborts every other upload this subtask left under the
// prefix, and deletes the committed part files of this subtask begun after
// the restored checkpoint (which exist when an older checkpoint is
// restored because a newer one is unusable). A prefix must therefore hold
// the output of one job only. An upload killed with its process stays
// until a restore aborts it; a job that is never restored leaves it to
// the bucket's lifecycle rule for incomplete multipart uploads.
//
// Without checkpoints every file is finished and completed when the
// writer is flushed or closed, and the output is at-least-once.
//
// Open fails with an error wrapping connector.ErrConfig if the
// configuration is incomplete or the location's bucket is missing or
// refuses the credentials. A bucket name the assigner returns that is not
// a valid directory fails the writer with an error naming it.
func NewSink[T any](cfg SinkConfig[T]) connector.Sink[T] { return &sink[T]{cfg: cfg} }

type sink[T any] struct{ cfg SinkConfig[T] }

func (s *sink[T]) Open(ctx context.Context, info connector.SubtaskInfo) (connector.Writer[T], error) {
	if err := info.Validate(); err != nil {
		return nil, err
	}
	cfg := s.cfg
	switch {
	case cfg.Location == "":
		return nil, connector.ConfigError(errors.New("objstore: sink has no location"))
	case cfg.Format == nil:
		return nil, connector.ConfigError(fmt.Errorf("objstore: sink %s has no format", cfg.Location))
	case cfg.PartSize != 0 && cfg.PartSize < MinPartSize:
		return nil, connector.ConfigError(fmt.Errorf("objstore: sink %s: part size %d is under S3's minimum of %d bytes", cfg.Location, cfg.PartSize, MinPartSize))
	}
	if cfg.PartSize == 0 {
		cfg.PartSize = MinPartSize
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	st, err := open(ctx, cfg.Location)
	if err != nil {
		return nil, err
	}
	return &writer[T]{cfg: cfg, st: st, subtask: info.Subtask, parallelism: info.Parallelism,
		id: fmt.Sprintf("%016x", rand.Uint64()), open: map[string]*partFile[T]{}}, nil
}

type writer[T any] struct {
	cfg         SinkConfig[T]
	st          *store
	subtask     int
	parallelism int
	id          string // random, in the names of the writer's files
	txn         bool   // transactional mode, after Recover
	epoch       int64  // the epoch of the files begun now
	seq         int
	open        map[string]*partFile[T] // by bucket
	finished    []finishedUpload        // since the last pre-commit
	err         error                   // sticky
	closed      bool
}

// partFile is an open part file: its encoder, the bytes not yet uploaded
// and the parts uploaded so far.
type partFile[T any] struct {
	key         string
	enc         Encoder[T]
	buf         bytes.Buffer
	size        int64 // bytes uploaded so far
	first, last time.Time
	uploadID    string
	parts       []types.CompletedPart
}

// finishedUpload is an upload whose parts are all uploaded: the
// transaction a checkpoint records and its commit completes.
type finishedUpload struct {
	Key   string     `json:"k"`
	ID    string     `json:"u"`
	Parts []partETag `json:"p"`
}

type partETag struct {
	N    int32  `json:"n"`
	ETag string `json:"e"`
}

func (w *writer[T]) Write(ctx context.Context, batch []T) error {
	if w.err != nil {
		return w.err
	}
	now := w.cfg.Now()
	if w.err = w.rollByTime(ctx, now); w.err != nil {
		return w.err
	}
	for i := range batch {
		b := ""
		if w.cfg.Bucket != nil {
			b = w.cfg.Bucket(batch[i])
			if err := validBucket(b); err != nil {
				w.err = fmt.Errorf("objstore: sink %s: bucket %q of a record: %w", w.st.location, b, err)
				return w.err
			}
		}
		f := w.open[b]
		if f == nil {
			if f, w.err = w.newFile(ctx, b, now); w.err != nil {
				return w.err
			}
		}
		if err := f.enc.Encode(&batch[i]); err != nil {
			w.err = fmt.Errorf("objstore: encoding a record for %s: %w", f.key, err)
			return w.err
		}
		f.last = now
		for f.buf.Len() >= int(w.cfg.PartSize) {
			if w.err = w.uploadPart(ctx, f, int(w.cfg.PartSize)); w.err != nil {
				return w.err
			}
		}
		if m := w.cfg.Rolling.MaxFileSize; m > 0 && f.size+int64(f.buf.Len()) >= m {
			if w.err = w.finish(ctx, b, f); w.err != nil {
				return w.err
			}
		}
	}
	return nil
}

// validBucket checks a bucket name is a relative directory path.
func validBucket(b string) error {
	if b == "" {
		return nil
	}
	if path.Clean(b) != b || strings.HasPrefix(b, "/") || strings.HasPrefix(b, "../") || b == ".." || b == "." {
		return errors.New("not a clean relative path (no leading or doubled slash, no . or ..)")
	}
	return nil
}

// newFile opens the next part file of bucket and begins its upload.
func (w *writer[T]) newFile(ctx context.Context, bucket string, now time.Time) (*partFile[T], error) {
	w.seq++
	f := &partFile[T]{key: w.st.partKey(bucket, w.subtask, w.epoch, w.id, w.seq, w.cfg.Format.Extension()), first: now, last: now}
	out, err := w.st.client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: &w.st.bucket, Key: &f.key})
	if err != nil {
		return nil, fmt.Errorf("objstore: beginning the upload of s3://%s/%s: %w", w.st.bucket, f.key, err)
	}
	f.uploadID = aws.ToString(out.UploadId)
	f.enc = w.cfg.Format.NewEncoder(&f.buf)
	w.open[bucket] = f
	return f, nil
}

// rollByTime finishes the files the rolling policy's intervals say are
// done.
func (w *writer[T]) rollByTime(ctx context.Context, now time.Time) error {
	p := w.cfg.Rolling
	if p.RolloverInterval <= 0 && p.InactivityInterval <= 0 {
		return nil
	}
	for b, f := range w.open {
		if p.RolloverInterval > 0 && now.Sub(f.first) >= p.RolloverInterval ||
			p.InactivityInterval > 0 && now.Sub(f.last) >= p.InactivityInterval {
			if err := w.finish(ctx, b, f); err != nil {
				return err
			}
		}
	}
	return nil
}

// uploadPart uploads the first n bytes of f's buffer as its next part.
func (w *writer[T]) uploadPart(ctx context.Context, f *partFile[T], n int) error {
	num := int32(len(f.parts) + 1)
	data := f.buf.Next(n)
	out, err := w.st.client.UploadPart(ctx, &s3.UploadPartInput{Bucket: &w.st.bucket, Key: &f.key, UploadId: &f.uploadID,
		PartNumber: &num, Body: bytes.NewReader(data), ContentLength: aws.Int64(int64(len(data)))})
	if err != nil {
		return fmt.Errorf("objstore: uploading part %d of s3://%s/%s: %w", num, w.st.bucket, f.key, err)
	}
	f.parts = append(f.parts, types.CompletedPart{PartNumber: &num, ETag: out.ETag})
	f.size += int64(len(data))
	return nil
}

// finish ends f's encoding, uploads what remains as its last part and
// moves its upload to the finished ones (completing it at once without
// checkpoints).
func (w *writer[T]) finish(ctx context.Context, bucket string, f *partFile[T]) error {
	delete(w.open, bucket)
	if err := f.enc.Close(); err != nil {
		return fmt.Errorf("objstore: finishing %s: %w", f.key, err)
	}
	for f.buf.Len() > 0 || len(f.parts) == 0 {
		n := f.buf.Len()
		if n >= 2*int(w.cfg.PartSize) { // keep every part but the last at PartSize
			n = int(w.cfg.PartSize)
		}
		if err := w.uploadPart(ctx, f, n); err != nil {
			return err
		}
	}
	u := finishedUpload{Key: f.key, ID: f.uploadID}
	for _, p := range f.parts {
		u.Parts = append(u.Parts, partETag{N: aws.ToInt32(p.PartNumber), ETag: aws.ToString(p.ETag)})
	}
	if !w.txn {
		return w.st.complete(ctx, u)
	}
	w.finished = append(w.finished, u)
	return nil
}

// finishAll finishes every open file.
func (w *writer[T]) finishAll(ctx context.Context) error {
	for b, f := range w.open {
		if err := w.finish(ctx, b, f); err != nil {
			return err
		}
	}
	return nil
}

// Flush finishes and completes every open file without checkpoints; with
// them, PreCommit does the work.
func (w *writer[T]) Flush(ctx context.Context) error {
	if w.err != nil || w.txn {
		return w.err
	}
	w.err = w.finishAll(ctx)
	return w.err
}

// Close completes the open files without checkpoints, if nothing failed.
// With checkpoints it aborts the uploads of the files not yet
// pre-committed: their records belong to no checkpoint. Uploads that
// failed or were pre-committed are left, for a restore to abort or
// complete.
func (w *writer[T]) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if !w.txn && w.err == nil {
		return w.finishAll(ctx)
	}
	for _, f := range w.open {
		if f.uploadID != "" {
			// Best effort: a restore aborts what this leaves.
			_, _ = w.st.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: &w.st.bucket, Key: &f.key, UploadId: &f.uploadID})
		}
	}
	return nil
}

package objstore

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/weir-stream/weir/connector"
)

// SourceConfig configures NewSource.
type SourceConfig[T any] struct {
	// Location is the prefix to read: s3://bucket/prefix with the
	// parameters the package documents. Required.
	Location string
	// Format decodes the objects. Required.
	Format Format[T]
	// Match selects the objects to read by key (the whole key, prefix
	// included); nil means the keys ending in the format's extension.
	Match func(key string) bool
	// DiscoveryInterval, if positive, makes the source continuous: it
	// lists the prefix again this long after each listing and reads the
	// objects that appeared, and never ends. Zero reads the objects
	// listed at Open and ends.
	DiscoveryInterval time.Duration
}

// NewSource returns a source of the records of the objects under
// cfg.Location, as Flink's FileSource reads a directory.
//
// Each object belongs to one subtask, by a hash of its key, so an object
// is read by one reader, whole and in order, and a newly discovered object
// goes to the same subtask whatever the others do. A reader reads its
// objects in key order; it reads an object into memory whole before it
// decodes it. An object that is changed after it was listed is read as
// it is when its turn comes; one deleted meanwhile fails the reader with
// an error naming it. Objects are expected to be written once and never
// changed, as the sink's are.
//
// A reader's position names the objects it finished and the one it is
// in with the number of its records already returned; reopened at it, the
// reader skips the finished objects and that many records. So positions
// grow with the number of objects read (as Flink's source keeps the paths
// it processed). The source is a connector.Rescaler: at another
// parallelism the finished objects and the partly read ones are dealt to
// the new subtasks by the same hash.
//
// A record that does not decode fails the job with a
// connector.MalformedError naming the object and the record. Open fails
// as the sink's does for a bad location.
func NewSource[T any](cfg SourceConfig[T]) connector.Source[T] { return &source[T]{cfg: cfg} }

type source[T any] struct{ cfg SourceConfig[T] }

// sourcePosition is a reader's position: the objects finished and those
// partly read, with the records returned from each. A reader has at most
// one partly read object; a rescaled position may have several.
type sourcePosition struct {
	Done    []string         `json:"done,omitempty"`
	Partial map[string]int64 `json:"partial,omitempty"`
}

func decodeSourcePosition(pos connector.Position) (sourcePosition, error) {
	var p sourcePosition
	if len(pos) == 0 {
		return p, nil
	}
	if err := json.Unmarshal(pos, &p); err != nil {
		return p, fmt.Errorf("objstore: corrupt source position %q: %w", pos, err)
	}
	return p, nil
}

// owner returns the subtask of n that reads key.
func owner(key string, n int) int {
	h := fnv.New64a()
	h.Write([]byte(key))
	return int(h.Sum64() % uint64(n))
}

func (s *source[T]) Open(ctx context.Context, info connector.SubtaskInfo, pos connector.Position) (connector.Reader[T], error) {
	if err := info.Validate(); err != nil {
		return nil, err
	}
	cfg := s.cfg
	if cfg.Location == "" {
		return nil, connector.ConfigError(fmt.Errorf("objstore: source has no location"))
	}
	if cfg.Format == nil {
		return nil, connector.ConfigError(fmt.Errorf("objstore: source %s has no format", cfg.Location))
	}
	if cfg.Match == nil {
		ext := cfg.Format.Extension()
		cfg.Match = func(key string) bool { return strings.HasSuffix(key, ext) }
	}
	p, err := decodeSourcePosition(pos)
	if err != nil {
		return nil, err
	}
	st, err := open(ctx, cfg.Location)
	if err != nil {
		return nil, err
	}
	r := &reader[T]{cfg: cfg, st: st, subtask: info.Subtask, parallelism: info.Parallelism,
		done: map[string]bool{}, partial: p.Partial, queued: map[string]bool{}}
	for _, k := range p.Done {
		r.done[k] = true
	}
	if r.partial == nil {
		r.partial = map[string]int64{}
	}
	if err := r.discover(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

type reader[T any] struct {
	cfg         SourceConfig[T]
	st          *store
	subtask     int
	parallelism int
	done        map[string]bool
	partial     map[string]int64 // records returned, by object; holds cur
	queued      map[string]bool  // in queue or cur
	queue       []string         // objects to read, in key order
	cur         string           // the object being read, "" between objects
	dec         Decoder[T]
	nextList    time.Time
}

// discover lists the prefix and queues the subtask's objects not read
// yet, in key order. Partly read objects that vanished are forgotten.
func (r *reader[T]) discover(ctx context.Context) error {
	var found []string
	pages := s3.NewListObjectsV2Paginator(r.st.client, &s3.ListObjectsV2Input{Bucket: &r.st.bucket, Prefix: aws.String(r.st.prefix)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("objstore: listing %s: %w", r.st.location, err)
		}
		for _, o := range page.Contents {
			k := aws.ToString(o.Key)
			if r.cfg.Match(k) && owner(k, r.parallelism) == r.subtask && !r.done[k] && !r.queued[k] {
				found = append(found, k)
			}
		}
	}
	slices.Sort(found)
	for _, k := range found {
		r.queued[k] = true
	}
	// Keep the queue in key order: partly read objects come first, as
	// they were begun before anything discovered now.
	r.queue = append(r.queue, found...)
	slices.SortStableFunc(r.queue, func(a, b string) int {
		_, pa := r.partial[a]
		_, pb := r.partial[b]
		switch {
		case pa && !pb:
			return -1
		case pb && !pa:
			return 1
		}
		return strings.Compare(a, b)
	})
	r.nextList = time.Now().Add(r.cfg.DiscoveryInterval)
	return nil
}

func (r *reader[T]) Read(ctx context.Context, buf []T) (int, error) {
	n := 0
	for n < len(buf) {
		if r.dec == nil {
			if len(r.queue) == 0 {
				if n > 0 {
					return n, nil
				}
				if r.cfg.DiscoveryInterval <= 0 {
					return 0, io.EOF
				}
				if wait := time.Until(r.nextList); wait > 0 {
					// Readers block no longer than about 10ms.
					if err := sleepCtx(ctx, min(wait, 10*time.Millisecond)); err != nil {
						return 0, err
					}
					return 0, nil
				}
				if err := r.discover(ctx); err != nil {
					return 0, err
				}
				continue
			}
			if err := r.next(ctx); err != nil {
				return n, err
			}
			continue
		}
		if err := r.dec.Decode(&buf[n]); err != nil {
			if err == io.EOF {
				r.done[r.cur] = true
				delete(r.partial, r.cur)
				delete(r.queued, r.cur)
				r.cur, r.dec = "", nil
				continue
			}
			return n, &connector.MalformedError{Where: fmt.Sprintf("s3://%s/%s record %d", r.st.bucket, r.cur, r.partial[r.cur]+1), Err: err}
		}
		r.partial[r.cur]++
		n++
	}
	return n, nil
}

// next opens the first queued object and skips the records already
// returned from it.
func (r *reader[T]) next(ctx context.Context) error {
	key := r.queue[0]
	r.queue = r.queue[1:]
	data, err := r.st.get(ctx, key)
	if err != nil {
		return err
	}
	dec, err := r.cfg.Format.NewDecoder(data, "s3://"+r.st.bucket+"/"+key)
	if err != nil {
		return &connector.MalformedError{Where: "s3://" + r.st.bucket + "/" + key, Err: err}
	}
	var skip T
	for i := int64(0); i < r.partial[key]; i++ {
		if err := dec.Decode(&skip); err != nil {
			return fmt.Errorf("objstore: s3://%s/%s has fewer than the %d records read from it before: %w", r.st.bucket, key, r.partial[key], err)
		}
	}
	r.cur, r.dec = key, dec
	if _, ok := r.partial[key]; !ok {
		r.partial[key] = 0
	}
	return nil
}

func (r *reader[T]) Position() connector.Position {
	p := sourcePosition{Partial: r.partial}
	for k := range r.done {
		p.Done = append(p.Done, k)
	}
	slices.Sort(p.Done)
	if len(p.Partial) == 0 {
		p.Partial = nil
	}
	data, _ := json.Marshal(p) // strings and numbers only
	return data
}

func (r *reader[T]) Close() error { return nil }

// Rescale deals the old readers' finished and partly read objects to n
// new readers by the hash that assigns objects to subtasks.
func (s *source[T]) Rescale(old []connector.Position, n int) ([]connector.Position, error) {
	news := make([]sourcePosition, n)
	for i, pos := range old {
		p, err := decodeSourcePosition(pos)
		if err != nil {
			return nil, fmt.Errorf("subtask %d: %w", i, err)
		}
		for _, k := range p.Done {
			o := owner(k, n)
			news[o].Done = append(news[o].Done, k)
		}
		for k, c := range p.Partial {
			o := owner(k, n)
			if news[o].Partial == nil {
				news[o].Partial = map[string]int64{}
			}
			news[o].Partial[k] = c
		}
	}
	out := make([]connector.Position, n)
	for i, p := range news {
		if len(p.Done) == 0 && len(p.Partial) == 0 {
			continue
		}
		slices.Sort(p.Done)
		data, err := json.Marshal(p)
		if err != nil {
			return nil, err
		}
		out[i] = data
	}
	return out, nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

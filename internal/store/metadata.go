package store

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"slices"

	"github.com/weir-stream/weir/internal/blob"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/plan"
)

// Handle points at one state blob and says how to recognize it intact.
type Handle struct {
	// Key is the blob's key in the blob store.
	Key string `json:"key"`
	// Size is the blob's length in bytes.
	Size int64 `json:"size"`
	// CRC32C is the Castagnoli CRC-32 of the blob's data.
	CRC32C uint32 `json:"crc32c"`
	// Base, if set, is the location (a directory or blob URL) of the
	// store Key is in, instead of the checkpoint store: a savepoint's
	// (LoadSavepoint sets it; a savepoint's own metadata has none).
	Base string `json:"base,omitempty"`
	// Shared names the job's shared state files the blob refers to
	// (SharedFiles): they are kept while a retained checkpoint names them.
	Shared []string `json:"shared,omitempty"`
	// SharedBytes is the size of those files, and Uploaded the bytes of
	// them this checkpoint uploaded (the others earlier ones did).
	SharedBytes int64 `json:"shared_bytes,omitempty"`
	Uploaded    int64 `json:"uploaded_bytes,omitempty"`
}

// TaskState lists the state blobs one task wrote for a checkpoint. What
// they hold (keyed state, timers, source positions) is the task's
// business.
type TaskState struct {
	Task    dataflow.SubtaskID `json:"task"`
	Handles []Handle           `json:"handles"`
}

// Metadata describes one completed checkpoint. Writing it (Commit) is what
// completes the checkpoint.
type Metadata struct {
	Job string `json:"job"`
	ID  uint64 `json:"id"`
	// TimestampMillis is when the checkpoint was triggered, in
	// milliseconds since the Unix epoch.
	TimestampMillis int64 `json:"timestamp_ms"`
	// Fingerprint identifies the pipeline that wrote the checkpoint, so a
	// restore into a different pipeline can be refused.
	Fingerprint string `json:"fingerprint"`
	// Parallelism maps each vertex id to its number of subtasks.
	Parallelism map[int]int `json:"parallelism"`
	// MaxParallelism is the number of key groups keyed state is split
	// into; 0 in checkpoints of a weir that did not record it.
	MaxParallelism int `json:"max_parallelism,omitempty"`
	// Operators lists the operators of the pipeline, vertex by vertex in
	// chain order: what a restore compares to name an operator that was
	// added, removed, renamed or chained differently.
	Operators []Operator `json:"operators,omitempty"`
	// Settings are the job's settings that its results depend on, by name
	// (for jobs run by the command line, the job's flags: "--window").
	Settings map[string]string `json:"settings,omitempty"`
	// Guarantee is the recovery semantics the checkpoint was taken under:
	// "exactly-once" or "at-least-once".
	Guarantee string `json:"guarantee,omitempty"`
	// StateBackend is the state backend that wrote the checkpoint's
	// keyed state: "" (the memory backend) or "pebble", whose state
	// refers to shared files only that backend reads.
	StateBackend string `json:"state_backend,omitempty"`
	// Run names the run that took the checkpoint: a fresh run of the job
	// starts a new one, a restored run continues its checkpoint's.
	Run string `json:"run,omitempty"`
	// Final marks the checkpoint taken after every task finished its
	// input: restoring it reads nothing and only commits its output.
	Final bool `json:"final,omitempty"`
	// Tasks holds the state of each task that has any.
	Tasks []TaskState `json:"tasks"`
	// Extra is free-form, for facts that do not deserve a field yet.
	Extra map[string]string `json:"extra,omitempty"`
}

// Operator identifies one operator of the pipeline that wrote a
// checkpoint.
type Operator struct {
	// Vertex is the task the operator is chained into.
	Vertex int    `json:"vertex"`
	ID     int    `json:"id"`
	Kind   string `json:"kind"`
	Name   string `json:"name"`
	// UID is the operator's identity across versions of the job
	// (plan.DefaultUIDs without one of its own); empty in checkpoints of
	// a weir that did not record it, whose operators then have the uids
	// their names give (WithUIDs).
	UID string `json:"uid,omitempty"`
}

// WithUIDs returns ops with the uid filled in where it is missing (in
// checkpoints of a weir that recorded none): the one the operator's name
// gives, as plan.DefaultUIDs derives it in the order the operators were
// added (by ID).
func WithUIDs(ops []Operator) []Operator {
	out := slices.Clone(ops)
	byID := slices.Clone(ops)
	slices.SortFunc(byID, func(a, b Operator) int { return a.ID - b.ID })
	names := make([]string, len(byID))
	for i, o := range byID {
		names[i] = o.Name
	}
	uids := map[int]string{}
	for i, u := range plan.DefaultUIDs(names) {
		uids[byID[i].ID] = u
	}
	for i := range out {
		if out[i].UID == "" {
			out[i].UID = uids[out[i].ID]
		}
	}
	return out
}

// Handles returns every state handle of the checkpoint, task by task.
func (m *Metadata) Handles() []Handle {
	var hs []Handle
	for _, t := range m.Tasks {
		hs = append(hs, t.Handles...)
	}
	return hs
}

// validate checks the metadata's internal consistency.
func (m *Metadata) validate() error {
	if err := checkJob(m.Job); err != nil {
		return err
	}
	for v, p := range m.Parallelism {
		if p < 1 {
			return fmt.Errorf("vertex %d has parallelism %d", v, p)
		}
	}
	seen := map[dataflow.SubtaskID]bool{}
	for _, t := range m.Tasks {
		p, ok := m.Parallelism[t.Task.Vertex]
		if !ok {
			return fmt.Errorf("task %s: vertex %d has no parallelism", taskName(t.Task), t.Task.Vertex)
		}
		if t.Task.Subtask < 0 || t.Task.Subtask >= p {
			return fmt.Errorf("task %s: subtask out of range [0, %d)", taskName(t.Task), p)
		}
		if seen[t.Task] {
			return fmt.Errorf("task %s listed twice", taskName(t.Task))
		}
		seen[t.Task] = true
		for _, h := range t.Handles {
			if err := blob.ValidKey(h.Key); err != nil {
				return fmt.Errorf("task %s: %w", taskName(t.Task), err)
			}
			if h.Size < 0 {
				return fmt.Errorf("task %s: handle %s has size %d", taskName(t.Task), h.Key, h.Size)
			}
		}
	}
	return nil
}

// The metadata envelope: a 16-byte header, then a JSON body.
//
//	offset 0   4 bytes  magic "WCKP"
//	offset 4   4 bytes  format version, big-endian uint32 (1)
//	offset 8   4 bytes  body length in bytes, big-endian uint32
//	offset 12  4 bytes  CRC-32C (Castagnoli) of the body, big-endian
//	offset 16  body     Metadata as JSON
//
// The length catches truncation (and trailing garbage), the checksum
// catches changed bytes, the magic catches a blob that is not metadata at
// all, and the version lets a later format be told apart. JSON keeps the
// body readable with `tail -c +17 _metadata | jq`.
const (
	envelopeMagic   = "WCKP"
	envelopeVersion = 1
	headerLen       = 16
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func checksum(data []byte) uint32 { return crc32.Checksum(data, castagnoli) }

// encodeMetadata returns m in the envelope.
func encodeMetadata(m *Metadata) ([]byte, error) {
	return encodeEnvelope(envelopeMagic, envelopeVersion, m)
}

// decodeMetadata opens the envelope. Every error means the data is not
// intact metadata; the caller wraps it with ErrCorrupt and the key.
func decodeMetadata(data []byte) (Metadata, error) {
	var m Metadata
	if err := decodeEnvelope(envelopeMagic, envelopeVersion, data, &m); err != nil {
		return Metadata{}, err
	}
	if err := m.validate(); err != nil {
		return Metadata{}, fmt.Errorf("inconsistent: %v", err)
	}
	return m, nil
}

// encodeEnvelope returns v as JSON in an envelope with magic and version.
func encodeEnvelope(magic string, version uint32, v any) ([]byte, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if uint64(len(body)) > uint64(^uint32(0)) {
		return nil, fmt.Errorf("metadata body of %d bytes is too large", len(body))
	}
	out := make([]byte, headerLen, headerLen+len(body))
	copy(out, magic)
	binary.BigEndian.PutUint32(out[4:], version)
	binary.BigEndian.PutUint32(out[8:], uint32(len(body)))
	binary.BigEndian.PutUint32(out[12:], checksum(body))
	return append(out, body...), nil
}

// decodeEnvelope opens an envelope with magic and version into v.
func decodeEnvelope(magic string, version uint32, data []byte, v any) error {
	if len(data) < headerLen {
		return fmt.Errorf("truncated: %d bytes, shorter than the %d-byte header", len(data), headerLen)
	}
	if string(data[:4]) != magic {
		return fmt.Errorf("bad magic %q, want %q", data[:4], magic)
	}
	if got := binary.BigEndian.Uint32(data[4:]); got != version {
		return fmt.Errorf("unknown format version %d (this build reads %d)", got, version)
	}
	body := data[headerLen:]
	if n := binary.BigEndian.Uint32(data[8:]); uint64(n) != uint64(len(body)) {
		return fmt.Errorf("length mismatch (truncated?): body is %d bytes, header says %d", len(body), n)
	}
	if got, want := checksum(body), binary.BigEndian.Uint32(data[12:]); got != want {
		return fmt.Errorf("checksum mismatch: crc32c %08x, header says %08x", got, want)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("body does not decode: %v", err)
	}
	return nil
}

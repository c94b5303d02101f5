package store

import (
	"reflect"
	"strings"
	"testing"

	"github.com/weir-stream/weir/internal/dataflow"
)

// formatBody is the JSON body of metadata as weir writes it: the on-disk
// format that checkpoints written by earlier builds are read back in, and
// that `tail -c +17 _metadata | jq` shows. A change to it is a format
// change, not a refactoring.
const formatBody = `{"job":"wc","id":7,"timestamp_ms":1700000000007,"fingerprint":"pipeline-v1",` +
	`"parallelism":{"0":2,"1":1},"max_parallelism":128,` +
	`"operators":[{"vertex":0,"id":1,"kind":"source","name":"src"},{"vertex":1,"id":3,"kind":"sink","name":"out"}],` +
	`"settings":{"--window":"10s"},"guarantee":"exactly-once","run":"r1",` +
	`"tasks":[{"task":{"vertex":0,"subtask":1},"handles":[{"key":"jobs/wc/chk-000000000007/state/0-1","size":12,"crc32c":305419896}]},` +
	`{"task":{"vertex":1,"subtask":0},"handles":[]}],` +
	`"extra":{"writer":"test"}}`

func formatMetadata() Metadata {
	return Metadata{
		Job: "wc", ID: 7, TimestampMillis: 1_700_000_000_007, Fingerprint: "pipeline-v1",
		Parallelism: map[int]int{0: 2, 1: 1}, MaxParallelism: 128,
		Operators: []Operator{{Vertex: 0, ID: 1, Kind: "source", Name: "src"}, {Vertex: 1, ID: 3, Kind: "sink", Name: "out"}},
		Settings:  map[string]string{"--window": "10s"}, Guarantee: "exactly-once", Run: "r1",
		Tasks: []TaskState{
			{Task: dataflow.SubtaskID{Vertex: 0, Subtask: 1}, Handles: []Handle{{Key: "jobs/wc/chk-000000000007/state/0-1", Size: 12, CRC32C: 0x12345678}}},
			{Task: dataflow.SubtaskID{Vertex: 1, Subtask: 0}, Handles: []Handle{}},
		},
		Extra: map[string]string{"writer": "test"},
	}
}

// TestMetadataFormatIsStable pins the metadata body byte for byte, both
// ways: what this build writes, and that it reads it back unchanged.
func TestMetadataFormatIsStable(t *testing.T) {
	m := formatMetadata()
	data, err := encodeMetadata(&m)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(data[headerLen:]); got != formatBody {
		t.Fatalf("metadata body:\n got %s\nwant %s", got, formatBody)
	}
	back, err := decodeMetadata(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, m) {
		t.Fatalf("decoded %+v, want %+v", back, m)
	}
}

// TestStateKeyNamesTaskWithDash pins the state blob's name: vertex and
// subtask joined by a dash, as in every checkpoint already written.
func TestStateKeyNamesTaskWithDash(t *testing.T) {
	if got, want := stateKey("wc", 7, dataflow.SubtaskID{Vertex: 0, Subtask: 1}), "jobs/wc/chk-000000000007/state/0-1"; got != want {
		t.Fatalf("stateKey = %q, want %q", got, want)
	}
}

// TestInconsistentMetadataNamesTheTask pins how the errors of validation
// name a task: as its state blob is named.
func TestInconsistentMetadataNamesTheTask(t *testing.T) {
	m := formatMetadata()
	m.Tasks = append(m.Tasks, m.Tasks[0])
	err := m.validate()
	if err == nil || !strings.Contains(err.Error(), "task 0-1 listed twice") {
		t.Fatalf("validate() = %v, want an error naming task 0-1 as listed twice", err)
	}
}

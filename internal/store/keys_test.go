package store

import (
	"encoding/binary"
	"slices"
	"strings"
	"testing"

	"github.com/weir-stream/weir/internal/dataflow"
)

func TestKeysFollowTheLayout(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{metadataKey("wc", 17), "jobs/wc/chk-000000000017/_metadata"},
		{stateKey("wc", 17, dataflow.SubtaskID{Vertex: 3, Subtask: 12}), "jobs/wc/chk-000000000017/state/3-12"},
		{checkpointPrefix("wc", 0), "jobs/wc/chk-000000000000/"},
		{metadataKey("wc", 1234567890123), "jobs/wc/chk-1234567890123/_metadata"},
	} {
		if tc.got != tc.want {
			t.Errorf("key = %q, want %q", tc.got, tc.want)
		}
	}
}

func TestPaddedIDsSortNumerically(t *testing.T) {
	ids := []uint64{100, 9, 10, 1, 999_999_999_999}
	var keys []string
	for _, id := range ids {
		keys = append(keys, metadataKey("j", id))
	}
	slices.Sort(keys)
	var got []uint64
	for _, k := range keys {
		p, ok := parseKey("j", k)
		if !ok || !p.metadata {
			t.Fatalf("parseKey(%q) = %+v, %v", k, p, ok)
		}
		got = append(got, p.id)
	}
	if want := []uint64{1, 9, 10, 100, 999_999_999_999}; !slices.Equal(got, want) {
		t.Errorf("sorted keys give ids %v, want %v", got, want)
	}
}

func TestParseKeyIgnoresKeysOutsideTheLayout(t *testing.T) {
	for _, k := range []string{"jobs/j/chk-1", "jobs/j/chk-/x", "jobs/j/chk-x/_metadata", "jobs/j/chk-1/", "jobs/jj/chk-1/_metadata", "jobs/j/other"} {
		if p, ok := parseKey("j", k); ok {
			t.Errorf("parseKey(%q) = %+v, want not part of the layout", k, p)
		}
	}
	if p, ok := parseKey("j", stateKey("j", 5, dataflow.SubtaskID{Vertex: 1, Subtask: 2})); !ok || p.id != 5 || p.metadata {
		t.Errorf("parseKey of a state key = %+v, %v", p, ok)
	}
}

func TestTheEnvelopeLayout(t *testing.T) {
	m := &Metadata{Job: "wc", ID: 3, Parallelism: map[int]int{0: 1}}
	data, err := encodeMetadata(m)
	if err != nil {
		t.Fatal(err)
	}
	body := data[headerLen:]
	if string(data[:4]) != "WCKP" ||
		binary.BigEndian.Uint32(data[4:]) != 1 ||
		binary.BigEndian.Uint32(data[8:]) != uint32(len(body)) ||
		binary.BigEndian.Uint32(data[12:]) != checksum(body) {
		t.Errorf("header % x does not match the documented layout", data[:headerLen])
	}
	if !strings.HasPrefix(string(body), `{"job":"wc","id":3,`) {
		t.Errorf("body %s is not the metadata as JSON", body)
	}
	got, err := decodeMetadata(data)
	if err != nil || got.Job != "wc" || got.ID != 3 {
		t.Errorf("decode = %+v, %v", got, err)
	}
}

func TestEveryFlippedBitOfTheEnvelopeIsCaught(t *testing.T) {
	m := &Metadata{Job: "wc", ID: 3, Fingerprint: "f", Parallelism: map[int]int{0: 2},
		Tasks: []TaskState{{Task: dataflow.SubtaskID{Vertex: 0, Subtask: 1}, Handles: []Handle{{Key: "k", Size: 4, CRC32C: 7}}}}}
	data, err := encodeMetadata(m)
	if err != nil {
		t.Fatal(err)
	}
	for i := range len(data) * 8 {
		bad := slices.Clone(data)
		bad[i/8] ^= 1 << (i % 8)
		if _, err := decodeMetadata(bad); err == nil {
			t.Fatalf("flipping bit %d of byte %d went unnoticed", i%8, i/8)
		}
	}
	for n := range len(data) {
		if _, err := decodeMetadata(data[:n]); err == nil {
			t.Fatalf("truncation to %d bytes went unnoticed", n)
		}
	}
}

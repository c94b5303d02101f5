package hybrid

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/weir-stream/weir/connector"
)

const positionVersion = 1

// position is a hybrid reader's place: its stage, the End the stage was
// built from, and the stage reader's position (nil: its start).
type position struct {
	stage int
	end   End
	inner connector.Position
}

// start is the position of a fresh reader: the first stage's start.
var start = position{end: End{EventTime: math.MinInt64}}

// encodePosition writes the version, the stage, the End (its stage,
// event time and position) and the inner position, each byte string
// with a presence flag and its length, so that nil stays nil.
func encodePosition(p position) connector.Position {
	b := []byte{positionVersion}
	b = binary.AppendUvarint(b, uint64(p.stage))
	b = binary.AppendUvarint(b, uint64(p.end.Stage))
	b = binary.AppendVarint(b, p.end.EventTime)
	b = appendBytes(b, p.end.Position)
	return appendBytes(b, p.inner)
}

func appendBytes(b, v []byte) []byte {
	if v == nil {
		return append(b, 0)
	}
	b = append(b, 1)
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

func decodePosition(pos connector.Position) (position, error) {
	if pos == nil {
		return start, nil
	}
	bad := func(what string) (position, error) {
		return position{}, fmt.Errorf("hybrid source: corrupt position (%s): %x", what, []byte(pos))
	}
	if len(pos) == 0 || pos[0] != positionVersion {
		return bad("version")
	}
	b := []byte(pos[1:])
	var p position
	stage, k := binary.Uvarint(b)
	if k <= 0 || stage > math.MaxInt32 {
		return bad("stage")
	}
	b = b[k:]
	endStage, k := binary.Uvarint(b)
	if k <= 0 || endStage > math.MaxInt32 {
		return bad("ended stage")
	}
	b = b[k:]
	p.stage, p.end.Stage = int(stage), int(endStage)
	if p.end.EventTime, k = binary.Varint(b); k <= 0 {
		return bad("event time")
	}
	b = b[k:]
	var ok bool
	if p.end.Position, b, ok = readBytes(b); !ok {
		return bad("ended position")
	}
	if p.inner, b, ok = readBytes(b); !ok {
		return bad("stage position")
	}
	if len(b) != 0 {
		return bad("trailing bytes")
	}
	return p, nil
}

func readBytes(b []byte) (connector.Position, []byte, bool) {
	if len(b) == 0 || b[0] > 1 {
		return nil, nil, false
	}
	if b[0] == 0 {
		return nil, b[1:], true
	}
	b = b[1:]
	n, k := binary.Uvarint(b)
	if k <= 0 || uint64(len(b)-k) < n {
		return nil, nil, false
	}
	return connector.Position(append([]byte{}, b[k:k+int(n)]...)), b[k+int(n):], true
}

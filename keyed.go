package weir

import (
	"fmt"
	"reflect"

	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/internal/operator/keyed"
	"github.com/weir-stream/weir/internal/plan"
	"github.com/weir-stream/weir/internal/task"
)

// KeyedStream is a stream partitioned by a key: all records with the same
// key go to the same subtask, in the order each upstream subtask sent them,
// and keyed operators keep their state per key.
type KeyedStream[K comparable, T any] struct {
	s        Stream[T]
	key      func(T) K
	keyCodec codec.Codec[K]
}

// KeyBy partitions s by key(record). The key decides the record's key group
// (a stable hash of the key modulo the pipeline's max parallelism), and the
// key group decides the subtask.
func KeyBy[T any, K comparable](s Stream[T], key func(T) K) KeyedStream[K, T] {
	return KeyedStream[K, T]{s: s, key: key}
}

// WithKeyCodec sets the codec of the key type, used to hash keys that are
// not strings or integers and to store keys in state snapshots.
func (ks KeyedStream[K, T]) WithKeyCodec(c codec.Codec[K]) KeyedStream[K, T] {
	ks.keyCodec = c
	return ks
}

// Stream returns the keyed stream's records as a plain stream.
func (ks KeyedStream[K, T]) Stream() Stream[T] { return ks.s }

func (ks KeyedStream[K, T]) codecK() codec.Codec[K] {
	if ks.keyCodec != nil {
		return ks.keyCodec
	}
	c, err := codec.For[K]()
	if err != nil {
		ks.s.p.setErr(fmt.Errorf("key type %v: %w (set one with KeyedStream.WithKeyCodec)", reflect.TypeFor[K](), err))
		return nil
	}
	return c
}

// connectKeyed feeds ks into input i of n through a hash edge.
func connectKeyed[K comparable, T any](ks KeyedStream[K, T], n *plan.Node, input int) keyed.Keys[K] {
	n.Keyed = true
	kc := ks.codecK()
	h := keyed.Hasher(kc)
	key := ks.key
	connect(ks.s, n, input, plan.Hash, func(v T) uint64 { return h(key(v)) })
	return keyed.Keys[K]{Codec: kc, Hash: h}
}

// KeyGroupOf returns the key group of key among maxParallelism groups, the
// same in every process. It is exported for tests and tools that predict
// placement.
func KeyGroupOf[K comparable](key K, maxParallelism int) int {
	c, _ := codec.For[K]()
	return task.KeyGroup(keyed.Hasher(c)(key), maxParallelism)
}

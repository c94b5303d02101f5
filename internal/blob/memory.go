package blob

import (
	"context"
	"slices"
	"strings"
	"sync"
)

// MemoryStore is a Store that keeps blobs in a map, for unit tests. It is
// atomic and exclusive by holding a mutex; nothing is durable.
type MemoryStore struct {
	mu    sync.Mutex
	blobs map[string][]byte
}

// Memory returns an empty in-memory store.
func Memory() *MemoryStore {
	return &MemoryStore{blobs: map[string][]byte{}}
}

// Put implements Store.
func (m *MemoryStore) Put(ctx context.Context, key string, data []byte) error {
	if err := check(ctx, "put", key); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.blobs[key] = slices.Clone(data)
	return nil
}

// PutIfAbsent implements Store.
func (m *MemoryStore) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	if err := check(ctx, "put-if-absent", key); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.blobs[key]; ok {
		return opError("put-if-absent", key, ErrExists)
	}
	m.blobs[key] = slices.Clone(data)
	return nil
}

// Get implements Store.
func (m *MemoryStore) Get(ctx context.Context, key string) ([]byte, error) {
	if err := check(ctx, "get", key); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	data, ok := m.blobs[key]
	if !ok {
		return nil, opError("get", key, ErrNotFound)
	}
	return slices.Clone(data), nil
}

// Stat implements Stater.
func (m *MemoryStore) Stat(ctx context.Context, key string) (Attrs, error) {
	if err := check(ctx, "stat", key); err != nil {
		return Attrs{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	data, ok := m.blobs[key]
	if !ok {
		return Attrs{}, opError("stat", key, ErrNotFound)
	}
	return Attrs{Size: int64(len(data))}, nil
}

// List implements Store.
func (m *MemoryStore) List(ctx context.Context, prefix string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, opError("list", prefix, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var keys []string
	for k := range m.blobs {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys, nil
}

// Delete implements Store.
func (m *MemoryStore) Delete(ctx context.Context, key string) error {
	if err := check(ctx, "delete", key); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.blobs, key)
	return nil
}

// check returns the error every operation starts by looking for: an
// invalid key or a done context.
func check(ctx context.Context, op, key string) error {
	if err := ValidKey(key); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return opError(op, key, err)
	}
	return nil
}

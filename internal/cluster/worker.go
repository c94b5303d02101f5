package cluster

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/weir-stream/weir/internal/transport"
)

// WorkerConfig configures a worker process.
type WorkerConfig struct {
	// ID names the worker; default host-pid.
	ID string
	// Coordinators are the addresses of the coordinators: the leader and
	// its standbys (weir coordinator --ha), in any order. The worker
	// follows the leader.
	Coordinators []string
	// Grace is how long the attempts the worker runs keep running
	// without a coordinator: after a lost session they run on while the
	// worker looks for the leader, which adopts them; those no
	// coordinator adopted within Grace are cancelled. Default 30s;
	// negative: cancel them at once, as a worker did before adoption.
	Grace time.Duration
	// Listen is the data plane's address (default 127.0.0.1:0); Advertise,
	// if set, is the address other workers dial instead (behind NAT or
	// in Kubernetes, the pod's address).
	Listen, Advertise string
	// Slots is how many subtasks of each operator the worker runs at once
	// (one slot holds subtask i of every operator of a job). Default 1.
	Slots int
	// PassiveStandby makes the worker a passive standby: the coordinator
	// places only restarted attempts on it, and it keeps the state of each
	// job's latest completed checkpoint loaded, so that a restart placed
	// on it reads no state from the store.
	PassiveStandby bool
	// Compression compresses the record batches the worker sends to
	// other workers (weir worker --exchange-compression); the workers
	// it receives from may compress otherwise or not at all.
	Compression transport.Compression
	Program     Program
	Security    Security
	// Log receives a line for each notable event.
	Log func(string)
}

// Worker runs its share of the attempts the coordinator deploys on it.
type Worker struct {
	cfg      WorkerConfig
	instance string // this process's, random (takeover.go)
	node     *transport.Node
	cache    passiveCache
	// epoch is the newest coordinator leadership epoch the worker served:
	// it refuses an older coordinator, and commit orders from one.
	epoch atomic.Uint64
}

// NewWorker starts the worker's data plane. Run connects it to the
// coordinator; Close stops the data plane.
func NewWorker(cfg WorkerConfig) (*Worker, error) {
	if cfg.Slots <= 0 {
		cfg.Slots = 1
	}
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	if cfg.ID == "" {
		host, _ := os.Hostname()
		cfg.ID = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	if cfg.Log == nil {
		cfg.Log = func(string) {}
	}
	if cfg.Grace == 0 {
		cfg.Grace = 30 * time.Second
	}
	if len(cfg.Coordinators) == 0 {
		return nil, errors.New("a worker needs the address of its coordinator")
	}
	server, client, err := cfg.Security.TLS()
	if err != nil {
		return nil, err
	}
	node, err := transport.Listen(cfg.Listen, transport.Config{ServerTLS: server, ClientTLS: client, Secret: []byte(cfg.Security.Token),
		Compression: cfg.Compression, Log: cfg.Log})
	if err != nil {
		return nil, err
	}
	if cfg.Advertise == "" {
		cfg.Advertise = node.Addr()
	}
	var nonce [8]byte
	rand.Read(nonce[:])
	return &Worker{cfg: cfg, node: node, instance: hex.EncodeToString(nonce[:]), cache: passiveCache{runs: map[string]*cachedCheckpoint{}}}, nil
}

// DataAddr returns the address other workers send records to.
func (w *Worker) DataAddr() string { return w.cfg.Advertise }

// DataStats returns what the worker's data plane sent so far.
func (w *Worker) DataStats() transport.Stats { return w.node.Stats() }

// Close stops the data plane.
func (w *Worker) Close() error { return w.node.Close() }

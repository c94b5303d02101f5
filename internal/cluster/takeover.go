package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/weir-stream/weir/internal/blob"
)

// Worker sessions. A worker process draws a random instance name when it
// starts and sends it in every hello. Per worker id the coordinator
// records the instance of the newest registration: a hello with that
// instance is the same process reconnecting and replaces its old session;
// a hello with another instance is a newer process (the replacement of a
// frozen pod, say) and takes the id over, once: the older instance is
// fenced, its session (if any) is lost, and every later hello of it is
// refused with codes.FailedPrecondition, so that the worker exits instead
// of evicting the newer one in turn. The record is kept in the store
// (cluster/workers/), written under the coordinator's leadership, so a
// fenced instance stays fenced across coordinator restarts.

// ErrTakenOver is why a worker exits: a newer instance of its id joined
// the coordinator.
var ErrTakenOver = errors.New("taken over by a newer session")

// maxFenced bounds the fenced instances remembered per worker id.
const maxFenced = 32

const workersPrefix = "cluster/workers/"

// workerKey names the record of worker id: the id escaped into one key
// segment that starts with no dot.
func workerKey(id string) string { return workersPrefix + "id-" + url.PathEscape(id) }

// instances is what the coordinator knows of a worker id's processes.
type instances struct {
	Current string   `json:"current"`
	Fenced  []string `json:"fenced,omitempty"` // oldest first
}

// admit decides on a hello of worker id from instance. It returns whether
// the instance takes the id over from another one (whose session the
// caller must end as taken over), or a gRPC error for an instance that
// was taken over. Hellos are admitted one at a time.
func (c *Coordinator) admit(ctx context.Context, id, instance string) (takeover bool, err error) {
	c.admitMu.Lock()
	defer c.admitMu.Unlock()
	rec, err := c.instancesOf(ctx, id)
	if err != nil {
		return false, status.Errorf(codes.Unavailable, "reading the record of worker %s: %v", id, err)
	}
	switch {
	case instance == rec.Current:
		return false, nil
	case slices.Contains(rec.Fenced, instance):
		return false, status.Errorf(codes.FailedPrecondition, "worker id %s %v", id, ErrTakenOver)
	}
	if rec.Current != "" {
		rec.Fenced = append(rec.Fenced, rec.Current)
		if len(rec.Fenced) > maxFenced {
			rec.Fenced = rec.Fenced[len(rec.Fenced)-maxFenced:]
		}
	}
	takeover = rec.Current != ""
	rec.Current = instance
	if err := c.saveInstances(ctx, id, rec); err != nil {
		if errors.Is(err, ErrDeposed) {
			return false, c.deposedStatus()
		}
		// The takeover holds in this coordinator's memory; only a
		// restarted coordinator could not tell the instances apart.
		c.cfg.Log(fmt.Sprintf("recording the session of worker %s: %v", id, err))
	}
	return takeover, nil
}

// instancesOf returns the record of worker id, read from the store the
// first time.
func (c *Coordinator) instancesOf(ctx context.Context, id string) (*instances, error) {
	if rec := c.instances[id]; rec != nil {
		return rec, nil
	}
	rec := &instances{}
	b, err := c.blobs.Get(ctx, workerKey(id))
	switch {
	case errors.Is(err, blob.ErrNotFound):
	case err != nil:
		return nil, err
	default:
		if err := json.Unmarshal(b, rec); err != nil {
			c.cfg.Log(fmt.Sprintf("the record %s is corrupt (%v): starting it afresh", workerKey(id), err))
			rec = &instances{}
		}
	}
	c.instances[id] = rec
	return rec, nil
}

// saveInstances writes the record of worker id, if the coordinator still
// leads.
func (c *Coordinator) saveInstances(ctx context.Context, id string, rec *instances) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if err := (leaderFence{c}).Check(ctx); err != nil {
		return err
	}
	return c.blobs.Put(ctx, workerKey(id), b)
}

package store

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/weir-stream/weir/internal/blob"
	"github.com/weir-stream/weir/internal/dataflow"
)

// This file is the only place that builds or parses blob keys. The layout:
//
//	jobs/<job>/chk-<id>/_metadata               the commit point
//	jobs/<job>/chk-<id>/state/<vertex>-<subtask> one task's state
//	jobs/<job>/chk-<id>/_unusable               why a restore found it corrupt
//	jobs/<job>/_run                             the job's latest run
//	jobs/<job>/shared/<name>                    a state file checkpoints share
//
// <id> is the checkpoint id in decimal, zero-padded to 12 digits so that a
// plain listing sorts in numeric order (ids past 10^12 grow a digit; the
// package itself parses ids and never relies on listing order).

const (
	jobsDir      = "jobs/"
	chkPrefix    = "chk-"
	metadataName = "_metadata"
	stateDir     = "state/"
	sharedDir    = "shared/"
	idDigits     = 12
)

// jobPrefix is the prefix of every key of job.
func jobPrefix(job string) string { return jobsDir + job + "/" }

// checkpointsPrefix is the prefix of every checkpoint key of job.
func checkpointsPrefix(job string) string { return jobPrefix(job) + chkPrefix }

// checkpointPrefix is the prefix of every key of one checkpoint.
func checkpointPrefix(job string, id uint64) string {
	return fmt.Sprintf("%s%0*d/", checkpointsPrefix(job), idDigits, id)
}

// metadataKey names the metadata blob of a checkpoint.
func metadataKey(job string, id uint64) string {
	return checkpointPrefix(job, id) + metadataName
}

// runKey names the record of a job's latest run.
func runKey(job string) string { return jobPrefix(job) + "_run" }

// unusableKey names the mark a restore leaves on a checkpoint whose
// state failed verification.
func unusableKey(job string, id uint64) string {
	return checkpointPrefix(job, id) + "_unusable"
}

// sharedKey names a state file of job that checkpoints share (an LSM
// store's table file, named by the store).
func sharedKey(job, name string) string { return jobPrefix(job) + sharedDir + name }

// stateKey names the state blob one task writes for a checkpoint.
func stateKey(job string, id uint64, task dataflow.SubtaskID) string {
	return checkpointPrefix(job, id) + stateDir + taskName(task)
}

// taskName is how the layout names a task: its state blob's name,
// "vertex-subtask", which the errors about a checkpoint's tasks use too.
func taskName(t dataflow.SubtaskID) string { return fmt.Sprintf("%d-%d", t.Vertex, t.Subtask) }

// parsedKey is what parseKey learns from a key under checkpointsPrefix.
type parsedKey struct {
	id       uint64
	metadata bool // the key is the checkpoint's metadata
}

// parseKey parses a key listed under checkpointsPrefix(job). It reports
// false for keys that are not part of the layout (written by someone
// else), which callers leave alone.
func parseKey(job, key string) (parsedKey, bool) {
	rest, ok := strings.CutPrefix(key, checkpointsPrefix(job))
	if !ok {
		return parsedKey{}, false
	}
	digits, file, ok := strings.Cut(rest, "/")
	if !ok || file == "" {
		return parsedKey{}, false
	}
	id, ok := parseID(digits)
	if !ok {
		return parsedKey{}, false
	}
	return parsedKey{id: id, metadata: file == metadataName}, true
}

// parseID parses the digits of a checkpoint directory name, padded or not.
func parseID(digits string) (uint64, bool) {
	if digits == "" || strings.TrimLeft(digits, "0123456789") != "" {
		return 0, false
	}
	id, err := strconv.ParseUint(digits, 10, 64)
	return id, err == nil
}

// checkJob returns an error if job cannot be a job name: it must be one
// valid key segment.
func checkJob(job string) error {
	if strings.Contains(job, "/") {
		return fmt.Errorf("store: job name %q contains a slash", job)
	}
	if err := blob.ValidKey(job); err != nil {
		return fmt.Errorf("store: job name %q: %w", job, err)
	}
	return nil
}

// ParsePath returns the job and checkpoint id that a checkpoint path
// names. It accepts the metadata key or the checkpoint's directory, with
// or without a trailing slash, with the id padded or not, and with any
// prefix before "jobs/" (a local directory, a bucket URL), so the user
// can paste what they see:
//
//	jobs/wc/chk-000000000017/_metadata
//	/var/lib/weir/jobs/wc/chk-000000000017/
//	s3://bucket/weir/jobs/wc/chk-17
func ParsePath(path string) (job string, id uint64, err error) {
	p := strings.TrimSuffix(path, "/")
	p = strings.TrimSuffix(p, "/"+metadataName)
	segs := strings.Split(p, "/")
	n := len(segs)
	if n < 3 || segs[n-3] != strings.TrimSuffix(jobsDir, "/") {
		return "", 0, fmt.Errorf("store: %q is not a checkpoint path (want .../jobs/<job>/chk-<id>[/_metadata])", path)
	}
	job = segs[n-2]
	digits, ok := strings.CutPrefix(segs[n-1], chkPrefix)
	if ok {
		id, ok = parseID(digits)
	}
	if !ok {
		return "", 0, fmt.Errorf("store: %q is not a checkpoint path: %q is not chk-<id>", path, segs[n-1])
	}
	if err := checkJob(job); err != nil {
		return "", 0, fmt.Errorf("store: %q is not a checkpoint path: %w", path, err)
	}
	return job, id, nil
}

// Leadership epochs (fence.go) live beside the jobs, one key per epoch
// ever claimed (older ones are pruned):
//
//	cluster/leader/epoch-<n>
//
// <n> is zero-padded to 20 digits, the width of any uint64.
const (
	leaderPrefix = "cluster/leader/epoch-"
	epochDigits  = 20
)

// epochKey names the claim of leadership epoch n.
func epochKey(n uint64) string { return fmt.Sprintf("%s%0*d", leaderPrefix, epochDigits, n) }

// parseEpochKey returns the epoch a key listed under leaderPrefix claims;
// false for a key that is not a claim.
func parseEpochKey(key string) (uint64, bool) {
	digits, ok := strings.CutPrefix(key, leaderPrefix)
	if !ok {
		return 0, false
	}
	return parseID(digits)
}

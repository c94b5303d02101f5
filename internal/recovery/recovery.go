// Package recovery defines the words in which a job says how it survives
// failures: its guarantee (recovery semantics) and its failover strategy.
// The public API shows them as weir.Guarantee and weir.Failover, whose
// doc comments state what each value promises; the engine runs by them.
// Their names (String) are part of checkpoints' metadata and of the
// command line.
package recovery

import (
	"fmt"
	"strings"
)

// Guarantee is a job's recovery semantics.
type Guarantee int

const (
	// None fails the job at its first failure.
	None Guarantee = iota
	// ExactlyOnce restores aligned checkpoints and commits sinks with them.
	ExactlyOnce
	// AtLeastOnce restores unaligned-barrier (non-blocking) checkpoints.
	AtLeastOnce
	// AtMostOnce restarts with empty state and sources where they were.
	AtMostOnce
)

func (g Guarantee) String() string {
	switch g {
	case ExactlyOnce:
		return "exactly-once"
	case AtLeastOnce:
		return "at-least-once"
	case AtMostOnce:
		return "at-most-once"
	}
	return "none"
}

// Checkpoints reports whether the guarantee takes checkpoints.
func (g Guarantee) Checkpoints() bool { return g == ExactlyOnce || g == AtLeastOnce }

// ParseGuarantee parses exactly-once, at-least-once, at-most-once or none.
func ParseGuarantee(s string) (Guarantee, error) {
	for _, g := range []Guarantee{ExactlyOnce, AtLeastOnce, AtMostOnce, None} {
		if strings.EqualFold(s, g.String()) {
			return g, nil
		}
	}
	return None, fmt.Errorf("guarantee must be exactly-once, at-least-once, at-most-once or none, not %q", s)
}

// Failover is a job's failover strategy: what restarts when a task fails.
type Failover int

const (
	// Global restarts every task of the job from the latest checkpoint.
	Global Failover = iota
	// FineGrained restarts only what a failure touched (a subtask and
	// what it feeds, or its pipelined region), from the latest
	// checkpoint; the rest of the job runs on.
	FineGrained
)

func (f Failover) String() string {
	if f == FineGrained {
		return "fine-grained"
	}
	return "global"
}

// ParseFailover parses global or fine-grained; empty means global.
func ParseFailover(s string) (Failover, error) {
	switch strings.ToLower(s) {
	case "global", "":
		return Global, nil
	case "fine-grained":
		return FineGrained, nil
	}
	return Global, fmt.Errorf("failover must be global or fine-grained, not %q", s)
}

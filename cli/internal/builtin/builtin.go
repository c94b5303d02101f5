// Package builtin records which registered jobs are weir's own demo jobs
// (package cli/jobs), so that a program built on cli.Main can leave them
// out (cli.WithoutBuiltins) even when it imports cli/jobs.
package builtin

import "sync"

var (
	mu   sync.Mutex
	jobs = map[string]bool{}
)

// MarkJob records that the job named name is one of weir's demo jobs.
func MarkJob(name string) {
	mu.Lock()
	defer mu.Unlock()
	jobs[name] = true
}

// IsJob reports whether MarkJob recorded name.
func IsJob(name string) bool {
	mu.Lock()
	defer mu.Unlock()
	return jobs[name]
}

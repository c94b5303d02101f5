package weirtest

import (
	"strings"
	"sync"

	"github.com/weir-stream/weir"
)

// jobLogLines is how many of a failed run's last log lines a failure
// message quotes.
const jobLogLines = 80

// jobLog keeps a run's log lines, so that a failed run's message shows
// what the job did (failures, restarts, checkpoints) before it went wrong.
type jobLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *jobLog) option() weir.Option {
	return weir.WithLog(func(s string) {
		l.mu.Lock()
		l.lines = append(l.lines, s)
		l.mu.Unlock()
	})
}

// tail returns the last jobLogLines lines, headed by how many were left out.
func (l *jobLog) tail() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	lines := l.lines
	var b strings.Builder
	if len(lines) > jobLogLines {
		b.WriteString("job log (last lines):\n")
		lines = lines[len(lines)-jobLogLines:]
	} else {
		b.WriteString("job log:\n")
	}
	for _, s := range lines {
		b.WriteString("  " + s + "\n")
	}
	return b.String()
}

package checkpoint

import (
	"errors"
	"fmt"
	"github.com/weir-stream/weir/internal/script"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/weir-stream/weir/internal/dataflow"
)

// TestScripts runs the stories in testdata/*.txt. A story is a sequence of
// blocks, each a command line, a "----" line and the expected output, ended
// by a blank line or the end of the file:
//
//	init tasks=3 sources=1 interval=10 timeout=30 tolerable=unlimited
//	----
//	ok
//
// Lines starting with "#" and blank lines between blocks are comments.
// With -rewrite the expected outputs are replaced by the actual ones.
//
// Commands (arguments are key=value; omitted config keys keep Config's zero
// value, so tolerable=0 is the default, as in Go):
//
//	init tasks=N|V.S,... sources=N|V.S,... interval= min-pause= max-concurrent=
//	     timeout= tolerable=N|unlimited first-id= history=
//	                              tasks=N means tasks 0.0 .. N-1.0; sources=N the first N
//	tick [N]                      N ticks (default 1); actions prefixed by their tick
//	trigger                       TriggerNow
//	ack id= task= [handle=]       prints the AckResult, then the actions; handle defaults to h<id>
//	ack-all id= [except=V.S,...]  every task acks in order; prints only the actions
//	decline id= task= [reason=]
//	not-ready id= task= [reason=]
//	stored id=
//	store-failed id= [err=]
//	fail-job                      JobFailed
//	resume                        Resume
//	stats                         History, one checkpoint a line
func TestScripts(t *testing.T) {
	script.Run(t, func() func(string) (string, error) { return (&story{}).run })
}

// story is the state of one story. Its run method returns the output of one
// command, or an error for a malformed command (which fails the test, while
// errors of the coordinator are part of the output).
type story struct {
	c     *Coordinator
	tasks []dataflow.SubtaskID
}

func (s *story) run(line string) (result string, err error) {
	defer func() {
		// A panic is how the coordinator reports a shell that broke the
		// contract; scripts may show it.
		if r := recover(); r != nil {
			result, err = fmt.Sprintf("panic: %v", r), nil
		}
	}()
	fields := strings.Fields(line)
	cmd, args := fields[0], map[string]string{}
	var positional []string
	for _, f := range fields[1:] {
		if k, v, ok := strings.Cut(f, "="); ok {
			args[k] = v
		} else {
			positional = append(positional, f)
		}
	}
	if cmd != "init" && s.c == nil {
		return "", errors.New("init first")
	}
	p := argParser{args: args}
	var out []string
	print := func(actions []Action) {
		for _, a := range actions {
			out = append(out, a.String())
		}
	}
	switch cmd {
	case "init":
		cfg := s.config(&p)
		if p.err != nil {
			return "", p.err
		}
		c, err := New(cfg)
		if err != nil {
			return "error: " + err.Error(), nil
		}
		s.c, s.tasks = c, cfg.Tasks
	case "tick":
		n := 1
		if len(positional) > 0 {
			var err error
			if n, err = strconv.Atoi(positional[0]); err != nil {
				return "", err
			}
		}
		for range n {
			for _, a := range s.c.Tick() {
				out = append(out, fmt.Sprintf("%d: %v", s.c.Now(), a))
			}
		}
	case "trigger":
		actions, err := s.c.TriggerNow()
		if err != nil {
			out = append(out, "error: "+err.Error())
		}
		print(actions)
	case "ack":
		id := p.id("id")
		res, actions := s.c.Ack(id, p.task("task"), Handle(p.str("handle", fmt.Sprintf("h%d", id))))
		out = append(out, res.String())
		print(actions)
	case "ack-all":
		id, except := p.id("id"), p.tasks("except", nil)
		for _, task := range s.tasks {
			if !slices.Contains(except, task) {
				_, actions := s.c.Ack(id, task, Handle(fmt.Sprintf("h%d", id)))
				print(actions)
			}
		}
	case "decline":
		print(s.c.Decline(p.id("id"), p.task("task"), p.str("reason", "declined")))
	case "not-ready":
		print(s.c.NotReady(p.id("id"), p.task("task"), p.str("reason", "not ready")))
	case "stored":
		print(s.c.Stored(p.id("id")))
	case "store-failed":
		print(s.c.StoreFailed(p.id("id"), errors.New(p.str("err", "write failed"))))
	case "fail-job":
		print(s.c.JobFailed())
	case "resume":
		s.c.Resume()
	case "stats":
		for _, st := range s.c.History() {
			out = append(out, st.String())
		}
	default:
		return "", fmt.Errorf("unknown command %q", cmd)
	}
	if p.err != nil {
		return "", p.err
	}
	for k := range args {
		if !p.used[k] {
			return "", fmt.Errorf("unknown argument %q", k)
		}
	}
	if len(out) == 0 {
		return "ok", nil
	}
	return strings.Join(out, "\n"), nil
}

func (s *story) config(p *argParser) Config {
	cfg := Config{
		Tasks:         p.tasks("tasks", nil),
		Interval:      int64(p.int("interval", 0)),
		MinPause:      int64(p.int("min-pause", 0)),
		MaxConcurrent: p.int("max-concurrent", 0),
		Timeout:       int64(p.int("timeout", 0)),
		FirstID:       ID(p.int("first-id", 0)),
		History:       p.int("history", 0),
	}
	if p.str("tolerable", "") == "unlimited" {
		cfg.TolerableFailures = UnlimitedFailures
	} else {
		cfg.TolerableFailures = p.int("tolerable", 0)
	}
	cfg.Sources = p.tasks("sources", cfg.Tasks)
	return cfg
}

// argParser reads key=value arguments, remembering the first error and
// which keys were used.
type argParser struct {
	args map[string]string
	used map[string]bool
	err  error
}

func (p *argParser) str(key, def string) string {
	if p.used == nil {
		p.used = map[string]bool{}
	}
	v, ok := p.args[key]
	if !ok {
		return def
	}
	p.used[key] = true
	return v
}

func (p *argParser) int(key string, def int) int {
	v := p.str(key, "")
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil && p.err == nil {
		p.err = fmt.Errorf("%s: %w", key, err)
	}
	return n
}

func (p *argParser) id(key string) ID {
	if _, ok := p.args[key]; !ok && p.err == nil {
		p.err = fmt.Errorf("missing %s=", key)
	}
	return ID(p.int(key, 0))
}

func (p *argParser) task(key string) dataflow.SubtaskID {
	if _, ok := p.args[key]; !ok && p.err == nil {
		p.err = fmt.Errorf("missing %s=", key)
	}
	t, err := parseTask(p.str(key, ""))
	if err != nil && p.err == nil {
		p.err = fmt.Errorf("%s: %w", key, err)
	}
	return t
}

// tasks parses "N" (with all non-nil: its first N tasks; otherwise tasks
// 0.0 .. N-1.0) or a comma-separated list of tasks.
func (p *argParser) tasks(key string, all []dataflow.SubtaskID) []dataflow.SubtaskID {
	v := p.str(key, "")
	if v == "" {
		return nil
	}
	if n, err := strconv.Atoi(v); err == nil {
		if all != nil {
			return all[:min(n, len(all))]
		}
		ts := make([]dataflow.SubtaskID, n)
		for i := range ts {
			ts[i] = dataflow.SubtaskID{Vertex: i}
		}
		return ts
	}
	var ts []dataflow.SubtaskID
	for _, f := range strings.Split(v, ",") {
		t, err := parseTask(f)
		if err != nil && p.err == nil {
			p.err = fmt.Errorf("%s: %w", key, err)
		}
		ts = append(ts, t)
	}
	return ts
}

// parseTask parses "V.S", or "V" for subtask 0.
func parseTask(s string) (dataflow.SubtaskID, error) {
	v, sub, hasSub := strings.Cut(s, ".")
	var t dataflow.SubtaskID
	var err error
	if t.Vertex, err = strconv.Atoi(v); err != nil {
		return t, err
	}
	if hasSub {
		t.Subtask, err = strconv.Atoi(sub)
	}
	return t, err
}

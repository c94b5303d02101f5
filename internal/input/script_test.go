package input

import (
	"errors"
	"fmt"
	"github.com/weir-stream/weir/internal/script"
	"strconv"
	"strings"
	"testing"
)

// TestScripts runs the stories in testdata/*.txt. A story is a sequence of
// blocks, each a command line, a "----" line and the expected output, ended
// by a blank line or the end of the file:
//
//	init channels=3 mode=aligned
//	----
//	ok
//
// Lines starting with "#" and blank lines between blocks are comments.
// With -rewrite the expected outputs are replaced by the actual ones.
//
// Every command prints the actions it returned, one a line, or "ok" when
// there were none. Commands (arguments are key=value):
//
//	init channels=N [mode=aligned|unaligned|at-least-once]
//	data ch= n= [seq=]          a batch; seq defaults to the channel's next record as sent so far
//	wm ch= t=                   a watermark
//	idle ch=                    an idle element
//	end ch=                     the end of the channel
//	latency ch=                 a latency marker
//	barrier ch= id= [seq=] [unaligned] [must-align]
//	                            seq defaults to the records sent so far on ch
//	replay ch= seq= inc=        a sender's replay starts
//	restore counts=N,N,... [wm=W,W,...] [states=active|idle|ended,...] [in=W] [idle]
//	follow order=CH:UPTO,...
//	request-replays inc=
//	resume ch= seq=             a standby repeats its primary's replay start
//	catching-up on|off
//	abort id= | timeout id= | trigger id= | snapshot-failed id=
//	next                        prints where to read: "ch=C only" or "any"
//	status                      prints Status, and "unsettled" unless Settled
//
// Watermarks print as numbers, min or max.
func TestScripts(t *testing.T) {
	script.Run(t, func() func(string) (string, error) { return (&story{}).run })
}

// story is the state of one story: the protocol and, per channel, the
// records its sender sent so far.
type story struct {
	p    *Protocol
	sent []int64
}

func (s *story) run(line string) (result string, err error) {
	defer func() {
		// A panic is how the protocol reports a shell that broke the
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
	if cmd != "init" && s.p == nil {
		return "", errors.New("init first")
	}
	a := argParser{args: args}
	flagSet := func(name string) bool {
		for _, f := range positional {
			if f == name {
				return true
			}
		}
		return false
	}
	var actions []Action
	var out []string
	step := func(e Element) { actions = s.p.Step(a.ch(), e) }
	switch cmd {
	case "init":
		mode := Aligned
		switch m := a.str("mode", "aligned"); m {
		case "aligned":
		case "unaligned":
			mode = Unaligned
		case "at-least-once":
			mode = AtLeastOnce
		default:
			return "", fmt.Errorf("unknown mode %q", m)
		}
		n := a.int("channels", 0)
		if a.err != nil {
			return "", a.err
		}
		p, err := New(Config{Channels: n, Mode: mode})
		if err != nil {
			return "error: " + err.Error(), nil
		}
		s.p, s.sent = p, make([]int64, n)
	case "data":
		ch := a.ch()
		n := a.int("n", 0)
		seq := int64(a.int("seq", int(s.sentOn(ch))))
		if ch >= 0 && ch < len(s.sent) {
			s.sent[ch] = max(s.sent[ch], seq+int64(n))
		}
		step(Element{Kind: Data, Seq: seq, N: n})
	case "wm":
		step(Element{Kind: Watermark, Time: int64(a.int("t", 0))})
	case "idle":
		step(Element{Kind: Idle})
	case "end":
		step(Element{Kind: End})
	case "latency":
		step(Element{Kind: Latency})
	case "barrier":
		seq := int64(a.int("seq", int(s.sentOn(a.ch()))))
		step(Element{Kind: Barrier, Checkpoint: a.id(), Seq: seq, Unaligned: flagSet("unaligned"), MustAlign: flagSet("must-align")})
	case "replay":
		step(Element{Kind: Replay, Seq: int64(a.int("seq", 0)), Incarnation: int64(a.int("inc", 0))})
	case "restore":
		st := State{Counts: a.int64s("counts")}
		if _, ok := args["wm"]; ok {
			w := &Watermarks{Input: a.watermark("in"), Idle: flagSet("idle")}
			states := strings.Split(a.str("states", ""), ",")
			for c, wm := range a.watermarks("wm") {
				m := ChannelMark{Watermark: wm}
				if c < len(states) {
					switch states[c] {
					case "idle":
						m.State = ChanIdle
					case "ended":
						m.State = ChanEnded
					}
				}
				w.Channels = append(w.Channels, m)
			}
			st.Watermarks = w
		}
		if a.err == nil {
			if err := s.p.Restore(st); err != nil {
				out = append(out, "error: "+err.Error())
			}
			copy(s.sent, st.Counts)
		}
	case "follow":
		var order []Turn
		for _, f := range strings.Split(a.str("order", ""), ",") {
			c, upTo, ok := strings.Cut(f, ":")
			ch, err1 := strconv.Atoi(c)
			n, err2 := strconv.ParseInt(upTo, 10, 64)
			if !ok || err1 != nil || err2 != nil {
				return "", fmt.Errorf("bad turn %q, want CH:UPTO", f)
			}
			order = append(order, Turn{Ch: ch, UpTo: n})
		}
		s.p.Follow(order)
	case "request-replays":
		actions = s.p.RequestReplays(int64(a.int("inc", 0)))
	case "resume":
		s.p.Resume(a.ch(), int64(a.int("seq", 0)))
		if ch := a.ch(); ch >= 0 && ch < len(s.sent) {
			s.sent[ch] = int64(a.int("seq", 0))
		}
	case "catching-up":
		if len(positional) != 1 || (positional[0] != "on" && positional[0] != "off") {
			return "", errors.New("want catching-up on|off")
		}
		s.p.CatchingUp(positional[0] == "on")
	case "abort":
		actions = s.p.Abort(a.id())
	case "timeout":
		actions = s.p.AlignedTimeout(a.id())
	case "trigger":
		actions = s.p.Trigger(a.id())
	case "snapshot-failed":
		actions = s.p.SnapshotFailed(a.id())
	case "next":
		if ch, only := s.p.Next(); only {
			out = append(out, fmt.Sprintf("ch=%d only", ch))
		} else {
			out = append(out, "any")
		}
	case "status":
		st := formatStatus(s.p.Status())
		if !s.p.Settled() {
			st += " unsettled"
		}
		out = append(out, st)
	default:
		return "", fmt.Errorf("unknown command %q", cmd)
	}
	if a.err != nil {
		return "", a.err
	}
	for k := range args {
		if !a.used[k] {
			return "", fmt.Errorf("unknown argument %q", k)
		}
	}
	for _, act := range actions {
		out = append(out, act.String())
	}
	if len(out) == 0 {
		return "ok", nil
	}
	return strings.Join(out, "\n"), nil
}

// sentOn returns the records sent on channel ch so far (0 for a channel
// out of range).
func (s *story) sentOn(ch int) int64 {
	if ch < 0 || ch >= len(s.sent) {
		return 0
	}
	return s.sent[ch]
}

func formatStatus(st Status) string {
	var parts []string
	if len(st.Replays) > 0 {
		parts = append(parts, fmt.Sprintf("replays=%v", st.Replays))
	}
	if len(st.Follow) > 0 {
		parts = append(parts, fmt.Sprintf("follow=%v", st.Follow))
	}
	if st.Aligning != 0 {
		parts = append(parts, fmt.Sprintf("aligning=%d missing=%v", st.Aligning, st.Missing))
	}
	if len(st.Blocked) > 0 {
		parts = append(parts, fmt.Sprintf("blocked=%v", st.Blocked))
	}
	if len(st.Ended) > 0 {
		parts = append(parts, fmt.Sprintf("ended=%v", st.Ended))
	}
	parts = append(parts, fmt.Sprintf("last=%d", st.Last))
	if st.Finished {
		parts = append(parts, "finished")
	}
	return strings.Join(parts, " ")
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

func (p *argParser) required(key string) {
	if _, ok := p.args[key]; !ok && p.err == nil {
		p.err = fmt.Errorf("missing %s=", key)
	}
}

func (p *argParser) id() int64 {
	p.required("id")
	return int64(p.int("id", 0))
}

// ch reads the channel, which a script may give out of range to show the
// protocol's panic.
func (p *argParser) ch() int {
	p.required("ch")
	return p.int("ch", 0)
}

func (p *argParser) int64s(key string) []int64 {
	var out []int64
	for _, f := range strings.Split(p.str(key, ""), ",") {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil && p.err == nil {
			p.err = fmt.Errorf("%s: %w", key, err)
		}
		out = append(out, n)
	}
	return out
}

func (p *argParser) watermarks(key string) []int64 {
	var out []int64
	for _, f := range strings.Split(p.str(key, ""), ",") {
		out = append(out, p.parseWatermark(key, f))
	}
	return out
}

func (p *argParser) watermark(key string) int64 {
	return p.parseWatermark(key, p.str(key, "min"))
}

func (p *argParser) parseWatermark(key, v string) int64 {
	switch v {
	case "min":
		return MinWatermark
	case "max":
		return MaxWatermark
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil && p.err == nil {
		p.err = fmt.Errorf("%s: %w", key, err)
	}
	return n
}

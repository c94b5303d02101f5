package funcs

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// ErrLikeEscape reports a LIKE pattern or ESCAPE clause Flink rejects:
// an escape that is not one character, an escape character at the end
// of the pattern, or one followed by anything but '%', '_' or itself.
var ErrLikeEscape = errors.New("invalid LIKE escape")

// LikePattern is a compiled LIKE pattern, safe for concurrent use.
type LikePattern struct{ re *regexp.Regexp }

// CompileLike compiles the pattern of `s LIKE pattern [ESCAPE escape]`.
// In the pattern '%' matches any sequence of characters (line breaks
// included) and '_' exactly one character other than a line terminator
// (\n, \r, U+0085, U+2028, U+2029), which is what Flink's translation to
// a Java regular expression gives; every other character matches
// itself, case-sensitively. escape is "" when the query has no ESCAPE
// clause: then no character escapes.
func CompileLike(pattern, escape string) (*LikePattern, error) {
	esc := rune(-1)
	if escape != "" {
		r, w := utf8.DecodeRuneInString(escape)
		if w != len(escape) {
			return nil, fmt.Errorf("escape %q is not one character: %w", escape, ErrLikeEscape)
		}
		esc = r
	}
	var b strings.Builder
	b.WriteString(`\A`)
	rs := []rune(pattern)
	for i := 0; i < len(rs); i++ {
		switch r := rs[i]; {
		case r == esc:
			if i+1 == len(rs) {
				return nil, fmt.Errorf("pattern %q ends with the escape character: %w", pattern, ErrLikeEscape)
			}
			next := rs[i+1]
			if next != '%' && next != '_' && next != esc {
				return nil, fmt.Errorf("pattern %q escapes %q: %w", pattern, next, ErrLikeEscape)
			}
			b.WriteString(regexp.QuoteMeta(string(next)))
			i++
		case r == '%':
			b.WriteString(`(?s:.*)`)
		case r == '_':
			b.WriteString(`[^\n\r\x{85}\x{2028}\x{2029}]`)
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString(`\z`)
	return &LikePattern{re: regexp.MustCompile(b.String())}, nil
}

// Match reports whether all of s matches the pattern.
func (p *LikePattern) Match(s string) bool { return p.re.MatchString(s) }

// Like is `s LIKE pattern [ESCAPE escape]`, compiling the pattern on
// each call; a planner with a constant pattern uses CompileLike once.
func Like(s, pattern, escape string) (bool, error) {
	p, err := CompileLike(pattern, escape)
	if err != nil {
		return false, err
	}
	return p.Match(s), nil
}

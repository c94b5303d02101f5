package funcs

import (
	"errors"
	"testing"
)

func TestRegexpExtract(t *testing.T) {
	for _, tc := range []struct {
		s, regex string
		index    int64
		want     string
		ok       bool
	}{
		{"foothebar", "foo(.*?)(bar)", 2, "bar", true}, // Flink's documented example
		{"foothebar", "foo(.*?)(bar)", 1, "the", true},
		{"foothebar", "foo(.*?)(bar)", 0, "foothebar", true},
		{"foothebar", "foo(.*?)(bar)", 3, "", false}, // no such group
		{"foothebar", "foo(.*?)(bar)", -1, "", false},
		{"foothebar", "baz(.*)", 1, "", false}, // no match
		{"ab", "a(x)?b", 1, "", false},         // group took no part
		{"ab", "a(x?)b", 1, "", true},          // group matched empty
		{"abc", "(", 0, "", false},             // invalid regex
		{"aa", `(a)\1`, 0, "", false},          // refused regex
		{"日本語", "本(.)", 1, "語", true},
	} {
		got, ok := RegexpExtract(tc.s, tc.regex, tc.index)
		if got != tc.want || ok != tc.ok {
			t.Errorf("REGEXP_EXTRACT(%q, %q, %d) = %q, %v; want %q, %v", tc.s, tc.regex, tc.index, got, ok, tc.want, tc.ok)
		}
	}
	if DefaultExtractIndex != 0 {
		t.Errorf("the default extract index is %d, Flink's is 0", DefaultExtractIndex)
	}
}

func TestRegexpReplaceTakesTheReplacementLiterally(t *testing.T) {
	for _, tc := range []struct {
		s, regex, repl string
		want           string
		ok             bool
	}{
		{"foobar", "oo|ar", "", "fb", true}, // Flink's documented example
		{"foobar", "o", "0", "f00bar", true},
		{"foobar", "(o+)", "[$1]", "f[$1]bar", true},
		{`a.b`, `\.`, `\`, `a\b`, true},
		{"abc", "x", "y", "abc", true},
		{"abc", "[", "y", "", false},
	} {
		got, ok := RegexpReplace(tc.s, tc.regex, tc.repl)
		if got != tc.want || ok != tc.ok {
			t.Errorf("REGEXP_REPLACE(%q, %q, %q) = %q, %v; want %q, %v", tc.s, tc.regex, tc.repl, got, ok, tc.want, tc.ok)
		}
	}
}

func TestRegexpFindsAMatchAnywhere(t *testing.T) {
	for _, tc := range []struct {
		s, regex string
		want     bool
	}{
		{"foobar", "o+b", true},
		{"foobar", "^o", false},
		{"foobar", "", false}, // an empty regex matches nothing in Flink
		{"foobar", "(", false},
		{"FOO", "(?i)foo", true},
	} {
		if got := RegexpMatch(tc.s, tc.regex); got != tc.want {
			t.Errorf("REGEXP(%q, %q) = %v, want %v", tc.s, tc.regex, got, tc.want)
		}
	}
}

func TestCompileRegexpRefusesJavaOnlyConstructs(t *testing.T) {
	for _, regex := range []string{
		`a(?=b)`, `a(?!b)`, `(?<=a)b`, `(?<!a)b`, `(?>ab)`,
		`a*+`, `a++`, `a?+`, `a{2}+`,
		`(a)\1`, `\k<x>`,
		`[a-z&&[^e]]`, `[a[b]]`,
		`a\Z`, `\Gx`, `\R`, `\h`, `\v`, `\X`, `\e`,
		`(?U)a`, `(?x)a b`, `(?d)a`,
	} {
		if _, err := CompileRegexp(regex); !errors.Is(err, ErrRegexpUnsupported) {
			t.Errorf("CompileRegexp(%q) = %v, want ErrRegexpUnsupported", regex, err)
		}
	}
	for _, regex := range []string{
		`(&|^)channel_id=([^&]*)`, `[]a]`, `[^]a]`, `\Q(?=\E`, `(?i:x)`, `(?is)x`,
		`(?<name>a)`, `(?:a)`, `\d+\.\d*`, `[\[\]]`, `a{2,3}`, `\p{L}+`,
	} {
		if _, err := CompileRegexp(regex); err != nil {
			t.Errorf("CompileRegexp(%q) = %v, want nil", regex, err)
		}
	}
	if _, err := CompileRegexp(`(`); err == nil || errors.Is(err, ErrRegexpUnsupported) {
		t.Errorf("CompileRegexp(`(`) = %v, want a syntax error", err)
	}
}

func TestLike(t *testing.T) {
	for _, tc := range []struct {
		s, pattern, escape string
		want               bool
	}{
		{"hello", "h%", "", true},
		{"hello", "%ll%", "", true},
		{"hello", "h_llo", "", true},
		{"hello", "h_lo", "", false},
		{"hello", "H%", "", false}, // case-sensitive
		{"", "%", "", true},
		{"", "_", "", false},
		{"a\nb", "a%b", "", true}, // % spans line breaks
		{"a\nb", "a_b", "", false},
		{"10%", `10\%`, `\`, true},
		{"100", `10\%`, `\`, false},
		{"a_b", "a!_b", "!", true},
		{"axb", "a!_b", "!", false},
		{"a!b", "a!!b", "!", true},
		{"a.b", "a.b", "", true}, // regex metacharacters are literal
		{"axb", "a.b", "", false},
		{`a\b`, `a\b`, "", true}, // no ESCAPE clause: no escape character
		{"日本語", "日_語", "", true},
	} {
		got, err := Like(tc.s, tc.pattern, tc.escape)
		if err != nil || got != tc.want {
			t.Errorf("%q LIKE %q ESCAPE %q = %v, %v; want %v", tc.s, tc.pattern, tc.escape, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ pattern, escape string }{
		{`ab\`, `\`}, {`a\b`, `\`}, {"a", "ab"},
	} {
		if _, err := Like("x", tc.pattern, tc.escape); !errors.Is(err, ErrLikeEscape) {
			t.Errorf("LIKE %q ESCAPE %q: err = %v, want ErrLikeEscape", tc.pattern, tc.escape, err)
		}
	}
}

package funcs

import "testing"

func TestCharLengthCountsCharactersNotBytes(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want int32
	}{{"", 0}, {"hello", 5}, {"héllo", 5}, {"日本語", 3}, {"🙂x", 2}} {
		if got := CharLength(tc.s); got != tc.want {
			t.Errorf("CHAR_LENGTH(%q) = %d, want %d", tc.s, got, tc.want)
		}
	}
}

func TestUpperLowerInitcap(t *testing.T) {
	if got := Upper("Hello wörld"); got != "HELLO WÖRLD" {
		t.Errorf("UPPER = %q", got)
	}
	if got := Lower("HeLLo ÄB"); got != "hello äb" {
		t.Errorf("LOWER = %q", got)
	}
	for _, tc := range []struct{ s, want string }{
		{"hello world", "Hello World"},
		{"hELLO wORLD-x1y", "Hello World-X1y"},
		{"", ""},
		{"élan vital", "Élan Vital"},
	} {
		if got := Initcap(tc.s); got != tc.want {
			t.Errorf("INITCAP(%q) = %q, want %q", tc.s, got, tc.want)
		}
	}
}

func TestTrimRemovesASetOfCharactersFromTheChosenEnds(t *testing.T) {
	for _, tc := range []struct {
		side     TrimSide
		chars, s string
		want     string
	}{
		{TrimBoth, " ", " hello ", "hello"},
		{TrimLeading, " ", " hello ", "hello "},
		{TrimTrailing, " ", " hello ", " hello"},
		{TrimBoth, "ab", "abxba", "x"},
		{TrimBoth, " ", "\thello\t", "\thello\t"}, // spaces only
		{TrimBoth, " ", "", ""},
		{TrimBoth, "", "xx", "xx"},
	} {
		if got := Trim(tc.side, tc.chars, tc.s); got != tc.want {
			t.Errorf("TRIM(%d %q FROM %q) = %q, want %q", tc.side, tc.chars, tc.s, got, tc.want)
		}
	}
	if got := Ltrim("  a b  "); got != "a b  " {
		t.Errorf("LTRIM = %q", got)
	}
	if got := Rtrim("  a b  "); got != "  a b" {
		t.Errorf("RTRIM = %q", got)
	}
}

func TestSubstringIsOneBasedAndCountsNegativeStartsFromTheEnd(t *testing.T) {
	for _, tc := range []struct {
		s             string
		start, length int64
		hasLength     bool
		want          string
		ok            bool
	}{
		{"Hello World", 5, 3, true, "o W", true}, // Flink's documented example
		{"Hello World", 5, 0, false, "o World", true},
		{"hello", 1, 2, true, "he", true},
		{"hello", 0, 2, true, "he", true},
		{"hello", -3, 0, false, "llo", true},
		{"hello", -3, 2, true, "ll", true},
		{"hello", -9, 2, true, "", true},
		{"hello", 6, 1, true, "", true},
		{"hello", 2, 100, true, "ello", true},
		{"hello", 2, -1, true, "", false},
		{"", 1, 1, true, "", true},
		{"日本語です", 2, 2, true, "本語", true},
	} {
		got, ok := Substring(tc.s, tc.start, tc.length, tc.hasLength)
		if got != tc.want || ok != tc.ok {
			t.Errorf("SUBSTRING(%q, %d, %d/%v) = %q, %v; want %q, %v", tc.s, tc.start, tc.length, tc.hasLength, got, ok, tc.want, tc.ok)
		}
	}
}

func TestConcatAndConcatWs(t *testing.T) {
	if got := Concat("AA", "BB", "CC"); got != "AABBCC" {
		t.Errorf("CONCAT = %q", got)
	}
	if got := Concat(); got != "" {
		t.Errorf("CONCAT() = %q", got)
	}
	s := func(v string) *string { return &v }
	// Flink's documented example: CONCAT_WS('~', 'AA', Null, 'BB', '', 'CC').
	if got, ok := ConcatWs(s("~"), s("AA"), nil, s("BB"), s(""), s("CC")); got != "AA~BB~~CC" || !ok {
		t.Errorf("CONCAT_WS = %q, %v", got, ok)
	}
	if _, ok := ConcatWs(nil, s("a")); ok {
		t.Error("CONCAT_WS with a NULL separator is not NULL")
	}
	if got, ok := ConcatWs(s(","), nil, nil); got != "" || !ok {
		t.Errorf("CONCAT_WS of NULLs = %q, %v", got, ok)
	}
}

func TestReplace(t *testing.T) {
	for _, tc := range []struct{ s, search, repl, want string }{
		{"hello world", "world", "flink", "hello flink"}, // Flink's documented example
		{"ababab", "abab", "z", "zab"},
		{"aaa", "a", "", ""},
		{"ab", "", "-", "-a-b-"},
		{"", "x", "y", ""},
	} {
		if got := Replace(tc.s, tc.search, tc.repl); got != tc.want {
			t.Errorf("REPLACE(%q, %q, %q) = %q, want %q", tc.s, tc.search, tc.repl, got, tc.want)
		}
	}
}

func TestPositionAndLocateCountCharacters(t *testing.T) {
	for _, tc := range []struct {
		needle, s string
		from      int32
		want      int32
	}{
		{"ll", "hello", 1, 3},
		{"x", "hello", 1, 0},
		{"", "hello", 1, 1},
		{"l", "hello", 4, 4},
		{"l", "hello", 5, 0},
		{"h", "hello", 0, 1},
		{"h", "hello", -5, 1},
		{"o", "hello", 99, 0},
		{"語", "日本語", 1, 3},
		{"語", "日本語日本語", 4, 6},
	} {
		if got := Locate(tc.needle, tc.s, tc.from); got != tc.want {
			t.Errorf("LOCATE(%q, %q, %d) = %d, want %d", tc.needle, tc.s, tc.from, got, tc.want)
		}
	}
	if got := Position("bar", "foobar"); got != 4 {
		t.Errorf("POSITION('bar' IN 'foobar') = %d, want 4", got)
	}
}

func TestPadding(t *testing.T) {
	for _, tc := range []struct {
		s     string
		n     int32
		pad   string
		left  bool
		want  string
		valid bool
	}{
		{"hi", 4, "??", true, "??hi", true}, // Flink's documented examples
		{"hi", 1, "??", true, "h", true},
		{"hi", 4, "??", false, "hi??", true},
		{"hi", 1, "??", false, "h", true},
		{"hi", 5, "ab", true, "abahi", true},
		{"hi", 5, "ab", false, "hiaba", true},
		{"hi", 0, "?", true, "", true},
		{"hi", -1, "?", true, "", false},
		{"hi", 4, "", false, "", false},
		{"日本", 4, "語", true, "語語日本", true},
	} {
		pad := Rpad
		if tc.left {
			pad = Lpad
		}
		got, ok := pad(tc.s, tc.n, tc.pad)
		if got != tc.want || ok != tc.valid {
			t.Errorf("pad(%q, %d, %q, left=%v) = %q, %v; want %q, %v", tc.s, tc.n, tc.pad, tc.left, got, ok, tc.want, tc.valid)
		}
	}
}

func TestRepeatAndReverse(t *testing.T) {
	if got := Repeat("This is a test String.", 2); got != "This is a test String.This is a test String." {
		t.Errorf("REPEAT = %q", got)
	}
	if got := Repeat("x", 0); got != "" {
		t.Errorf("REPEAT(x, 0) = %q", got)
	}
	if got := Repeat("x", -3); got != "" {
		t.Errorf("REPEAT(x, -3) = %q", got)
	}
	for _, tc := range []struct{ s, want string }{{"", ""}, {"abc", "cba"}, {"日本語", "語本日"}} {
		if got := Reverse(tc.s); got != tc.want {
			t.Errorf("REVERSE(%q) = %q, want %q", tc.s, got, tc.want)
		}
	}
}

func TestSplitIndexIsZeroBasedAndNullOutOfRange(t *testing.T) {
	for _, tc := range []struct {
		s, delim string
		index    int32
		want     string
		ok       bool
	}{
		{"Jack,John,Mary", ",", 2, "Mary", true},
		{"Jack,John,Mary", ",", 3, "", false},
		{"Jack,John,Mary", ",", -1, "", false},
		{"a,,b", ",", 1, "", true},
		{"a,,b", ",", 2, "b", true},
		{",a", ",", 0, "", true},
		{"a,", ",", 1, "", true},
		{"a::b::c", "::", 1, "b", true},
		{"abc", ",", 0, "abc", true},
		{"", ",", 0, "", false},
		{"a b\tc", "", 2, "c", true}, // an empty delimiter splits at whitespace
		{"日,本", ",", 1, "本", true},
	} {
		got, ok := SplitIndex(tc.s, tc.delim, tc.index)
		if got != tc.want || ok != tc.ok {
			t.Errorf("SPLIT_INDEX(%q, %q, %d) = %q, %v; want %q, %v", tc.s, tc.delim, tc.index, got, ok, tc.want, tc.ok)
		}
	}
}

func TestCountChar(t *testing.T) {
	for _, tc := range []struct {
		s, c string
		want int64
	}{
		{"abcabc", "c", 2},
		{"", "c", 0},
		{"abc", "", 0},
		{"ccc", "cx", 3}, // only the first character counts
		{"日本日", "日", 2},
	} {
		if got := CountChar(tc.s, tc.c); got != tc.want {
			t.Errorf("count_char(%q, %q) = %d, want %d", tc.s, tc.c, got, tc.want)
		}
	}
}

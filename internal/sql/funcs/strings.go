package funcs

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// CharLength is CHAR_LENGTH and CHARACTER_LENGTH: the number of
// characters (code points) of s, not its bytes: CHAR_LENGTH('héllo') = 5.
func CharLength(s string) int32 { return int32(utf8.RuneCountInString(s)) }

// Upper is UPPER. Letters map one to one (Java's toUpperCase would turn
// 'ß' into 'SS'; Go keeps 'ß').
func Upper(s string) string { return strings.ToUpper(s) }

// Lower is LOWER.
func Lower(s string) string { return strings.ToLower(s) }

// TrimSide says which ends TRIM removes from.
type TrimSide int

// The sides of TRIM; the zero value is BOTH, TRIM's default.
const (
	TrimBoth TrimSide = iota
	TrimLeading
	TrimTrailing
)

// Trim is TRIM([BOTH | LEADING | TRAILING] [chars] FROM s): it removes
// from the chosen ends of s every character that occurs in chars, which
// is a set of characters, not a substring (TRIM(BOTH 'ab' FROM 'abxba')
// is 'x'). Without chars, TRIM removes spaces (U+0020) only, not other
// whitespace, as Flink.
func Trim(side TrimSide, chars, s string) string {
	cut := func(r rune) bool { return strings.ContainsRune(chars, r) }
	switch side {
	case TrimLeading:
		return strings.TrimLeftFunc(s, cut)
	case TrimTrailing:
		return strings.TrimRightFunc(s, cut)
	}
	return strings.TrimFunc(s, cut)
}

// Ltrim is LTRIM(s): leading spaces removed (TRIM(LEADING ' ' FROM s)).
func Ltrim(s string) string { return Trim(TrimLeading, " ", s) }

// Rtrim is RTRIM(s): trailing spaces removed.
func Rtrim(s string) string { return Trim(TrimTrailing, " ", s) }

// Substring is SUBSTRING(s FROM start [FOR length]) and SUBSTR, counting
// characters from 1. A start of 0 means 1; a negative start counts from
// the end (SUBSTRING('hello', -3) = 'llo'); a start past either end
// gives the empty string. Without length (hasLength false) it runs to the end. A
// negative length gives NULL (ok false), as in Flink.
func Substring(s string, start int64, length int64, hasLength bool) (string, bool) {
	if hasLength && length < 0 {
		return "", false
	}
	rs := []rune(s)
	n := int64(len(rs))
	var from int64
	switch {
	case start > 0:
		from = start - 1
		if from >= n {
			return "", true
		}
	case start < 0:
		from = n + start
		if from < 0 {
			return "", true
		}
	}
	to := n
	if hasLength && n-from > length {
		to = from + length
	}
	return string(rs[from:to]), true
}

// Concat is CONCAT(s1, s2, ...): the arguments joined. It is strict: a
// NULL argument makes the result NULL.
func Concat(ss ...string) string { return strings.Join(ss, "") }

// ConcatWs is CONCAT_WS(sep, s1, s2, ...): the non-NULL arguments
// joined with sep. NULL arguments are skipped, empty strings are not;
// a NULL separator gives NULL (ok false).
func ConcatWs(sep *string, ss ...*string) (string, bool) {
	if sep == nil {
		return "", false
	}
	var b strings.Builder
	first := true
	for _, s := range ss {
		if s == nil {
			continue
		}
		if !first {
			b.WriteString(*sep)
		}
		b.WriteString(*s)
		first = false
	}
	return b.String(), true
}

// Replace is REPLACE(s, search, replacement): every non-overlapping
// occurrence of search, from the left, replaced. As Java's
// String.replace, an empty search inserts the replacement before every
// character and at the end: REPLACE('ab', <empty>, '-') = '-a-b-'.
func Replace(s, search, replacement string) string {
	return strings.ReplaceAll(s, search, replacement)
}

// Position is POSITION(needle IN s): the 1-based character position of
// the first occurrence of needle in s, 0 when there is none, 1 for an
// empty needle.
func Position(needle, s string) int32 { return Locate(needle, s, 1) }

// Locate is LOCATE(needle, s[, from]): the 1-based character position
// of the first occurrence of needle in s at or after character from
// (default 1), 0 when there is none. A from below 1 searches from the
// start, as Java's indexOf does with a negative index.
func Locate(needle, s string, from int32) int32 {
	skip := max(int(from)-1, 0)
	off := 0 // byte offset of character skip
	for i := 0; i < skip; i++ {
		if off >= len(s) {
			return 0
		}
		_, w := utf8.DecodeRuneInString(s[off:])
		off += w
	}
	i := strings.Index(s[off:], needle)
	if i < 0 {
		return 0
	}
	return int32(skip + utf8.RuneCountInString(s[off:off+i]) + 1)
}

// Initcap is INITCAP: the first character of every word upper case,
// the others lower case, where a word is a run of letters and digits
// (INITCAP('hello wORLD-x1y') = 'Hello World-X1y').
func Initcap(s string) string {
	var b strings.Builder
	inWord := false
	for _, r := range s {
		alnum := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case alnum && !inWord:
			b.WriteRune(unicode.ToTitle(r))
		case alnum:
			b.WriteRune(unicode.ToLower(r))
		default:
			b.WriteRune(r)
		}
		inWord = alnum
	}
	return b.String()
}

// Lpad is LPAD(s, n, pad): s left-padded with repetitions of pad to n
// characters, or cut to its first n characters when it is longer
// (LPAD('hi', 4, '??') = '??hi', LPAD('hi', 1, '??') = 'h'). A negative
// n or an empty pad gives NULL (ok false), as in Flink.
func Lpad(s string, n int32, pad string) (string, bool) { return padTo(s, n, pad, true) }

// Rpad is RPAD(s, n, pad), the right-padding twin of Lpad.
func Rpad(s string, n int32, pad string) (string, bool) { return padTo(s, n, pad, false) }

func padTo(s string, n int32, pad string, left bool) (string, bool) {
	if n < 0 || pad == "" {
		return "", false
	}
	rs := []rune(s)
	if int(n) <= len(rs) {
		return string(rs[:n]), true
	}
	fill := make([]rune, 0, int(n)-len(rs))
	for p := []rune(pad); len(fill) < cap(fill); {
		fill = append(fill, p[:min(len(p), cap(fill)-len(fill))]...)
	}
	if left {
		return string(fill) + s, true
	}
	return s + string(fill), true
}

// Repeat is REPEAT(s, n): s repeated n times; empty when n is 0 or less.
func Repeat(s string, n int32) string {
	if n <= 0 {
		return ""
	}
	return strings.Repeat(s, int(n))
}

// Reverse is REVERSE: the characters of s in reverse order.
func Reverse(s string) string {
	rs := []rune(s)
	for i, j := 0, len(rs)-1; i < j; i, j = i+1, j-1 {
		rs[i], rs[j] = rs[j], rs[i]
	}
	return string(rs)
}

// SplitIndex is SPLIT_INDEX(s, delim, index): s split at every
// occurrence of delim, the piece at the 0-based index. Empty pieces
// count (SPLIT_INDEX('a,,b', ',', 2) = 'b'); an empty s has no pieces.
// A negative index or one past the last piece gives NULL (ok false).
//
// An empty delim splits at each whitespace character, as Flink does
// (it splits with Apache Commons' splitByWholeSeparatorPreserveAllTokens,
// which treats an empty separator so).
func SplitIndex(s, delim string, index int32) (string, bool) {
	if index < 0 || s == "" {
		return "", false
	}
	var pieces []string
	if delim == "" {
		pieces = splitEach(s, unicode.IsSpace)
	} else {
		pieces = strings.Split(s, delim)
	}
	if int(index) >= len(pieces) {
		return "", false
	}
	return pieces[index], true
}

// splitEach splits s at every character for which sep is true, keeping
// empty pieces.
func splitEach(s string, sep func(rune) bool) []string {
	var pieces []string
	start := 0
	for i, r := range s {
		if sep(r) {
			pieces = append(pieces, s[start:i])
			start = i + utf8.RuneLen(r)
		}
	}
	return append(pieces, s[start:])
}

// CountChar counts the occurrences of the character c in s. It is the
// user function count_char(s, c) of Nexmark q14 (there a Java UDF;
// here an example of a function written outside Flink's built-ins).
// Only c's first character counts; an empty c occurs 0 times.
func CountChar(s, c string) int64 {
	r, w := utf8.DecodeRuneInString(c)
	if w == 0 {
		return 0
	}
	return int64(strings.Count(s, string(r)))
}

package funcs

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Regular expressions in Flink SQL are Java's (java.util.regex); weir
// runs them on Go's RE2 engine, which has no backtracking and so runs
// in time linear in the input. CompileRegexp accepts the common subset
// on which the two agree and refuses, with ErrRegexpUnsupported, what
// Java would read differently from Go:
//
//   - lookahead and lookbehind ((?=, (?!, (?<=, (?<!), atomic groups
//     ((?>), possessive quantifiers (*+, ++, ?+, }+) and back references
//     (\1, \k<name>): RE2 has none of them;
//   - character class intersection and union ([a-z&&[^e]], [a[b]]);
//     Go would read them as plain characters;
//   - the escapes \Z, \G, \R, \h, \H, \v, \V, \X and \e, which Go lacks
//     or reads otherwise;
//   - the inline flags other than i, m and s (Java's (?U) means Unicode
//     classes, Go's means non-greedy; (?x), (?d), (?u) and (?c) are
//     Java's only).
//
// Accepted but different:
//
//   - '$' without (?m) matches only at the very end in Go, while Java
//     also matches before a final line terminator ('a$' finds "a\n");
//   - '.' without (?s) excludes only '\n' in Go, while Java also
//     excludes '\r', U+0085, U+2028 and U+2029;
//   - \s is [\t\n\f\r ] in Go, Java adds \x0B; \b and \w are ASCII in
//     both only by default;
//   - Java's POSIX and java* classes (\p{Alpha}, \p{javaLowerCase}) do
//     not exist in Go and fail to compile.
//
// Nexmark's pattern '(&|^)channel_id=([^&]*)' is in the common subset.

// ErrRegexpUnsupported reports a Java regular expression construct that
// Go's engine lacks or reads differently.
var ErrRegexpUnsupported = errors.New("unsupported Java regular expression construct")

// Regexp is a compiled Java-dialect regular expression, safe for
// concurrent use.
type Regexp struct{ re *regexp.Regexp }

// CompileRegexp compiles a Java-dialect regular expression, refusing
// the constructs listed above.
func CompileRegexp(pattern string) (*Regexp, error) {
	if err := checkJavaRegexp(pattern); err != nil {
		return nil, err
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("regular expression %q: %w", pattern, err)
	}
	return &Regexp{re: re}, nil
}

// checkJavaRegexp scans pattern for the refused constructs.
func checkJavaRegexp(pattern string) error {
	refuse := func(what string) error {
		return fmt.Errorf("regular expression %q uses %s: %w", pattern, what, ErrRegexpUnsupported)
	}
	inClass := false
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		if c == '\\' {
			if i+1 == len(pattern) {
				return nil // Go's compiler reports the trailing backslash
			}
			i++
			switch e := pattern[i]; {
			case e >= '1' && e <= '9':
				return refuse("a back reference")
			case strings.IndexByte("ZGRhHvVXek", e) >= 0:
				return refuse(`\` + string(e))
			case (e == 'p' || e == 'P' || e == 'x') && strings.HasPrefix(pattern[i+1:], "{"):
				if end := strings.IndexByte(pattern[i:], '}'); end >= 0 {
					i += end // \p{Name} and \x{hex}: the brace is not a quantifier's
				}
			case e == 'Q': // \Q...\E quotes, in both dialects
				end := strings.Index(pattern[i:], `\E`)
				if end < 0 {
					return nil
				}
				i += end + 1
			}
			continue
		}
		if inClass {
			switch {
			case c == ']':
				inClass = false
			case c == '[':
				return refuse("a nested character class")
			case c == '&' && i+1 < len(pattern) && pattern[i+1] == '&':
				return refuse("character class intersection")
			}
			continue
		}
		switch c {
		case '[':
			inClass = true
			// A ']' right after '[' or '[^' is a literal in both dialects.
			if i+1 < len(pattern) && pattern[i+1] == '^' {
				i++
			}
			if i+1 < len(pattern) && pattern[i+1] == ']' {
				i++
			}
		case '(':
			if err := checkGroup(pattern[i+1:], refuse); err != nil {
				return err
			}
		case '*', '+', '?', '}':
			if i+1 < len(pattern) && pattern[i+1] == '+' {
				return refuse("a possessive quantifier")
			}
		}
	}
	return nil
}

// checkGroup checks what follows an opening parenthesis.
func checkGroup(rest string, refuse func(string) error) error {
	if !strings.HasPrefix(rest, "?") {
		return nil
	}
	rest = rest[1:]
	switch {
	case strings.HasPrefix(rest, "="), strings.HasPrefix(rest, "!"),
		strings.HasPrefix(rest, "<="), strings.HasPrefix(rest, "<!"):
		return refuse("lookaround")
	case strings.HasPrefix(rest, ">"):
		return refuse("an atomic group")
	case strings.HasPrefix(rest, "<"), strings.HasPrefix(rest, "P<"), strings.HasPrefix(rest, ":"):
		return nil
	}
	end := strings.IndexAny(rest, ":)")
	if end < 0 {
		return nil
	}
	for _, f := range rest[:end] {
		if f != 'i' && f != 'm' && f != 's' && f != '-' {
			return refuse("the inline flag " + string(f))
		}
	}
	return nil
}

// Extract is REGEXP_EXTRACT with a compiled pattern: the text of group
// index of the first match in s, 0 meaning the whole match. No match,
// an index outside 0..number of groups, or a group that took no part in
// the match give NULL (ok false); Flink answers NULL for each.
func (re *Regexp) Extract(s string, index int64) (string, bool) {
	if index < 0 || index > int64(re.re.NumSubexp()) {
		return "", false
	}
	m := re.re.FindStringSubmatchIndex(s)
	if m == nil || m[2*index] < 0 {
		return "", false
	}
	return s[m[2*index]:m[2*index+1]], true
}

// Replace is REGEXP_REPLACE with a compiled pattern: every match in s
// replaced by replacement taken literally. Flink quotes the replacement
// (Matcher.quoteReplacement), so '$1' and '\' are plain text there too.
func (re *Regexp) Replace(s, replacement string) string {
	return re.re.ReplaceAllLiteralString(s, replacement)
}

// Find is REGEXP with a compiled pattern: whether some part of s
// matches.
func (re *Regexp) Find(s string) bool { return re.re.MatchString(s) }

// RegexpExtract is REGEXP_EXTRACT(s, regex[, index]). Flink's default
// index, when the call has two arguments, is 0, the whole match
// (DefaultExtractIndex). An invalid or refused regex gives NULL, as
// Flink answers NULL when the pattern does not compile.
func RegexpExtract(s, regex string, index int64) (string, bool) {
	re, err := CompileRegexp(regex)
	if err != nil {
		return "", false
	}
	return re.Extract(s, index)
}

// DefaultExtractIndex is REGEXP_EXTRACT's group index when the call
// gives none: Flink's two-argument REGEXP_EXTRACT extracts group 0.
const DefaultExtractIndex = 0

// RegexpReplace is REGEXP_REPLACE(s, regex, replacement); an invalid or
// refused regex gives NULL, as in Flink.
func RegexpReplace(s, regex, replacement string) (string, bool) {
	re, err := CompileRegexp(regex)
	if err != nil {
		return "", false
	}
	return re.Replace(s, replacement), true
}

// RegexpMatch is REGEXP(s, regex): whether some part of s matches. An
// empty, invalid or refused regex gives FALSE, as in Flink.
func RegexpMatch(s, regex string) bool {
	if regex == "" {
		return false
	}
	re, err := CompileRegexp(regex)
	if err != nil {
		return false
	}
	return re.Find(s)
}

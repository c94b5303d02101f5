package parse

import (
	"fmt"
	"strings"

	"github.com/weir-stream/weir/internal/sql/ast"
)

// tokenKind tells tokens apart.
type tokenKind int

const (
	tokEOF    tokenKind = iota
	tokWord             // a plain word: keyword or identifier
	tokQuoted           // a backquoted identifier
	tokString           // '...'
	tokNumber           // 10, 0.908, 1e3
	tokSymbol           // punctuation and operators
)

// token is one lexical token. For a word, text is as written and upper
// is its upper-case form; for a string or quoted identifier, text is
// the value with the quotes removed and doubled quotes undone.
type token struct {
	kind  tokenKind
	text  string
	upper string
	pos   ast.Pos
}

// is reports whether t is the keyword or symbol s (s in upper case).
func (t token) is(s string) bool {
	switch t.kind {
	case tokWord:
		return t.upper == s
	case tokSymbol:
		return t.text == s
	}
	return false
}

// describe names the token for an error message: keywords and symbols
// in quotes, identifiers named as such.
func (t token) describe() string {
	switch t.kind {
	case tokEOF:
		return "the end of the input"
	case tokWord:
		if ast.Reserved(t.text) {
			return "'" + t.upper + "'"
		}
		return "identifier " + t.text
	case tokQuoted:
		return "identifier `" + t.text + "`"
	case tokString:
		return "string " + ast.QuoteString(t.text)
	case tokNumber:
		return "number " + t.text
	}
	return "'" + t.text + "'"
}

// symbols are the operators and punctuation, longest first.
var symbols = []string{"<>", "!=", "<=", ">=", "||", "=>",
	"(", ")", ",", ";", ".", "*", "+", "-", "/", "%", "=", "<", ">", "[", "]", "?", ":"}

// lex splits src into tokens, skipping white space and comments (-- to
// the end of the line, /* ... */). The last token is tokEOF.
func lex(src string) ([]token, error) {
	l := lexer{src: src, line: 1, col: 1}
	var toks []token
	for {
		t, err := l.next()
		if err != nil {
			return nil, err
		}
		toks = append(toks, t)
		if t.kind == tokEOF {
			return toks, nil
		}
	}
}

type lexer struct {
	src       string
	i         int
	line, col int
}

func (l *lexer) pos() ast.Pos { return ast.Pos{Line: l.line, Column: l.col} }

func (l *lexer) errorf(p ast.Pos, format string, args ...any) error {
	return &Error{Line: p.Line, Column: p.Column, Msg: fmt.Sprintf(format, args...)}
}

// advance moves past n bytes, counting lines.
func (l *lexer) advance(n int) {
	for range n {
		if l.src[l.i] == '\n' {
			l.line++
			l.col = 1
		} else {
			l.col++
		}
		l.i++
	}
}

func (l *lexer) peekByte(k int) byte {
	if l.i+k < len(l.src) {
		return l.src[l.i+k]
	}
	return 0
}

func isLetter(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80
}
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (l *lexer) next() (token, error) {
	if err := l.skipSpace(); err != nil {
		return token{}, err
	}
	p := l.pos()
	if l.i >= len(l.src) {
		return token{kind: tokEOF, pos: p}, nil
	}
	c := l.src[l.i]
	switch {
	case isLetter(c):
		j := l.i
		for j < len(l.src) && (isLetter(l.src[j]) || isDigit(l.src[j]) || l.src[j] == '$') {
			j++
		}
		text := l.src[l.i:j]
		l.advance(j - l.i)
		return token{kind: tokWord, text: text, upper: strings.ToUpper(text), pos: p}, nil
	case isDigit(c) || c == '.' && isDigit(l.peekByte(1)):
		return l.number(p)
	case c == '\'':
		s, err := l.quoted('\'', "string")
		return token{kind: tokString, text: s, pos: p}, err
	case c == '`':
		s, err := l.quoted('`', "quoted identifier")
		if err == nil && s == "" {
			err = l.errorf(p, "empty quoted identifier ``")
		}
		return token{kind: tokQuoted, text: s, pos: p}, err
	case c == '"':
		return token{}, l.errorf(p, "double quotes are not used in Flink SQL: quote identifiers in backquotes (`name`) and strings in single quotes ('text')")
	case c == '$' && l.peekByte(1) == '{':
		end := strings.IndexByte(l.src[l.i:], '}')
		name := "${...}"
		if end > 0 {
			name = l.src[l.i : l.i+end+1]
		}
		return token{}, l.errorf(p, "unsubstituted placeholder %s: replace it before parsing (parse.Substitute)", name)
	}
	for _, s := range symbols {
		if strings.HasPrefix(l.src[l.i:], s) {
			l.advance(len(s))
			return token{kind: tokSymbol, text: s, pos: p}, nil
		}
	}
	return token{}, l.errorf(p, "unexpected character %q", l.src[l.i:l.i+runeLen(l.src[l.i:])])
}

func runeLen(s string) int {
	for i := range s {
		if i > 0 {
			return i
		}
	}
	return len(s)
}

func (l *lexer) skipSpace() error {
	for l.i < len(l.src) {
		c := l.src[l.i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			l.advance(1)
		case c == '-' && l.peekByte(1) == '-':
			for l.i < len(l.src) && l.src[l.i] != '\n' {
				l.advance(1)
			}
		case c == '/' && l.peekByte(1) == '*':
			p := l.pos()
			if l.peekByte(2) == '+' {
				// Flink's hints change what a query does (OPTIONS overrides a
				// table's options), so one is refused rather than skipped.
				return l.errorf(p, "hints (/*+ ... */) are not supported")
			}
			end := strings.Index(l.src[l.i+2:], "*/")
			if end < 0 {
				return l.errorf(p, "comment /* is not closed by */")
			}
			l.advance(end + 4)
		default:
			return nil
		}
	}
	return nil
}

// number lexes digits [. digits] [e [+-] digits].
func (l *lexer) number(p ast.Pos) (token, error) {
	j := l.i
	for j < len(l.src) && isDigit(l.src[j]) {
		j++
	}
	if j < len(l.src) && l.src[j] == '.' {
		j++
		for j < len(l.src) && isDigit(l.src[j]) {
			j++
		}
	}
	if j < len(l.src) && (l.src[j] == 'e' || l.src[j] == 'E') {
		k := j + 1
		if k < len(l.src) && (l.src[k] == '+' || l.src[k] == '-') {
			k++
		}
		if k < len(l.src) && isDigit(l.src[k]) {
			for k < len(l.src) && isDigit(l.src[k]) {
				k++
			}
			j = k
		}
	}
	if j < len(l.src) && isLetter(l.src[j]) {
		k := j
		for k < len(l.src) && (isLetter(l.src[k]) || isDigit(l.src[k])) {
			k++
		}
		return token{}, l.errorf(p, "malformed number %s", l.src[l.i:k])
	}
	text := l.src[l.i:j]
	l.advance(j - l.i)
	return token{kind: tokNumber, text: text, pos: p}, nil
}

// quoted lexes a string or identifier between quote characters, a
// doubled quote standing for one.
func (l *lexer) quoted(q byte, what string) (string, error) {
	p := l.pos()
	l.advance(1)
	var b strings.Builder
	for {
		if l.i >= len(l.src) {
			return "", l.errorf(p, "%s starting here is not closed by %c", what, q)
		}
		c := l.src[l.i]
		if c == q {
			if l.peekByte(1) == q {
				b.WriteByte(q)
				l.advance(2)
				continue
			}
			l.advance(1)
			return b.String(), nil
		}
		b.WriteByte(c)
		l.advance(1)
	}
}

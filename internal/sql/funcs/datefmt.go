package funcs

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ErrDatePattern reports a date format pattern this package cannot
// read: an unknown or unsupported pattern letter, an unterminated quote,
// or a character Java's formatter reserves.
var ErrDatePattern = errors.New("invalid date format pattern")

// DateFormat is a compiled Java date pattern (the patterns of
// SimpleDateFormat and DateTimeFormatter, on which Flink's DATE_FORMAT,
// TO_TIMESTAMP, UNIX_TIMESTAMP and FROM_UNIXTIME rely), safe for
// concurrent use. Supported letters, with the number of repetitions
// choosing the width as in Java:
//
//	G era (AD)              y year (yy: two digits)   M month (MMM Jan, MMMM January)
//	d day of month          D day of year             E weekday (EEE Mon, EEEE Monday)
//	a AM/PM                 H hour 0-23               k hour 1-24
//	K hour 0-11             h hour 1-12               m minute
//	s second                S fraction of second      z, Z, X zone (always UTC)
//
// Text between single quotes is literal and two single quotes stand
// for one quote; other non-letters are literal. S follows DateTimeFormatter: S is tenths, SS
// hundredths, SSS milliseconds (SimpleDateFormat reads S as a
// millisecond count; the two agree on SSS, the form used in practice).
// Letters on which the two Java formatters disagree (u, Y, w, W, F) and
// the reserved characters [ ] { } # are refused.
type DateFormat struct {
	pattern string
	fields  []dateField
}

// dateField is one element of a pattern: a letter repeated n times, or
// literal text when letter is 0.
type dateField struct {
	letter byte
	n      int
	text   string
}

const dateLetters = "GyMdDEaHkKhmsSzZX"

// CompileDateFormat compiles a Java date pattern.
func CompileDateFormat(pattern string) (*DateFormat, error) {
	f := &DateFormat{pattern: pattern}
	bad := func(what string) error {
		return fmt.Errorf("pattern %q: %s: %w", pattern, what, ErrDatePattern)
	}
	for i := 0; i < len(pattern); {
		c := pattern[i]
		switch {
		case c == '\'':
			if strings.HasPrefix(pattern[i:], "''") {
				f.lit("'")
				i += 2
				continue
			}
			var text strings.Builder
			j := i + 1
			for ; ; j++ {
				if j >= len(pattern) {
					return nil, bad("unterminated quote")
				}
				if pattern[j] == '\'' {
					if j+1 < len(pattern) && pattern[j+1] == '\'' {
						text.WriteByte('\'')
						j++
						continue
					}
					break
				}
				text.WriteByte(pattern[j])
			}
			f.lit(text.String())
			i = j + 1
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			if strings.IndexByte(dateLetters, c) < 0 {
				return nil, bad(fmt.Sprintf("unsupported letter %q", c))
			}
			n := 1
			for i+n < len(pattern) && pattern[i+n] == c {
				n++
			}
			if c == 'S' && n > 9 {
				return nil, bad("more than 9 fraction digits")
			}
			f.fields = append(f.fields, dateField{letter: c, n: n})
			i += n
		case strings.IndexByte("[]{}#", c) >= 0:
			return nil, bad(fmt.Sprintf("reserved character %q", c))
		default:
			f.lit(string(c))
			i++
		}
	}
	return f, nil
}

func (f *DateFormat) lit(s string) {
	if n := len(f.fields); n > 0 && f.fields[n-1].letter == 0 {
		f.fields[n-1].text += s
		return
	}
	f.fields = append(f.fields, dateField{text: s})
}

// String returns the pattern.
func (f *DateFormat) String() string { return f.pattern }

// Format formats t, read in UTC. It allocates only the result.
func (f *DateFormat) Format(t time.Time) string {
	t = t.UTC()
	year, month, day := t.Date()
	hour, minute, sec := t.Clock()
	var buf [64]byte
	b := buf[:0]
	for _, fl := range f.fields {
		switch fl.letter {
		case 0:
			b = append(b, fl.text...)
		case 'G':
			if year > 0 {
				b = append(b, "AD"...)
			} else {
				b = append(b, "BC"...)
			}
		case 'y':
			if fl.n == 2 {
				b = pad(b, year%100, 2)
			} else {
				b = pad(b, year, fl.n)
			}
		case 'M':
			switch {
			case fl.n >= 4:
				b = append(b, month.String()...)
			case fl.n == 3:
				b = append(b, month.String()[:3]...)
			default:
				b = pad(b, int(month), fl.n)
			}
		case 'd':
			b = pad(b, day, fl.n)
		case 'D':
			b = pad(b, t.YearDay(), fl.n)
		case 'E':
			if fl.n >= 4 {
				b = append(b, t.Weekday().String()...)
			} else {
				b = append(b, t.Weekday().String()[:3]...)
			}
		case 'a':
			if hour < 12 {
				b = append(b, "AM"...)
			} else {
				b = append(b, "PM"...)
			}
		case 'H':
			b = pad(b, hour, fl.n)
		case 'k':
			b = pad(b, (hour+23)%24+1, fl.n)
		case 'K':
			b = pad(b, hour%12, fl.n)
		case 'h':
			b = pad(b, (hour+11)%12+1, fl.n)
		case 'm':
			b = pad(b, minute, fl.n)
		case 's':
			b = pad(b, sec, fl.n)
		case 'S':
			frac := fmt.Sprintf("%09d", t.Nanosecond())
			b = append(b, frac[:fl.n]...)
		case 'z':
			b = append(b, "UTC"...)
		case 'Z':
			b = append(b, "+0000"...)
		case 'X':
			b = append(b, 'Z')
		}
	}
	return string(b)
}

// FormatMemo formats with a DateFormat and keeps the text of the last
// period it formatted: the span of time (a day for 'yyyy-MM-dd', a
// minute for 'HH:mm') over which the text cannot change. Timestamps in a
// stream follow each other closely, so most calls format the period of
// the call before and allocate nothing. A FormatMemo is its caller's: it
// must not be used from two goroutines at once.
type FormatMemo struct {
	f      *DateFormat
	unit   int64 // seconds in a period; 0 when the pattern shows fractions of a second
	period int64 // the last period formatted: seconds since 1970 over unit, rounded down
	text   string
	kept   bool
}

// Memo returns a new FormatMemo of f.
func (f *DateFormat) Memo() *FormatMemo { return &FormatMemo{f: f, unit: periodUnit(f.fields)} }

// Format returns what f.Format(t) returns.
func (m *FormatMemo) Format(t time.Time) string {
	if m.unit == 0 {
		return m.f.Format(t)
	}
	sec := t.Unix() // rounded down, before 1970 too
	p := sec / m.unit
	if sec%m.unit < 0 {
		p--
	}
	if !m.kept || p != m.period {
		m.period, m.text, m.kept = p, m.f.Format(t), true
	}
	return m.text
}

// periodUnit returns the seconds over which fields format alike (read
// in UTC, whose days all have 86,400 seconds), or 0 if they show
// fractions of a second.
func periodUnit(fields []dateField) int64 {
	unit := int64(24 * 3600)
	for _, fl := range fields {
		switch fl.letter {
		case 'S':
			return 0
		case 's':
			unit = min(unit, 1)
		case 'm':
			unit = min(unit, 60)
		case 'a', 'H', 'k', 'K', 'h':
			unit = min(unit, 3600)
		}
	}
	return unit
}

// pad appends v in decimal, zero-padded to width digits.
func pad(b []byte, v, width int) []byte {
	if v < 0 {
		b = append(b, '-')
		v = -v
	}
	for n := digits(v); n < width; n++ {
		b = append(b, '0')
	}
	return strconv.AppendInt(b, int64(v), 10)
}

// digits returns the number of decimal digits of v >= 0.
func digits(v int) int {
	n := 1
	for ; v >= 10; v /= 10 {
		n++
	}
	return n
}

// ErrDateParse reports text that does not match a date pattern.
var ErrDateParse = errors.New("text does not match the date pattern")

// Parse reads s, all of it, as a UTC wall-clock time written in the
// pattern. Fields the pattern lacks default to 1970-01-01 00:00:00.000.
// A numeric field directly followed by another numeric field takes
// exactly as many digits as its letter is repeated ('yyyyMMdd'); other
// numeric fields take all the digits there are. Parsing is strict: a
// month 13 or a 30 February is an error, not a rollover. Zone letters
// accept only a UTC designator (UTC, Z, +0000, +00:00).
func (f *DateFormat) Parse(s string) (time.Time, error) { return f.parse(s, false) }

// ParsePrefix is Parse reading only as much of s as the pattern needs
// and ignoring the rest, as Java's SimpleDateFormat.parse does.
func (f *DateFormat) ParsePrefix(s string) (time.Time, error) { return f.parse(s, true) }

func (f *DateFormat) parse(s string, prefix bool) (time.Time, error) {
	year, month, day, hour, minute, sec, nanos := 1970, 1, 1, 0, 0, 0, 0
	pm, hasAMPM, hour12 := false, false, false
	fail := func() (time.Time, error) {
		return time.Time{}, fmt.Errorf("%q with pattern %q: %w", s, f.pattern, ErrDateParse)
	}
	pos := 0
	for k, fl := range f.fields {
		if fl.letter == 0 {
			if !strings.HasPrefix(s[pos:], fl.text) {
				return fail()
			}
			pos += len(fl.text)
			continue
		}
		if word, ok := f.words(fl); ok {
			i := matchWord(s[pos:], word)
			if i < 0 {
				return fail()
			}
			switch fl.letter {
			case 'M':
				month = i + 1
			case 'a':
				pm, hasAMPM = i == 1, true
			}
			pos += len(word[i])
			continue
		}
		if strings.IndexByte("zZX", fl.letter) >= 0 {
			n := 0
			for _, z := range []string{"UTC", "Z", "+00:00", "+0000", "+00"} {
				if strings.HasPrefix(s[pos:], z) {
					n = len(z)
					break
				}
			}
			if n == 0 {
				return fail()
			}
			pos += n
			continue
		}
		width := 0 // all digits
		if k+1 < len(f.fields) && f.fields[k+1].letter != 0 && !isTextField(f.fields[k+1]) {
			width = fl.n
		}
		if fl.letter == 'S' {
			width = fl.n
		}
		end := pos
		for end < len(s) && s[end] >= '0' && s[end] <= '9' && (width == 0 || end-pos < width) {
			end++
		}
		if end == pos || width > 0 && end-pos != width {
			return fail()
		}
		v, err := strconv.Atoi(s[pos:end])
		if err != nil {
			return fail()
		}
		switch fl.letter {
		case 'y':
			year = v
			if fl.n == 2 && end-pos == 2 {
				year = 2000 + v // Java pivots within 80 years before now; weir has no now
			}
		case 'M':
			month = v
		case 'd':
			day = v
		case 'H':
			hour = v
		case 'k':
			hour = v % 24
		case 'K', 'h':
			hour, hour12 = v%12, true
		case 'm':
			minute = v
		case 's':
			sec = v
		case 'S':
			for i := end - pos; i < 9; i++ {
				v *= 10
			}
			nanos = v
		default: // D, G, E digits make no sense
			return fail()
		}
		pos = end
	}
	if pos != len(s) && !prefix {
		return fail()
	}
	if hasAMPM && pm && (hour12 || hour < 12) {
		hour += 12
	}
	if month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || sec > 59 {
		return fail()
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, nanos, time.UTC)
	if t.Day() != day {
		return fail()
	}
	return t, nil
}

func isTextField(fl dateField) bool {
	return fl.letter == 'M' && fl.n >= 3 || strings.IndexByte("GEazZX", fl.letter) >= 0
}

var (
	monthNames, monthAbbrevs []string
	amPm                     = []string{"AM", "PM"}
)

func init() {
	for m := time.January; m <= time.December; m++ {
		monthNames = append(monthNames, m.String())
		monthAbbrevs = append(monthAbbrevs, m.String()[:3])
	}
}

// words returns the words a text field reads, if it is one Parse reads.
func (f *DateFormat) words(fl dateField) ([]string, bool) {
	switch {
	case fl.letter == 'M' && fl.n >= 4:
		return monthNames, true
	case fl.letter == 'M' && fl.n == 3:
		return monthAbbrevs, true
	case fl.letter == 'a':
		return amPm, true
	}
	return nil, false
}

// matchWord returns the index of the word s starts with, ignoring case,
// or -1.
func matchWord(s string, words []string) int {
	for i, w := range words {
		if len(s) >= len(w) && strings.EqualFold(s[:len(w)], w) {
			return i
		}
	}
	return -1
}

package funcs

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// Timestamp returns t as a TIMESTAMP(3) value: its wall clock read in
// UTC, truncated to milliseconds. Functions of this package return
// timestamps in this form.
func Timestamp(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

// TimestampFromMillis returns the TIMESTAMP(3) ms milliseconds after
// 1970-01-01 00:00:00.
func TimestampFromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// DefaultTimestampPattern is the pattern TO_TIMESTAMP, UNIX_TIMESTAMP
// and FROM_UNIXTIME use when the call gives none.
const DefaultTimestampPattern = "yyyy-MM-dd HH:mm:ss"

// DateFormatTimestamp is DATE_FORMAT(ts, pattern): ts formatted with a
// Java date pattern ('yyyy-MM-dd', 'HH:mm', 'yyyy-MM-dd HH:mm:ss' in
// Nexmark). A pattern CompileDateFormat refuses is an error; a planner
// with a constant pattern compiles it once and calls Format.
func DateFormatTimestamp(ts time.Time, pattern string) (string, error) {
	f, err := CompileDateFormat(pattern)
	if err != nil {
		return "", err
	}
	return f.Format(ts), nil
}

// ToTimestamp is TO_TIMESTAMP(s[, pattern]): s read as a TIMESTAMP(3),
// fraction digits beyond milliseconds truncated. Without a pattern
// (hasPattern false) s is read as CAST to TIMESTAMP reads it (see
// ParseTimestamp), which covers 'yyyy-MM-dd HH:mm:ss'. With a pattern
// that s does not match, s is read as without one, as Flink falls back
// to reading '1999-9-10 05:20:10' or '1999-9-10'. Text that does not
// parse gives NULL (ok false), as in Flink; an invalid pattern gives
// NULL too.
func ToTimestamp(s, pattern string, hasPattern bool) (time.Time, bool) {
	if hasPattern {
		f, err := CompileDateFormat(pattern)
		if err != nil {
			return time.Time{}, false
		}
		if t, err := f.Parse(s); err == nil {
			return Timestamp(t), true
		}
	}
	t, err := ParseTimestamp(s)
	return t, err == nil
}

// UnparsableUnixTimestamp is what UNIX_TIMESTAMP answers for text that
// does not parse: Flink returns Long.MIN_VALUE there rather than NULL.
const UnparsableUnixTimestamp = math.MinInt64

// UnixTimestamp is UNIX_TIMESTAMP(s[, pattern]): the seconds from
// 1970-01-01 00:00:00 UTC to s read with pattern (default
// DefaultTimestampPattern) in UTC, truncated toward zero as Java's
// integer division does. As Flink's SimpleDateFormat, it reads a prefix
// of s and ignores what follows ('2024-03-05 07:08:09.5' reads with the
// default pattern); unlike it, it does not roll a month 13 or a 30
// February over. Unparsable text or an invalid pattern give
// UnparsableUnixTimestamp. The niladic UNIX_TIMESTAMP() reads the clock
// and is not here.
func UnixTimestamp(s, pattern string) int64 {
	f, err := CompileDateFormat(pattern)
	if err != nil {
		return UnparsableUnixTimestamp
	}
	t, err := f.ParsePrefix(s)
	if err != nil {
		return UnparsableUnixTimestamp
	}
	return t.UnixMilli() / 1000
}

// FromUnixtime is FROM_UNIXTIME(seconds[, pattern]): the instant
// seconds after 1970-01-01 00:00:00 UTC formatted in UTC with pattern
// (default DefaultTimestampPattern): FROM_UNIXTIME(44) is
// '1970-01-01 00:00:44'. An invalid pattern is an error.
func FromUnixtime(seconds int64, pattern string) (string, error) {
	return DateFormatTimestamp(time.Unix(seconds, 0), pattern)
}

// ErrTimestampSyntax reports text that CAST cannot read as a TIMESTAMP.
var ErrTimestampSyntax = errors.New("not a timestamp")

// ParseTimestamp reads the SQL timestamp text of CAST(s AS TIMESTAMP(3))
// and TO_TIMESTAMP(s): 'yyyy-MM-dd', 'yyyy-MM-dd HH:mm',
// 'yyyy-MM-dd HH:mm:ss' or 'yyyy-MM-dd HH:mm:ss.f' with 1 to 9 fraction
// digits, 'T' allowed instead of the space, surrounding spaces ignored.
// Fraction digits beyond milliseconds are truncated.
func ParseTimestamp(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	date, clock, hasClock := strings.Cut(s, " ")
	if !hasClock {
		date, clock, hasClock = strings.Cut(s, "T")
	}
	pattern := "yyyy-MM-dd"
	if hasClock {
		whole, frac, hasFrac := strings.Cut(clock, ".")
		switch strings.Count(whole, ":") {
		case 1:
			pattern += " HH:mm"
		case 2:
			pattern += " HH:mm:ss"
		default:
			return time.Time{}, fmt.Errorf("%q: %w", s, ErrTimestampSyntax)
		}
		if hasFrac {
			if len(frac) < 1 || len(frac) > 9 || !strings.Contains(pattern, "ss") {
				return time.Time{}, fmt.Errorf("%q: %w", s, ErrTimestampSyntax)
			}
			pattern += "." + strings.Repeat("S", len(frac))
		}
		s = date + " " + clock
	}
	f, err := CompileDateFormat(pattern)
	if err != nil {
		panic(err) // the patterns above are valid
	}
	t, err := f.Parse(s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q: %w", s, ErrTimestampSyntax)
	}
	return Timestamp(t), nil
}

// FormatTimestamp is CAST(ts AS VARCHAR) for a TIMESTAMP(3):
// 'yyyy-MM-dd HH:mm:ss.SSS', always with three fraction digits.
func FormatTimestamp(ts time.Time) string {
	return ts.UTC().Format("2006-01-02 15:04:05.000")
}

// TimeUnit is a field EXTRACT reads from a timestamp.
type TimeUnit int

// The units of EXTRACT.
const (
	UnitYear      TimeUnit = iota + 1
	UnitQuarter            // 1 to 4
	UnitMonth              // 1 to 12
	UnitWeek               // ISO 8601 week of the year, 1 to 53
	UnitDay                // day of the month
	UnitDayOfYear          // 1 to 366 (DOY)
	UnitDayOfWeek          // 1 (Sunday) to 7 (Saturday) (DOW)
	UnitHour
	UnitMinute
	UnitSecond // 0 to 59, without the fraction
)

var unitNames = map[string]TimeUnit{
	"YEAR": UnitYear, "QUARTER": UnitQuarter, "MONTH": UnitMonth,
	"WEEK": UnitWeek, "DAY": UnitDay, "DOY": UnitDayOfYear,
	"DOW": UnitDayOfWeek, "HOUR": UnitHour, "MINUTE": UnitMinute,
	"SECOND": UnitSecond,
}

// ParseTimeUnit returns the unit EXTRACT names (YEAR, QUARTER, MONTH,
// WEEK, DAY, DOY, DOW, HOUR, MINUTE, SECOND), ignoring case.
func ParseTimeUnit(name string) (TimeUnit, bool) {
	u, ok := unitNames[strings.ToUpper(name)]
	return u, ok
}

// Extract is EXTRACT(unit FROM ts), ts read in UTC.
func Extract(unit TimeUnit, ts time.Time) int64 {
	ts = ts.UTC()
	switch unit {
	case UnitYear:
		return int64(ts.Year())
	case UnitQuarter:
		return int64(ts.Month()-1)/3 + 1
	case UnitMonth:
		return int64(ts.Month())
	case UnitWeek:
		_, w := ts.ISOWeek()
		return int64(w)
	case UnitDay:
		return int64(ts.Day())
	case UnitDayOfYear:
		return int64(ts.YearDay())
	case UnitDayOfWeek:
		return int64(ts.Weekday()) + 1
	case UnitHour:
		return int64(ts.Hour())
	case UnitMinute:
		return int64(ts.Minute())
	case UnitSecond:
		return int64(ts.Second())
	}
	panic(fmt.Sprintf("funcs: unknown time unit %d", unit))
}

// Year is YEAR(ts), EXTRACT(YEAR FROM ts).
func Year(ts time.Time) int64 { return Extract(UnitYear, ts) }

// Quarter is QUARTER(ts).
func Quarter(ts time.Time) int64 { return Extract(UnitQuarter, ts) }

// Month is MONTH(ts).
func Month(ts time.Time) int64 { return Extract(UnitMonth, ts) }

// Week is WEEK(ts), the ISO week.
func Week(ts time.Time) int64 { return Extract(UnitWeek, ts) }

// DayOfYear is DAYOFYEAR(ts).
func DayOfYear(ts time.Time) int64 { return Extract(UnitDayOfYear, ts) }

// DayOfMonth is DAYOFMONTH(ts).
func DayOfMonth(ts time.Time) int64 { return Extract(UnitDay, ts) }

// DayOfWeek is DAYOFWEEK(ts): 1 for Sunday to 7 for Saturday.
func DayOfWeek(ts time.Time) int64 { return Extract(UnitDayOfWeek, ts) }

// Hour is HOUR(ts).
func Hour(ts time.Time) int64 { return Extract(UnitHour, ts) }

// Minute is MINUTE(ts).
func Minute(ts time.Time) int64 { return Extract(UnitMinute, ts) }

// Second is SECOND(ts).
func Second(ts time.Time) int64 { return Extract(UnitSecond, ts) }

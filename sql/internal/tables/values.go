package tables

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/internal/sql/types"
)

// This file holds the text forms of values the formats share: DECIMALs
// written with exactly their scale's digits and parsed back, timestamps
// in SQL's form.

// appendDecimal appends the unscaled value u at scale s: exactly s digits
// after the point (none and no point for s == 0).
func appendDecimal(dst []byte, u int64, s int32) []byte {
	if s <= 0 {
		return strconv.AppendInt(dst, u, 10)
	}
	if u < 0 {
		dst = append(dst, '-')
	}
	digits := strconv.FormatUint(absU(u), 10)
	if pad := int(s) + 1 - len(digits); pad > 0 {
		digits = strings.Repeat("0", pad) + digits
	}
	cut := len(digits) - int(s)
	dst = append(dst, digits[:cut]...)
	dst = append(dst, '.')
	return append(dst, digits[cut:]...)
}

func absU(v int64) uint64 {
	if v < 0 {
		return uint64(-(v + 1)) + 1
	}
	return uint64(v)
}

var errDecimalRange = errors.New("out of the range of DECIMAL values (18 digits)")

// parseDecimal parses a decimal number ("-12.345", "1e3", "0.5E-1") to
// its unscaled value at scale s, rounding half away from zero as Flink's
// casts to DECIMAL do.
func parseDecimal(text string, s int32) (int64, error) {
	bad := errors.New("not a decimal number: " + strconv.Quote(text))
	str := strings.TrimSpace(text)
	neg := false
	if str != "" && (str[0] == '-' || str[0] == '+') {
		neg = str[0] == '-'
		str = str[1:]
	}
	exp := 0
	if i := strings.IndexAny(str, "eE"); i >= 0 {
		e, err := strconv.Atoi(str[i+1:])
		if err != nil || e > 400 || e < -400 {
			return 0, bad
		}
		exp, str = e, str[:i]
	}
	intPart, frac, _ := strings.Cut(str, ".")
	digits := intPart + frac
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return 0, bad
	}
	// The value is digits * 10^(exp - len(frac)); scale it to s.
	shift := int(s) + exp - len(frac)
	var round bool
	if shift < 0 {
		if -shift > len(digits) {
			digits = "0"
		} else {
			round = digits[len(digits)+shift] >= '5'
			digits = digits[:len(digits)+shift]
		}
		shift = 0
	}
	digits = strings.TrimLeft(digits, "0")
	if len(digits)+shift > 18 {
		return 0, errDecimalRange
	}
	var u int64
	for _, c := range digits {
		u = u*10 + int64(c-'0')
	}
	for range shift {
		u *= 10
	}
	if round {
		u++
	}
	if neg {
		u = -u
	}
	return u, nil
}

// appendTimestamp appends epoch milliseconds as SQL's TIMESTAMP(3) text,
// "2024-01-01 00:00:00.000", in UTC.
func appendTimestamp(dst []byte, ms int64) []byte {
	return time.UnixMilli(ms).UTC().AppendFormat(dst, "2006-01-02 15:04:05.000")
}

// parseTimestamp parses SQL's timestamp text ("2024-01-01 00:00:00",
// with up to nine fraction digits) or ISO-8601 ("2024-01-01T00:00:00Z",
// the zone optional) to epoch milliseconds, UTC where no zone is given.
func parseTimestamp(s string) (int64, error) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{"2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999", time.RFC3339Nano, "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UnixMilli(), nil
		}
	}
	return 0, errors.New("not a timestamp: " + strconv.Quote(s))
}

// appendInterval appends milliseconds as Flink prints an INTERVAL DAY TO
// SECOND: "+1 02:03:04.005".
func appendInterval(dst []byte, ms int64) []byte {
	sign := byte('+')
	u := absU(ms)
	if ms < 0 {
		sign = '-'
	}
	dst = append(dst, sign)
	dst = strconv.AppendUint(dst, u/86_400_000, 10)
	dst = append(dst, ' ')
	two := func(dst []byte, v uint64) []byte { return append(dst, byte('0'+v/10), byte('0'+v%10)) }
	dst = two(dst, u/3_600_000%24)
	dst = append(dst, ':')
	dst = two(dst, u/60_000%60)
	dst = append(dst, ':')
	dst = two(dst, u/1000%60)
	dst = append(dst, '.')
	f := u % 1000
	return append(dst, byte('0'+f/100), byte('0'+f/10%10), byte('0'+f%10))
}

// appendJavaDouble appends f as Java's Double.toString writes it (which
// is how Flink casts a DOUBLE to text): "1.0", "0.001", "1.0E7",
// "1.234E-5", "NaN", "Infinity".
func appendJavaDouble(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	}
	if a := math.Abs(f); a == 0 || (a >= 1e-3 && a < 1e7) {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		if f == 0 && math.Signbit(f) {
			s = "-0.0"
		}
		return append(dst, s...)
	}
	s := strconv.FormatFloat(f, 'E', -1, 64) // 1.234E+07
	mant, exp, _ := strings.Cut(s, "E")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	exp = strings.TrimPrefix(exp, "+")
	neg := strings.HasPrefix(exp, "-")
	exp = strings.TrimLeft(strings.TrimPrefix(exp, "-"), "0")
	if neg {
		exp = "-" + exp
	}
	return append(append(append(dst, mant...), 'E'), exp...)
}

// appendText appends v as Flink's print connector shows a value of type
// t: NULL as "NULL", strings as they are, BOOLEAN as TRUE or FALSE,
// DOUBLE as Java writes it, DECIMAL with its scale's digits, TIMESTAMP as
// "2024-01-01 00:00:00.000".
func appendText(dst []byte, v row.Value, t types.Type) []byte {
	if v.IsNull() {
		return append(dst, "NULL"...)
	}
	switch t.Kind {
	case types.Varchar:
		return append(dst, v.S...)
	case types.Boolean:
		if v.Bool() {
			return append(dst, "TRUE"...)
		}
		return append(dst, "FALSE"...)
	case types.Double:
		return appendJavaDouble(dst, v.Float())
	case types.Decimal:
		return appendDecimal(dst, v.I, t.Scale)
	case types.Timestamp:
		return appendTimestamp(dst, v.I)
	case types.Interval:
		return appendInterval(dst, v.I)
	}
	return strconv.AppendInt(dst, v.I, 10)
}

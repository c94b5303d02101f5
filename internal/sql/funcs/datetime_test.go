package funcs

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"
)

func ts(s string) time.Time {
	t, err := ParseTimestamp(s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestDateFormat(t *testing.T) {
	at := ts("2024-03-05 07:08:09.012")
	for _, tc := range []struct{ pattern, want string }{
		{"yyyy-MM-dd", "2024-03-05"}, // Nexmark q15, q16, q17
		{"HH:mm", "07:08"},           // Nexmark q16
		{"yyyy-MM-dd HH:mm:ss", "2024-03-05 07:08:09"},
		{"yyyy-MM-dd HH:mm:ss.SSS", "2024-03-05 07:08:09.012"},
		{"yyyyMMddHH", "2024030507"},
		{"yy/M/d H:m:s", "24/3/5 7:8:9"},
		{"S SS SSSSSS", "0 01 012000"},
		{"MMM MMMM EEE EEEE", "Mar March Tue Tuesday"},
		{"hh:mm a", "07:08 AM"},
		{"D", "65"},
		{"'at' HH 'o''clock'", "at 07 o'clock"},
		{"''yyyy''", "'2024'"},
		{"G yyyy Z X z", "AD 2024 +0000 Z UTC"},
		{"", ""},
	} {
		got, err := DateFormatTimestamp(at, tc.pattern)
		if err != nil || got != tc.want {
			t.Errorf("DATE_FORMAT(%v, %q) = %q, %v; want %q", at, tc.pattern, got, err, tc.want)
		}
	}
	noon := ts("2024-03-05 12:30:00")
	if got, _ := DateFormatTimestamp(noon, "h a k K"); got != "12 PM 12 0" {
		t.Errorf("DATE_FORMAT(noon, 'h a k K') = %q", got)
	}
	midnight := ts("2024-03-05 00:00:00")
	if got, _ := DateFormatTimestamp(midnight, "h a k K"); got != "12 AM 24 0" {
		t.Errorf("DATE_FORMAT(midnight, 'h a k K') = %q", got)
	}
	for _, pattern := range []string{"yyyy-MM-dd'T", "uuuu", "YYYY", "ww", "[yyyy]", "q"} {
		if _, err := DateFormatTimestamp(at, pattern); !errors.Is(err, ErrDatePattern) {
			t.Errorf("DATE_FORMAT pattern %q: err = %v, want ErrDatePattern", pattern, err)
		}
	}
}

func TestDateFormatReadsTheWallClockInUTC(t *testing.T) {
	zone := time.FixedZone("UTC+2", 2*3600)
	at := time.Date(2024, 1, 1, 1, 0, 0, 0, zone) // 2023-12-31 23:00 UTC
	if got, _ := DateFormatTimestamp(at, "yyyy-MM-dd HH"); got != "2023-12-31 23" {
		t.Errorf("DATE_FORMAT = %q, want the UTC wall clock", got)
	}
}

func TestParseTimestamp(t *testing.T) {
	for _, tc := range []struct{ s, want string }{
		{"2024-03-05 07:08:09", "2024-03-05T07:08:09Z"},
		{"2024-03-05 07:08:09.5", "2024-03-05T07:08:09.5Z"},
		{"2024-03-05 07:08:09.123456789", "2024-03-05T07:08:09.123Z"}, // truncated to ms
		{"2024-03-05T07:08:09", "2024-03-05T07:08:09Z"},
		{" 2024-03-05 07:08 ", "2024-03-05T07:08:00Z"},
		{"2024-03-05", "2024-03-05T00:00:00Z"},
		{"2024-3-5", "2024-03-05T00:00:00Z"},
	} {
		got, err := ParseTimestamp(tc.s)
		if err != nil || got.Format(time.RFC3339Nano) != tc.want {
			t.Errorf("ParseTimestamp(%q) = %v, %v; want %s", tc.s, got, err, tc.want)
		}
	}
	for _, s := range []string{"", "abc", "2024-02-30", "2024-13-01", "2024-03-05 24:00:00",
		"2024-03-05 07:08:09.", "2024-03-05 07", "2024-03-05 07:08:09 x"} {
		if _, err := ParseTimestamp(s); !errors.Is(err, ErrTimestampSyntax) {
			t.Errorf("ParseTimestamp(%q): err = %v, want ErrTimestampSyntax", s, err)
		}
	}
}

func TestToTimestamp(t *testing.T) {
	for _, tc := range []struct {
		s, pattern string
		hasPattern bool
		want       string
		ok         bool
	}{
		{"2024-03-05 07:08:09", "", false, "2024-03-05 07:08:09.000", true},
		{"05/03/2024 07h", "dd/MM/yyyy HH'h'", true, "2024-03-05 07:00:00.000", true},
		{"20240305", "yyyyMMdd", true, "2024-03-05 00:00:00.000", true},
		{"Mar 5, 2024 7:08 PM", "MMM d, yyyy h:mm a", true, "2024-03-05 19:08:00.000", true},
		{"12:00 AM", "hh:mm a", true, "1970-01-01 00:00:00.000", true},
		{"2024-03-05 07:08:09.012", "yyyy-MM-dd HH:mm:ss.SSS", true, "2024-03-05 07:08:09.012", true},
		{"not a date", "", false, "", false},
		{"2024-03-05", "yyyy-MM-dd HH:mm", true, "2024-03-05 00:00:00.000", true}, // falls back
		{"1999-9-10 05:20:10", "yyyy/MM/dd", true, "1999-09-10 05:20:10.000", true},
		{"05.03.2024", "yyyy-MM-dd", true, "", false},
		{"2024-03-05 x", "yyyy-MM-dd", true, "", false}, // trailing text
		{"2024-03-05", "[", true, "", false},
	} {
		got, ok := ToTimestamp(tc.s, tc.pattern, tc.hasPattern)
		if ok != tc.ok || ok && FormatTimestamp(got) != tc.want {
			t.Errorf("TO_TIMESTAMP(%q, %q) = %v, %v; want %s, %v", tc.s, tc.pattern, got, ok, tc.want, tc.ok)
		}
	}
}

func TestUnixTimestampAndFromUnixtime(t *testing.T) {
	if got := UnixTimestamp("1970-01-01 00:00:44", DefaultTimestampPattern); got != 44 {
		t.Errorf("UNIX_TIMESTAMP = %d, want 44", got)
	}
	if got := UnixTimestamp("2024-03-05", "yyyy-MM-dd"); got != 1709596800 {
		t.Errorf("UNIX_TIMESTAMP = %d, want 1709596800", got)
	}
	if got := UnixTimestamp("1969-12-31 23:59:59", DefaultTimestampPattern); got != -1 {
		t.Errorf("UNIX_TIMESTAMP before the epoch = %d, want -1", got)
	}
	if got := UnixTimestamp("1970-01-01 00:00:44.999 trailing", DefaultTimestampPattern); got != 44 {
		t.Errorf("UNIX_TIMESTAMP of a prefix = %d, want 44", got)
	}
	if got := UnixTimestamp("garbage", DefaultTimestampPattern); got != UnparsableUnixTimestamp {
		t.Errorf("UNIX_TIMESTAMP of garbage = %d, want %d", got, int64(UnparsableUnixTimestamp))
	}
	// Flink's documented example, in UTC.
	if got, err := FromUnixtime(44, DefaultTimestampPattern); err != nil || got != "1970-01-01 00:00:44" {
		t.Errorf("FROM_UNIXTIME(44) = %q, %v", got, err)
	}
	if got, err := FromUnixtime(1709596800, "yyyy/MM/dd"); err != nil || got != "2024/03/05" {
		t.Errorf("FROM_UNIXTIME = %q, %v", got, err)
	}
	if _, err := FromUnixtime(0, "'"); !errors.Is(err, ErrDatePattern) {
		t.Errorf("FROM_UNIXTIME with a bad pattern: err = %v", err)
	}
}

func TestExtract(t *testing.T) {
	at := ts("2024-12-30 13:14:15.999") // a Monday in ISO week 1 of 2025
	for _, tc := range []struct {
		unit string
		f    func(time.Time) int64
		want int64
	}{
		{"year", Year, 2024}, {"QUARTER", Quarter, 4}, {"Month", Month, 12},
		{"WEEK", Week, 1}, {"DAY", DayOfMonth, 30}, {"DOY", DayOfYear, 365},
		{"DOW", DayOfWeek, 2}, {"HOUR", Hour, 13}, {"MINUTE", Minute, 14},
		{"SECOND", Second, 15},
	} {
		u, ok := ParseTimeUnit(tc.unit)
		if !ok {
			t.Fatalf("ParseTimeUnit(%q) not found", tc.unit)
		}
		if got := Extract(u, at); got != tc.want {
			t.Errorf("EXTRACT(%s FROM %v) = %d, want %d", tc.unit, at, got, tc.want)
		}
		if got := tc.f(at); got != tc.want {
			t.Errorf("%s(%v) = %d, want %d", tc.unit, at, got, tc.want)
		}
	}
	if _, ok := ParseTimeUnit("FORTNIGHT"); ok {
		t.Error("ParseTimeUnit accepted FORTNIGHT")
	}
	if got := DayOfWeek(ts("2024-03-03")); got != 1 {
		t.Errorf("DAYOFWEEK of a Sunday = %d, want 1", got)
	}
}

// A FormatMemo keeps the text of the last period it formatted (a day for
// 'yyyy-MM-dd'): over times that go back and forth across period
// boundaries, before and after 1970 and within a second of them, each
// result is the text Format gives.
func TestAFormatMemoGivesWhatFormatGives(t *testing.T) {
	patterns := []string{"yyyy-MM-dd", "HH:mm", "yyyy-MM-dd HH:mm:ss", "EEE, d MMM yyyy h a", "yyyy-MM-dd HH:mm:ss.SSS", "D"}
	var times []time.Time
	rng := rand.New(rand.NewPCG(3, 4))
	for _, base := range []int64{0, 86400_000, -86400_000, 1_700_000_000_000, -1_000, 3600_000} {
		for range 200 {
			ms := base + rng.Int64N(4000) - 2000 // around the boundary
			if rng.IntN(4) == 0 {
				ms = base + rng.Int64N(3*86400_000) - 86400_000
			}
			times = append(times, time.UnixMilli(ms).Add(time.Duration(rng.IntN(1000))*time.Microsecond))
		}
	}
	for _, p := range patterns {
		f, err := CompileDateFormat(p)
		if err != nil {
			t.Fatal(err)
		}
		m := f.Memo()
		for _, tm := range times {
			if got, want := m.Format(tm), f.Format(tm); got != want {
				t.Fatalf("%q of %v: got %q, want %q", p, tm, got, want)
			}
		}
	}
}

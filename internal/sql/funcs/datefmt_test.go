package funcs

import (
	"sync"
	"testing"
	"time"
)

// A pattern of whole days returns the last day's string for any time of
// that day; across days, before 1970 and from several goroutines at once
// it formats what a new DateFormat formats.
func TestADailyPatternFormatsWhatAFreshOneFormats(t *testing.T) {
	times := []time.Time{
		time.Date(2015, 7, 15, 0, 0, 0, 0, time.UTC),
		time.Date(2015, 7, 15, 23, 59, 59, 999_000_000, time.UTC),
		time.Date(2015, 7, 16, 0, 0, 0, 0, time.UTC),
		time.Date(2015, 7, 15, 12, 0, 0, 0, time.UTC),
		time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC),
		time.Date(1969, 12, 30, 23, 0, 0, 0, time.UTC),
		time.Date(2015, 7, 16, 1, 0, 0, 0, time.FixedZone("+02", 7200)), // 15 July in UTC
	}
	for _, pattern := range []string{"yyyy-MM-dd", "EEE d MMM yyyy z", "yyyy-MM-dd HH:mm"} {
		f, err := CompileDateFormat(pattern)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				for i := range 200 {
					ts := times[(i+g)%len(times)]
					fresh, _ := CompileDateFormat(pattern)
					if got, want := f.Format(ts), fresh.Format(ts); got != want {
						t.Errorf("%q of %v: %q, want %q", pattern, ts, got, want)
						return
					}
				}
			})
		}
		wg.Wait()
	}
}

func TestADailyPatternAllocatesNothingWithinADay(t *testing.T) {
	f, err := CompileDateFormat("yyyy-MM-dd")
	if err != nil {
		t.Fatal(err)
	}
	ts := time.Date(2015, 7, 15, 10, 0, 0, 0, time.UTC)
	f.Format(ts)
	if n := testing.AllocsPerRun(100, func() { ts = ts.Add(time.Second); f.Format(ts) }); n != 0 {
		t.Errorf("%v allocations per format within one day, want 0", n)
	}
	if h, _ := CompileDateFormat("HH:mm"); h.daily {
		t.Error("a pattern of hours and minutes is taken as daily")
	}
}

package funcs

import "testing"

// Nexmark q21 extracts a channel id from a bid's URL:
//
//	CASE WHEN lower(channel) = 'apple' THEN '0' ... ELSE
//	REGEXP_EXTRACT(url, '(&|^)channel_id=([^&]*)', 2) END
func TestNexmarkQ21ChannelExtraction(t *testing.T) {
	const regex = `(&|^)channel_id=([^&]*)`
	for _, tc := range []struct {
		url, want string
		ok        bool
	}{
		{"https://www.nexmark.com/xyz/item.htm?query=1&channel_id=1234567", "1234567", true},
		{"https://www.nexmark.com/xyz/item.htm?query=1&channel_id=", "", true},
		{"https://www.nexmark.com/xyz/item.htm?query=1&channel_id=42&x=y", "42", true},
		{"channel_id=7&a=b", "7", true},
		{"https://www.nexmark.com/xyz/item.htm?query=1", "", false},
		{"https://www.nexmark.com/xyz/item.htm?query=1&xchannel_id=9", "", false},
	} {
		got, ok := RegexpExtract(tc.url, regex, 2)
		if got != tc.want || ok != tc.ok {
			t.Errorf("REGEXP_EXTRACT(%q, %q, 2) = %q, %v; want %q, %v", tc.url, regex, got, ok, tc.want, tc.ok)
		}
	}
	for _, channel := range []string{"Apple", "APPLE", "apple"} {
		if Lower(channel) != "apple" {
			t.Errorf("lower(%q) = %q", channel, Lower(channel))
		}
	}
}

// Nexmark q14 counts the 'c's of a bid's extra column with the user
// function count_char(extra, 'c').
func TestNexmarkQ14CountChar(t *testing.T) {
	if got := CountChar("cacbcc  ddc", "c"); got != 5 {
		t.Errorf("count_char = %d, want 5", got)
	}
}

// Nexmark q10, q15, q16 and q17 format the bid time as a day and a
// minute.
func TestNexmarkDateFormats(t *testing.T) {
	at := TimestampFromMillis(1_700_000_123_456) // 2023-11-14 22:15:23.456
	for _, tc := range []struct{ pattern, want string }{
		{"yyyy-MM-dd", "2023-11-14"},
		{"HH:mm", "22:15"},
		{"yyyy-MM-dd HH:mm:ss", "2023-11-14 22:15:23"},
	} {
		got, err := DateFormatTimestamp(at, tc.pattern)
		if err != nil || got != tc.want {
			t.Errorf("DATE_FORMAT(%v, %q) = %q, %v; want %q", at, tc.pattern, got, err, tc.want)
		}
	}
}

package queries

import (
	"strings"
	"testing"

	"github.com/weir-stream/weir/nexmark"
)

// q21Extract is REGEXP_EXTRACT(url, '(&|^)channel_id=([^&]*)', 2) written
// out by hand: the first "channel_id=" at the start of url or right after
// an '&', up to the next '&'.
func q21Extract(url string) (string, bool) {
	const key = "channel_id="
	i := -1
	if strings.HasPrefix(url, key) {
		i = 0
	} else if j := strings.Index(url, "&"+key); j >= 0 {
		i = j + 1
	}
	if i < 0 {
		return "", false
	}
	v := url[i+len(key):]
	if k := strings.IndexByte(v, '&'); k >= 0 {
		v = v[:k]
	}
	return v, true
}

func TestQ21(t *testing.T) {
	cfg := testConfig(20000)
	hot := map[string]string{"apple": "0", "google": "1", "facebook": "2", "baidu": "3"}
	var want []Q21Row
	dropped, extracted := 0, 0
	for _, e := range allEvents(t, cfg) {
		if e.Kind != nexmark.BidEvent {
			continue
		}
		b := e.Bid
		id, isHot := hot[strings.ToLower(b.Channel)]
		ext, found := q21Extract(b.URL)
		if !isHot && !found {
			dropped++
			continue
		}
		if !isHot {
			id = ext
			extracted++
		}
		want = append(want, Q21Row{b.Auction, b.Bidder, b.Price, b.Channel, id})
	}
	if dropped == 0 || extracted == 0 {
		t.Fatalf("reference drops %d bids and extracts %d ids; the test needs both", dropped, extracted)
	}
	check(t, "q21", cfg, rowsJSON(t, want))
}

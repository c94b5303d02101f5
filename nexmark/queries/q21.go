package queries

import (
	"regexp"
	"strings"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/nexmark"
)

// Q21Row is a row of q21, a bid with a channel id, the Nexmark SQL
//
//	SELECT auction, bidder, price, channel,
//	       CASE
//	         WHEN lower(channel) = 'apple' THEN '0'
//	         WHEN lower(channel) = 'google' THEN '1'
//	         WHEN lower(channel) = 'facebook' THEN '2'
//	         WHEN lower(channel) = 'baidu' THEN '3'
//	         ELSE REGEXP_EXTRACT(url, '(&|^)channel_id=([^&]*)', 2)
//	       END AS channel_id
//	FROM bid
//	WHERE REGEXP_EXTRACT(url, '(&|^)channel_id=([^&]*)', 2) IS NOT NULL
//	   OR lower(channel) IN ('apple', 'google', 'facebook', 'baidu');
//
// The WHERE clause makes channel_id never null.
type Q21Row struct {
	Auction   int64  `json:"auction"`
	Bidder    int64  `json:"bidder"`
	Price     int64  `json:"price"`
	Channel   string `json:"channel"`
	ChannelID string `json:"channel_id"`
}

var q21ChannelIDRE = regexp.MustCompile(`(&|^)channel_id=([^&]*)`)

// q21ChannelID computes channel_id, reporting false where the SQL's WHERE
// drops the bid.
func q21ChannelID(b nexmark.Bid) (string, bool) {
	switch strings.ToLower(b.Channel) {
	case "apple":
		return "0", true
	case "google":
		return "1", true
	case "facebook":
		return "2", true
	case "baidu":
		return "3", true
	}
	m := q21ChannelIDRE.FindStringSubmatch(b.URL)
	if m == nil {
		return "", false
	}
	return m[2], true
}

func init() {
	Register(Query{Name: "q21", Description: "bids with a channel id: fixed for the four hot channels, else extracted from the URL",
		Build: func(in weir.Stream[nexmark.Event], out Output) {
			Emit(weir.FlatMap(in, func(e nexmark.Event, emit func(Q21Row)) {
				if e.Kind != nexmark.BidEvent {
					return
				}
				b := e.Bid
				if id, ok := q21ChannelID(b); ok {
					emit(Q21Row{Auction: b.Auction, Bidder: b.Bidder, Price: b.Price, Channel: b.Channel, ChannelID: id})
				}
			}, weir.Name("q21")), out)
		}})
}

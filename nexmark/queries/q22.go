package queries

import (
	"strings"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/nexmark"
)

// Q22Row is a row of q22, a bid with the first three directories of its
// URL, the Nexmark SQL
//
//	SELECT auction, bidder, price, channel,
//	       SPLIT_INDEX(url, '/', 3) AS dir1,
//	       SPLIT_INDEX(url, '/', 4) AS dir2,
//	       SPLIT_INDEX(url, '/', 5) AS dir3
//	FROM bid;
//
// SPLIT_INDEX splits at every '/' (keeping empty parts) and takes the part
// at a 0-based index, null (JSON null) when there is none. The generator's
// URLs, "https://www.nexmark.com/<a>/<b>/<c>/item.htm?query=1...", always
// have all three.
type Q22Row struct {
	Auction int64   `json:"auction"`
	Bidder  int64   `json:"bidder"`
	Price   int64   `json:"price"`
	Channel string  `json:"channel"`
	Dir1    *string `json:"dir1"`
	Dir2    *string `json:"dir2"`
	Dir3    *string `json:"dir3"`
}

func q22Part(parts []string, i int) *string {
	if i >= len(parts) {
		return nil
	}
	return &parts[i]
}

func init() {
	Register(Query{Name: "q22", Description: "bids with the first three directories of their URL (SPLIT_INDEX)",
		Build: func(in weir.Stream[nexmark.Event], out Output) {
			Emit(weir.FlatMap(in, func(e nexmark.Event, emit func(Q22Row)) {
				if e.Kind != nexmark.BidEvent {
					return
				}
				b := e.Bid
				parts := strings.Split(b.URL, "/")
				emit(Q22Row{Auction: b.Auction, Bidder: b.Bidder, Price: b.Price, Channel: b.Channel,
					Dir1: q22Part(parts, 3), Dir2: q22Part(parts, 4), Dir3: q22Part(parts, 5)})
			}, weir.Name("q22")), out)
		}})
}

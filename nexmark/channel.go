package nexmark

import (
	"math/bits"
	"strconv"
	"sync"
)

// Bid channels and URLs.
//
// Beam's generator has no channel or url; the Flink nexmark benchmark
// (github.com/nexmark/nexmark, BidGenerator) added them with this logic:
//
//   - with probability 1/2 (nextInt(2) > 0) the bid comes from one of four hot
//     channels, "Google", "Facebook", "Baidu" or "Apple" (nextInt(4)), each
//     with a fixed URL;
//   - otherwise from "channel-N", N = nextInt(10000), whose URL is a random
//     "https://www.nexmark.com/<a>/<b>/<c>/item.htm?query=1" (each part 3 or 4
//     characters from [a-z_], '_' with probability 1/13), to which 9 channels
//     in 10 append "&channel_id=" + Math.abs(Integer.reverse(N)).
//
// Flink builds the four hot URLs and the 10,000 channel URLs at class load
// from an unseeded random source, so its URLs differ from run to run, and it
// draws the channel between the price and the extra field of the bid, which
// shifts the extra field away from Beam's. This port keeps Beam's fields
// exact and stays deterministic:
//
//   - the URL tables are built exactly as Flink builds them (four hot URLs,
//     then, per channel in order, the base URL and the 1-in-10 draw), from a
//     java.util.Random seeded with channelTableSeed;
//   - the per-bid choice (nextInt(2), then nextInt(4) or nextInt(10000)) is
//     drawn from the bid's own java.util.Random after all of Beam's draws,
//     that is, after the extra field.
//
// Flink also adds FirstPersonID to the bidder twice; this port keeps Beam's
// bidder ids.

// channelTableSeed seeds the URL tables: "nexmark" in ASCII.
const channelTableSeed int64 = 0x6e65786d61726b

const (
	hotChannelsRatio = 2      // Flink BidGenerator.HOT_CHANNELS_RATIO
	numChannels      = 10_000 // Flink BidGenerator.CHANNELS_NUMBER
)

var hotChannels = [...]string{"Google", "Facebook", "Baidu", "Apple"}

type channelTables struct {
	hotURLs [len(hotChannels)]string
	names   [numChannels]string
	urls    [numChannels]string
}

// next draws a bid's channel and URL from r.
func (t *channelTables) next(r *JavaRandom) (channel, url string) {
	if r.NextIntn(hotChannelsRatio) > 0 {
		i := r.NextIntn(int32(len(hotChannels)))
		return hotChannels[i], t.hotURLs[i]
	}
	n := r.NextIntn(numChannels)
	return t.names[n], t.urls[n]
}

var getChannelTables = sync.OnceValue(buildChannelTables)

// appendBaseURL ports Flink's BidGenerator.getBaseUrl.
func appendBaseURL(buf []byte, r *JavaRandom) []byte {
	buf = append(buf, "https://www.nexmark.com/"...)
	buf = appendString(buf, r, 5, '_')
	buf = append(buf, '/')
	buf = appendString(buf, r, 5, '_')
	buf = append(buf, '/')
	buf = appendString(buf, r, 5, '_')
	buf = append(buf, "/item.htm?query=1"...)
	return buf
}

func buildChannelTables() *channelTables {
	t := new(channelTables)
	r := NewJavaRandom(channelTableSeed)
	// All strings share two backing arrays.
	var urlBuf, nameBuf []byte
	var hotEnds [len(hotChannels)]int
	for i := range hotEnds {
		urlBuf = appendBaseURL(urlBuf, &r)
		hotEnds[i] = len(urlBuf)
	}
	var urlEnds, nameEnds [numChannels]int
	for i := 0; i < numChannels; i++ {
		urlBuf = appendBaseURL(urlBuf, &r)
		if r.NextIntn(10) > 0 {
			urlBuf = append(urlBuf, "&channel_id="...)
			// Math.abs(Integer.reverse(i)): int32 negation wraps, so
			// channel 1 gets -2147483648 as in Java.
			v := int32(bits.Reverse32(uint32(i)))
			if v < 0 {
				v = -v
			}
			urlBuf = strconv.AppendInt(urlBuf, int64(v), 10)
		}
		urlEnds[i] = len(urlBuf)
		nameBuf = append(nameBuf, "channel-"...)
		nameBuf = strconv.AppendInt(nameBuf, int64(i), 10)
		nameEnds[i] = len(nameBuf)
	}
	urls, names := string(urlBuf), string(nameBuf)
	start := 0
	for i, end := range hotEnds {
		t.hotURLs[i] = urls[start:end]
		start = end
	}
	nstart := 0
	for i := 0; i < numChannels; i++ {
		t.urls[i] = urls[start:urlEnds[i]]
		start = urlEnds[i]
		t.names[i] = names[nstart:nameEnds[i]]
		nstart = nameEnds[i]
	}
	return t
}

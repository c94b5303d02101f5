package nexmark

import "strconv"

// AppendJSON appends e as one JSON object, without a trailing newline, and
// returns the extended buffer. The object has a "type" member ("person",
// "auction" or "bid") followed by the entity's fields under their Nexmark SQL
// schema names, in this order:
//
//	person:  id, name, emailAddress, creditCard, city, state, dateTime, extra
//	auction: id, itemName, description, initialBid, reserve, dateTime,
//	         expires, seller, category, extra
//	bid:     auction, bidder, price, channel, url, dateTime, extra
//
// Times are integers in epoch milliseconds. Strings escape only '"', '\\' and
// control characters (as \u00XX); other bytes are copied as they are, so the
// output is valid JSON whenever the strings are valid UTF-8, which generated
// strings always are (they are ASCII). The output is byte-for-byte what the
// Java reference dump used for the golden files produces.
func AppendJSON(dst []byte, e *Event) []byte {
	switch e.Kind {
	case PersonEvent:
		p := &e.Person
		dst = append(dst, `{"type":"person","id":`...)
		dst = strconv.AppendInt(dst, p.ID, 10)
		dst = appendJSONField(dst, `,"name":`, p.Name)
		dst = appendJSONField(dst, `,"emailAddress":`, p.EmailAddress)
		dst = appendJSONField(dst, `,"creditCard":`, p.CreditCard)
		dst = appendJSONField(dst, `,"city":`, p.City)
		dst = appendJSONField(dst, `,"state":`, p.State)
		dst = append(dst, `,"dateTime":`...)
		dst = strconv.AppendInt(dst, p.DateTime, 10)
		dst = appendJSONField(dst, `,"extra":`, p.Extra)
	case AuctionEvent:
		a := &e.Auction
		dst = append(dst, `{"type":"auction","id":`...)
		dst = strconv.AppendInt(dst, a.ID, 10)
		dst = appendJSONField(dst, `,"itemName":`, a.ItemName)
		dst = appendJSONField(dst, `,"description":`, a.Description)
		dst = append(dst, `,"initialBid":`...)
		dst = strconv.AppendInt(dst, a.InitialBid, 10)
		dst = append(dst, `,"reserve":`...)
		dst = strconv.AppendInt(dst, a.Reserve, 10)
		dst = append(dst, `,"dateTime":`...)
		dst = strconv.AppendInt(dst, a.DateTime, 10)
		dst = append(dst, `,"expires":`...)
		dst = strconv.AppendInt(dst, a.Expires, 10)
		dst = append(dst, `,"seller":`...)
		dst = strconv.AppendInt(dst, a.Seller, 10)
		dst = append(dst, `,"category":`...)
		dst = strconv.AppendInt(dst, a.Category, 10)
		dst = appendJSONField(dst, `,"extra":`, a.Extra)
	default:
		b := &e.Bid
		dst = append(dst, `{"type":"bid","auction":`...)
		dst = strconv.AppendInt(dst, b.Auction, 10)
		dst = append(dst, `,"bidder":`...)
		dst = strconv.AppendInt(dst, b.Bidder, 10)
		dst = append(dst, `,"price":`...)
		dst = strconv.AppendInt(dst, b.Price, 10)
		dst = appendJSONField(dst, `,"channel":`, b.Channel)
		dst = appendJSONField(dst, `,"url":`, b.URL)
		dst = append(dst, `,"dateTime":`...)
		dst = strconv.AppendInt(dst, b.DateTime, 10)
		dst = appendJSONField(dst, `,"extra":`, b.Extra)
	}
	return append(dst, '}')
}

// AppendJSONLine is AppendJSON followed by a '\n': one line of a JSON-lines
// stream.
func AppendJSONLine(dst []byte, e *Event) []byte {
	return append(AppendJSON(dst, e), '\n')
}

func appendJSONField(dst []byte, key, s string) []byte {
	dst = append(dst, key...)
	return appendJSONString(dst, s)
}

const hexDigits = "0123456789abcdef"

func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		if c == '"' || c == '\\' {
			dst = append(dst, '\\', c)
		} else {
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

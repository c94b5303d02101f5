package sql

import "testing"

// A regular join of two scans of one table reads the table's source
// through one operator that tags each row with its side (joinOfScans).

func TestAJoinOfTwoScansOfOneTableMatchesTheReference(t *testing.T) {
	const cols = `a BIGINT, ac INT, b BIGINT, bc INT`
	for name, c := range map[string]refCase{
		"disjoint sides": {failures: true, script: script(cols,
			`INSERT INTO out SELECT A.id, A.category, B.id, B.category FROM auctions A JOIN auctions B ON A.seller = B.seller WHERE A.category = 1 AND B.category = 2`)},
		// A row of category 2 belongs to both sides: it is sent twice,
		// and joins with itself.
		"a row on both sides": {script: script(cols,
			`INSERT INTO out SELECT A.id, A.category, B.id, B.category FROM auctions A JOIN auctions B ON A.seller = B.seller WHERE A.category <= 2 AND B.category >= 2`)},
		"an outer join": {script: script(cols,
			`INSERT INTO out SELECT A.id, A.category, B.id, B.category FROM auctions A LEFT JOIN auctions B ON A.seller = B.seller AND B.category = 2 AND B.id > A.id WHERE A.category <= 1`)},
	} {
		t.Run(name, func(t *testing.T) {
			c.inputs = inputs(50)
			checkReference(t, c)
		})
	}
}

// A join on one integer key is keyed by its value, on anything else by
// the keys' encoding.
func TestJoinsKeyedByAStringOrTwoColumnsMatchTheReference(t *testing.T) {
	for name, c := range map[string]refCase{
		"a string key": {failures: true, script: script(`a BIGINT, b BIGINT, channel VARCHAR`,
			`INSERT INTO out SELECT A.auction, B.auction, A.channel FROM bids A JOIN bids B ON A.channel = B.channel WHERE A.auction = 1 AND B.auction = 2`)},
		"two keys": {script: script(`id BIGINT, bidder BIGINT, price DECIMAL(10, 2)`,
			`INSERT INTO out SELECT A.id, B.bidder, B.price FROM auctions A JOIN bids B ON A.id = B.auction AND A.seller = B.bidder`)},
	} {
		t.Run(name, func(t *testing.T) {
			c.inputs = inputs(200)
			checkReference(t, c)
		})
	}
}

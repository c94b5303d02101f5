package queries

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/weir-stream/weir/internal/sql/parse"
	"github.com/weir-stream/weir/nexmark"
)

// SQLScript returns the published Flink SQL of query q (Nexmark's
// ddl_gen.sql, ddl_views.sql and qN.sql, embedded in the binary) and the
// variables that make its 'nexmark' table generate the events of c, the
// events the Go query of the same name reads. The text is the published
// one except for the generator table's options: the generator count and
// base time, which the published DDL leaves at their defaults, are added
// from c. The sink stays as published (mostly 'blackhole').
func SQLScript(q string, c nexmark.Config) (text string, vars map[string]string, err error) {
	text, err = parse.NexmarkScript(q)
	if err != nil {
		return "", nil, err
	}
	const connector = "'connector' = 'nexmark',"
	if !strings.Contains(text, connector) {
		return "", nil, fmt.Errorf("nexmark %s: the published DDL has no %s", q, connector)
	}
	text = strings.Replace(text, connector, fmt.Sprintf("%s\n    'generators' = '%d',\n    'base-time' = '%d',",
		connector, c.NumEventGenerators, c.BaseTime), 1)
	if c.FirstEventRate != c.NextEventRate {
		return "", nil, fmt.Errorf("nexmark %s: the published DDL has one rate (${TPS}); first %d and next %d differ",
			q, c.FirstEventRate, c.NextEventRate)
	}
	vars = map[string]string{
		"NEXMARK_TABLE":      "datagen",
		"TPS":                strconv.Itoa(c.FirstEventRate),
		"EVENTS_NUM":         strconv.FormatInt(c.NumEvents, 10),
		"PERSON_PROPORTION":  strconv.Itoa(c.PersonProportion),
		"AUCTION_PROPORTION": strconv.Itoa(c.AuctionProportion),
		"BID_PROPORTION":     strconv.Itoa(c.BidProportion),
	}
	return text, vars, nil
}

package sql

import "testing"

func TestProjectionsFiltersAndScalarExpressionsMatchTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(200), script: script(
		`auction BIGINT, doubled DECIMAL(12, 2), plus DECIMAL(12, 2), third DOUBLE, band VARCHAR, bidder_text VARCHAR,
		 ch VARCHAR, url_len INT, cents BIGINT, modulo BIGINT, part VARCHAR, ts TIMESTAMP(3)`,
		`INSERT INTO out
		 SELECT auction, price * 2, price + 1.5, CAST(price AS DOUBLE) / 3,
		   CASE WHEN price < 20 THEN 'low' WHEN price < 60 THEN 'mid' ELSE 'high' END,
		   CAST(bidder AS VARCHAR) || '-' || channel,
		   UPPER(COALESCE(channel, 'none')), CHAR_LENGTH(url), cents, bidder % 3, SUBSTRING(url, 9, 5), ts
		 FROM bids
		 WHERE channel IN ('apple', 'google') OR price BETWEEN 10 AND 20 OR url LIKE '%/a/3%' OR channel IS NULL`)})
}

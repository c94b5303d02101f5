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

func TestMoreBuiltInFunctionsAndPredicatesMatchTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(200), script: script(
		`bidder BIGINT, rounded DECIMAL(10, 1), ratio DECIMAL(38, 6), absdiff DECIMAL(11, 2), sq DOUBLE, hh VARCHAR, sec BIGINT,
		 dir VARCHAR, replaced VARCHAR, padded VARCHAR, pick VARCHAR, parsed INT, greatest_id BIGINT, nullif_ch VARCHAR, ch_kind VARCHAR`,
		`INSERT INTO out
		 SELECT bidder, ROUND(price, 1), price / 3, ABS(price - 50), SQRT(CAST(bidder AS DOUBLE)),
		   DATE_FORMAT(ts, 'HH:mm:ss'), EXTRACT(SECOND FROM ts),
		   SPLIT_INDEX(url, '/', 4), REPLACE(url, 'https://', ''), LPAD(CAST(auction AS VARCHAR), 4, '0'),
		   IF(bidder > 5, 'big', 'small'), TRY_CAST(SUBSTRING(url, 17, 1) AS INT), GREATEST(auction, bidder),
		   NULLIF(channel, 'baidu'),
		   CASE channel WHEN 'apple' THEN 'a' WHEN 'google' THEN 'g' END
		 FROM bids
		 WHERE channel NOT IN ('facebook') AND price IS NOT NULL AND url NOT LIKE '%/a/0%' AND bidder NOT BETWEEN 4 AND 5`)})
}

func TestValuesAloneMatchTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(1), script: script(
		`k INT, v DECIMAL(5, 2), s VARCHAR`,
		`INSERT INTO out SELECT k * 2, v + 1, UPPER(s) FROM (VALUES (1, 1.25, 'a'), (2, 2.50, 'b'), (3, NULL, NULL)) AS T(k, v, s) WHERE k <> 2`)})
}

func TestAnInsertWithAColumnListMatchesTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(50), script: script(
		`a BIGINT, b VARCHAR, c DOUBLE, d INT`,
		`INSERT INTO out (d, b, a) SELECT category, itemName, id FROM auctions`)})
}

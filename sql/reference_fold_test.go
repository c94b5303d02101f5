package sql

import (
	"strings"
	"testing"
)

// Conditions on a row number that the optimizer folds into the TopN's
// limit, alone and with others, against the reference that filters
// above the numbering.

func TestRowNumberConditionsFoldedIntoTheLimitMatchTheReference(t *testing.T) {
	for name, where := range map[string]string{
		"equal to a number":            "rn = 2",
		"with a condition on a column": "rn <= 3 AND price > 50",
		"an equality after a bound":    "rn <= 3 AND rn = 2",
		"a bound after an equality":    "rn = 2 AND rn <= 3",
	} {
		t.Run(name, func(t *testing.T) {
			checkReference(t, refCase{inputs: inputs(200), script: script(
				`auction BIGINT, price DECIMAL(10, 2), ts TIMESTAMP(3), rn BIGINT`,
				`INSERT INTO out SELECT auction, price, ts, rn FROM (
				   SELECT *, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC, ts) AS rn FROM bids)
				 WHERE `+where)})
		})
	}
}

func TestTwoTopNsOfOneCommonTableExpressionMatchTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(200), script: script(
		`which VARCHAR, auction BIGINT, rn BIGINT`,
		`INSERT INTO out
		 WITH ranked AS (SELECT auction, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY ts) AS rn FROM bids)
		 SELECT 'one', auction, rn FROM ranked WHERE rn <= 1
		 UNION ALL SELECT 'three', auction, rn FROM ranked WHERE rn <= 3`)})
}

// Conditions on a row number that leave no row make the script fail to
// plan, naming the row number, rather than crash the build or keep rows
// one condition excludes.
func TestContradictoryRowNumberConditionsAreAnError(t *testing.T) {
	for _, where := range []string{"rn >= 2 AND rn = 1", "rn = 4 AND rn < 3", "rn < 1 AND rn <= 3", "rn <= 0"} {
		_, err := Parse(script(`auction BIGINT, rn BIGINT`,
			`INSERT INTO out SELECT auction, rn FROM (
			   SELECT *, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY ts) AS rn FROM bids)
			 WHERE `+where), Options{})
		if err == nil || !strings.Contains(err.Error(), "ROW_NUMBER() rn") {
			t.Errorf("WHERE %s: error %v, want one about ROW_NUMBER() rn", where, err)
		}
	}
}

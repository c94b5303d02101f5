package sql

import "testing"

// Conditions of outer joins that belong to one side, anti-joins, and
// join keys that are expressions or of different types.

func TestOneSidedConditionsOfOuterJoinsMatchTheReference(t *testing.T) {
	for name, on := range map[string]string{
		"left join, left condition":   "A LEFT JOIN persons P ON A.seller = P.id AND A.category = 1",
		"left join, right condition":  "A LEFT JOIN persons P ON A.seller = P.id AND P.city = 'Kent'",
		"right join, left condition":  "A RIGHT JOIN persons P ON A.seller = P.id AND A.category = 1",
		"right join, right condition": "A RIGHT JOIN persons P ON A.seller = P.id AND P.city = 'Kent'",
		"full join, both conditions":  "A FULL JOIN persons P ON A.seller = P.id AND A.category <> 2 AND P.city <> 'Bend'",
	} {
		t.Run(name, func(t *testing.T) {
			checkReference(t, refCase{inputs: inputs(50), script: script(
				`id BIGINT, category INT, pid BIGINT, city VARCHAR`,
				`INSERT INTO out SELECT A.id, A.category, P.id, P.city FROM auctions `+on)})
		})
	}
}

func TestAnAntiJoinMatchesTheReference(t *testing.T) {
	checkReference(t, refCase{inputs: inputs(50), failures: true, script: script(
		`id BIGINT, seller BIGINT`,
		`INSERT INTO out SELECT A.id, A.seller FROM auctions A LEFT JOIN persons P ON A.seller = P.id WHERE P.id IS NULL`)})
}

func TestJoinKeysThatAreExpressionsOrOfOtherTypesMatchTheReference(t *testing.T) {
	for name, on := range map[string]string{
		"an expression": "A.seller + 1 = P.id",
		"another type":  "A.category = P.id",
		"both":          "P.id = A.category * 2 AND UPPER(P.state) = 'OR'",
	} {
		t.Run(name, func(t *testing.T) {
			checkReference(t, refCase{inputs: inputs(50), script: script(
				`id BIGINT, seller BIGINT, category INT, pid BIGINT, name VARCHAR`,
				`INSERT INTO out SELECT A.id, A.seller, A.category, P.id, P.name FROM auctions A LEFT JOIN persons P ON `+on)})
		})
	}
}

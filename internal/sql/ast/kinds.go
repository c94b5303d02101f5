package ast

var litKinds = [...]string{LitNumber: "number", LitString: "string", LitBool: "bool", LitNull: "null",
	LitTimestamp: "timestamp", LitDate: "date", LitTime: "time"}

func (k LitKind) String() string {
	if k > 0 && int(k) < len(litKinds) {
		return litKinds[k]
	}
	return "?"
}

var boundKinds = [...]string{UnboundedPreceding: "UNBOUNDED PRECEDING", Preceding: "PRECEDING",
	CurrentRow: "CURRENT ROW", Following: "FOLLOWING", UnboundedFollowing: "UNBOUNDED FOLLOWING"}

func (k BoundKind) String() string {
	if k > 0 && int(k) < len(boundKinds) {
		return boundKinds[k]
	}
	return "?"
}

var columnKinds = [...]string{Physical: "physical", Computed: "computed", Metadata: "metadata"}

func (k ColumnKind) String() string {
	if k > 0 && int(k) < len(columnKinds) {
		return columnKinds[k]
	}
	return "?"
}

package types

import "testing"

func TestArithmeticTypesFollowFlink(t *testing.T) {
	tests := []struct {
		name string
		op   string
		a, b Type
		want string
	}{
		{"DECIMAL(3, 3) * BIGINT is DECIMAL(23, 3), as Nexmark q1's 0.908 * price", "*", DecimalOf(3, 3), BigIntType, "DECIMAL(23, 3)"},
		{"INT / INT stays INT", "/", IntType, IntType, "INT"},
		{"INT + BIGINT is BIGINT", "+", IntType, BigIntType, "BIGINT"},
		{"DOUBLE wins over DECIMAL", "+", DoubleType, DecimalOf(5, 2), "DOUBLE"},
		{"DECIMAL division keeps scale 6 at least", "/", DecimalOf(5, 0), DecimalOf(2, 0), "DECIMAL(11, 6)"},
		{"DECIMAL(38, 19) * DECIMAL(38, 19) gives up scale down to 6", "*", DecimalOf(38, 19), DecimalOf(38, 19), "DECIMAL(38, 6)"},
		{"DECIMAL addition adds a digit", "+", DecimalOf(10, 2), DecimalOf(5, 4), "DECIMAL(13, 4)"},
		{"TIMESTAMP - INTERVAL is TIMESTAMP", "-", TimestampType, IntervalType, "TIMESTAMP(3)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Arithmetic(tt.op, tt.a, tt.b)
			if err != nil || got.String() != tt.want {
				t.Errorf("Arithmetic(%s, %s, %s) = %s, %v; want %s", tt.op, tt.a, tt.b, got, err, tt.want)
			}
		})
	}
}

func TestRoundingTypesFollowFlink(t *testing.T) {
	// The cases of Flink's LogicalTypeMergingTest.
	tests := []struct {
		p, s, d int32
		want    string
	}{
		{32, 8, 5, "DECIMAL(30, 5)"},
		{32, 8, 10, "DECIMAL(32, 8)"},
		{30, 20, 18, "DECIMAL(29, 18)"},
		{10, 10, 2, "DECIMAL(3, 2)"},
		{10, 2, -1, "DECIMAL(9, 0)"},
	}
	for _, tt := range tests {
		if got := RoundDecimal(DecimalOf(tt.p, tt.s), tt.d).String(); got != tt.want {
			t.Errorf("ROUND(DECIMAL(%d, %d), %d) is %s, want %s", tt.p, tt.s, tt.d, got, tt.want)
		}
	}
	if got := FloorCeilDecimal(DecimalOf(10, 2)).String(); got != "DECIMAL(10, 0)" {
		t.Errorf("FLOOR(DECIMAL(10, 2)) is %s, want DECIMAL(10, 0)", got)
	}
}

func TestCommonTypesWidenNumbers(t *testing.T) {
	tests := []struct {
		a, b Type
		want string
		ok   bool
	}{
		{IntType, BigIntType, "BIGINT", true},
		{DecimalOf(3, 3), BigIntType, "DECIMAL(22, 3)", true},
		{NullType, VarcharType, "VARCHAR", true},
		{VarcharType, BigIntType, "", false},
	}
	for _, tt := range tests {
		got, ok := Common(tt.a, tt.b)
		if ok != tt.ok || ok && got.String() != tt.want {
			t.Errorf("Common(%s, %s) = %s, %v; want %s, %v", tt.a, tt.b, got, ok, tt.want, tt.ok)
		}
	}
}

package types

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/weir-stream/weir/internal/sql/ast"
)

// ErrUnsupported is wrapped by the errors of types weir does not have
// (DATE, TIME, ARRAY, MAP, BINARY, ...).
var ErrUnsupported = fmt.Errorf("unsupported type")

// FromAST returns the type a DDL or CAST writes. Its errors name the
// type and its position.
func FromAST(d *ast.DataType) (Type, error) {
	t, err := fromAST(d)
	if err != nil {
		return Type{}, fmt.Errorf("%s: %w", d.Pos, err)
	}
	t.NotNull = d.NotNull
	return t, nil
}

func fromAST(d *ast.DataType) (Type, error) {
	param := func(i int, def int32) (int32, error) {
		if i >= len(d.Params) {
			return def, nil
		}
		n, err := strconv.ParseInt(d.Params[i], 10, 32)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("%s: bad parameter %q", d.Name, d.Params[i])
		}
		return int32(n), nil
	}
	switch strings.ToUpper(d.Name) {
	case "BOOLEAN", "BOOL":
		return BooleanType, nil
	case "TINYINT", "SMALLINT", "INT", "INTEGER":
		return IntType, nil
	case "BIGINT":
		return BigIntType, nil
	case "DOUBLE", "FLOAT", "REAL":
		return DoubleType, nil
	case "DECIMAL", "DEC", "NUMERIC":
		p, err := param(0, 10)
		if err != nil {
			return Type{}, err
		}
		s, err := param(1, 0)
		if err != nil {
			return Type{}, err
		}
		if p < 1 || p > MaxPrecision || s > p {
			return Type{}, fmt.Errorf("DECIMAL(%d, %d): precision must be 1 to %d and scale at most the precision", p, s, MaxPrecision)
		}
		return DecimalOf(p, s), nil
	case "VARCHAR", "STRING", "CHAR", "CHARACTER":
		return VarcharType, nil
	case "TIMESTAMP", "TIMESTAMP_LTZ":
		p, err := param(0, 6)
		if err != nil {
			return Type{}, err
		}
		if p > 3 {
			// Values are kept in milliseconds, so TIMESTAMP(6) (the SQL
			// default) holds milliseconds too.
			p = 3
		}
		return Type{Kind: Timestamp, Precision: p}, nil
	case "ROW":
		t := Type{Kind: Row}
		for _, f := range d.Fields {
			ft, err := FromAST(f.Type)
			if err != nil {
				return Type{}, err
			}
			t.Fields = append(t.Fields, Field{Name: f.Name.Name, Type: ft})
		}
		return t, nil
	}
	return Type{}, fmt.Errorf("%w: %s (weir has BOOLEAN, INT, BIGINT, DOUBLE, DECIMAL, VARCHAR, TIMESTAMP(3) and ROW)", ErrUnsupported, d.Name)
}

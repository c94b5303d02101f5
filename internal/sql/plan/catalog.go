package plan

import (
	"fmt"
	"strings"

	"github.com/weir-stream/weir/internal/sql/ast"
	"github.com/weir-stream/weir/internal/sql/expr"
	"github.com/weir-stream/weir/internal/sql/types"
)

// ColumnKind tells a table's columns apart.
type ColumnKind int

// The column kinds.
const (
	Physical ColumnKind = iota + 1
	Computed
	Metadata
)

// TableColumn is a column of a catalog table. A ROW column of the DDL
// is flattened into one Physical column per leaf field, named by its
// path joined with dots ("person.id"), so every column holds a scalar.
type TableColumn struct {
	Name string
	Path []string
	T    types.Type
	Kind ColumnKind
	// Expr is a computed column's expression, bound over the table's
	// other columns (expr.Col indexes into Table.Columns).
	Expr expr.Expr
	// MetadataKey is a metadata column's key (FROM 'key', else its name).
	MetadataKey string
	Virtual     bool
}

// Table is a table of the catalog, as CREATE TABLE declares it.
type Table struct {
	Name    string
	Pos     ast.Pos
	Columns []TableColumn
	// RowTime is the index of the watermarked column, -1 if none; Delay
	// is how far the watermark trails it, in milliseconds.
	RowTime int
	Delay   int64
	// PrimaryKey indexes Columns.
	PrimaryKey []int
	Options    map[string]string
}

// Option returns the table's option key, and whether it is set.
func (t *Table) Option(key string) (string, bool) {
	v, ok := t.Options[key]
	return v, ok
}

// Updating reports whether reading the table gives a changelog rather
// than inserts: an upsert connector or a changelog format.
func (t *Table) Updating() bool {
	if t.Options["connector"] == "upsert-kafka" {
		return true
	}
	switch t.Options["format"] {
	case "debezium-json", "canal-json", "maxwell-json":
		return true
	}
	return false
}

// Catalog holds a script's tables, views and functions. Names match
// exactly first, then ignoring case when that is unambiguous.
type Catalog struct {
	tables map[string]*Table
	views  map[string]*View
	funcs  map[string]*expr.ScalarFunc
	// Classes maps a CREATE FUNCTION class name to a function
	// registered from Go.
	Classes map[string]*expr.ScalarFunc
	// Aggregates types aggregate calls: the result type of fn over an
	// argument of type in (in is the zero Type for COUNT(*)), or an
	// error; nil if fn is no aggregate it knows.
	Aggregates func(fn string, distinct bool, in types.Type) (types.Type, bool, error)
}

// View is a CREATE VIEW: its query, bound where it is used.
type View struct {
	Name    string
	Columns []string
	Query   *ast.Query
}

// NewCatalog returns an empty catalog.
func NewCatalog() *Catalog {
	return &Catalog{tables: map[string]*Table{}, views: map[string]*View{}, funcs: map[string]*expr.ScalarFunc{}, Classes: map[string]*expr.ScalarFunc{}}
}

func lookup[V any](m map[string]V, name string) (V, bool) {
	if v, ok := m[name]; ok {
		return v, true
	}
	var found V
	n := 0
	for k, v := range m {
		if strings.EqualFold(k, name) {
			found, n = v, n+1
		}
	}
	return found, n == 1
}

// Table returns the table name.
func (c *Catalog) Table(name string) (*Table, bool) { return lookup(c.tables, name) }

// AddFunction registers a scalar function under name.
func (c *Catalog) AddFunction(name string, f *expr.ScalarFunc) { c.funcs[strings.ToUpper(name)] = f }

// function returns the user-defined function name.
func (c *Catalog) function(name string) (*expr.ScalarFunc, bool) {
	f, ok := c.funcs[strings.ToUpper(name)]
	return f, ok
}

func (c *Catalog) exists(name string) bool {
	_, t := c.Table(name)
	_, v := lookup(c.views, name)
	return t || v
}

// CreateTable adds a table as the statement declares it.
func (c *Catalog) CreateTable(s *ast.CreateTable) error {
	name := s.Name[len(s.Name)-1].Name
	if c.exists(name) {
		if s.IfNotExists {
			return nil
		}
		return errorAt(s.Pos, "table or view %s already exists", name)
	}
	if s.As != nil {
		return errorAt(s.Pos, "CREATE TABLE ... AS is not supported: create the table, then INSERT INTO it")
	}
	t := &Table{Name: name, Pos: s.Pos, RowTime: -1, Options: map[string]string{}}
	for _, o := range s.Options {
		t.Options[o.Key] = o.Value
	}
	var computed []int
	for _, col := range s.Columns {
		switch col.Kind {
		case ast.Physical, ast.Metadata:
			ct, err := types.FromAST(col.Type)
			if err != nil {
				return fmt.Errorf("table %s, column %s: %w", name, col.Name.Name, err)
			}
			kind := Physical
			key := ""
			if col.Kind == ast.Metadata {
				kind, key = Metadata, col.Name.Name
				if col.MetadataKey != nil {
					key = *col.MetadataKey
				}
			}
			flatten(t, []string{col.Name.Name}, ct, kind, key, col.Virtual)
		case ast.Computed:
			t.Columns = append(t.Columns, TableColumn{Name: col.Name.Name, Kind: Computed})
			computed = append(computed, len(t.Columns)-1)
		}
		if col.PrimaryKey {
			t.PrimaryKey = append(t.PrimaryKey, len(t.Columns)-1)
		}
	}
	// Computed columns are bound over the table's other columns, in the
	// order written (one may use an earlier one).
	scope := tableScope(t, name)
	i := 0
	for _, col := range s.Columns {
		if col.Kind != ast.Computed {
			continue
		}
		b := &binder{cat: c, scope: scope}
		e, err := b.scalar(col.Expr)
		if err != nil {
			return fmt.Errorf("table %s, computed column %s: %w", name, col.Name.Name, err)
		}
		t.Columns[computed[i]].Expr = e
		t.Columns[computed[i]].T = e.Type()
		scope.cols[computed[i]].T = e.Type()
		i++
	}
	if s.PrimaryKey != nil {
		for _, k := range s.PrimaryKey.Columns {
			j := columnIndex(t, k.Name)
			if j < 0 {
				return errorAt(k.Pos, "table %s: primary key column %s does not exist", name, k.Name)
			}
			t.PrimaryKey = append(t.PrimaryKey, j)
		}
	}
	for _, w := range s.Watermarks {
		if err := setWatermark(c, t, w); err != nil {
			return err
		}
	}
	c.tables[name] = t
	return nil
}

func flatten(t *Table, path []string, ty types.Type, kind ColumnKind, key string, virtual bool) {
	if ty.Kind == types.Row {
		for _, f := range ty.Fields {
			ft := f.Type
			if !ty.NotNull {
				ft = ft.Nullable()
			}
			flatten(t, append(append([]string(nil), path...), f.Name), ft, kind, key, virtual)
		}
		return
	}
	t.Columns = append(t.Columns, TableColumn{Name: strings.Join(path, "."), Path: path, T: ty, Kind: kind, MetadataKey: key, Virtual: virtual})
}

func columnIndex(t *Table, name string) int {
	for i, c := range t.Columns {
		if c.Name == name {
			return i
		}
	}
	for i, c := range t.Columns {
		if strings.EqualFold(c.Name, name) {
			return i
		}
	}
	return -1
}

// setWatermark reads WATERMARK FOR col AS col [- INTERVAL ...]: the
// column becomes the rowtime attribute, the interval the watermark's
// delay. Other watermark expressions are refused by name.
func setWatermark(c *Catalog, t *Table, w ast.Watermark) error {
	if t.RowTime >= 0 {
		return errorAt(w.Pos, "table %s: only one WATERMARK is allowed", t.Name)
	}
	name := joinName(w.Column)
	col := columnIndex(t, name)
	if col < 0 {
		return errorAt(w.Pos, "table %s: watermark column %s does not exist", t.Name, name)
	}
	if t.Columns[col].T.Kind != types.Timestamp {
		return errorAt(w.Pos, "table %s: watermark column %s is %s, not a TIMESTAMP(3)", t.Name, name, t.Columns[col].T)
	}
	delay := int64(0)
	switch e := w.Expr.(type) {
	case *ast.Ref:
		if !strings.EqualFold(joinName(e.Name), name) {
			return errorAt(w.Pos, "table %s: the watermark must be %s or %s - INTERVAL ...", t.Name, name, name)
		}
	case *ast.Binary:
		ref, ok := e.L.(*ast.Ref)
		iv, ok2 := e.R.(*ast.Interval)
		if e.Op != "-" || !ok || !ok2 || !strings.EqualFold(joinName(ref.Name), name) {
			return errorAt(w.Pos, "table %s: the watermark must be %s or %s - INTERVAL ...; weir supports bounded out-of-orderness only", t.Name, name, name)
		}
		ms, err := intervalMillis(iv)
		if err != nil {
			return err
		}
		delay = ms
	default:
		return errorAt(w.Pos, "table %s: the watermark must be %s or %s - INTERVAL ...; weir supports bounded out-of-orderness only", t.Name, name, name)
	}
	t.RowTime, t.Delay = col, delay
	t.Columns[col].T.Time = types.RowTime
	return nil
}

// CreateView adds a view; its query is checked by binding it now.
func (c *Catalog) CreateView(s *ast.CreateView) error {
	name := s.Name[len(s.Name)-1].Name
	if c.exists(name) {
		if s.IfNotExists {
			return nil
		}
		return errorAt(s.Pos, "table or view %s already exists", name)
	}
	v := &View{Name: name, Query: s.Query}
	for _, col := range s.Columns {
		v.Columns = append(v.Columns, col.Name)
	}
	if _, err := (&binder{cat: c}).viewNode(v, name); err != nil {
		return err
	}
	c.views[name] = v
	return nil
}

// CreateFunction binds a name to a function registered from Go under
// its class name.
func (c *Catalog) CreateFunction(s *ast.CreateFunction) error {
	name := s.Name[len(s.Name)-1].Name
	if s.Language != "" && s.Language != "JAVA" && s.Language != "GO" {
		return errorAt(s.Pos, "function %s: language %s is not supported; functions are registered from Go", name, s.Language)
	}
	f, ok := c.Classes[s.Class]
	if !ok {
		return errorAt(s.Pos, "function %s: no function is registered from Go under the class name %q", name, s.Class)
	}
	if _, dup := c.function(name); dup && s.IfNotExists {
		return nil
	}
	c.AddFunction(name, f)
	return nil
}

func joinName(n ast.Name) string {
	parts := make([]string, len(n))
	for i, p := range n {
		parts[i] = p.Name
	}
	return strings.Join(parts, ".")
}

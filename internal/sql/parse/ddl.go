package parse

import (
	"github.com/weir-stream/weir/internal/sql/ast"
)

// createTable parses the rest of CREATE TABLE [IF NOT EXISTS] name
// [(elements)] [COMMENT '...'] [PARTITIONED BY (...)] [WITH (...)] [AS
// query].
func (p *parser) createTable(t token, temporary bool) (ast.Stmt, error) {
	s := &ast.CreateTable{Pos: t.pos, Temporary: temporary, IfNotExists: p.ifNotExists()}
	var err error
	if s.Name, err = p.name("a table name"); err != nil {
		return nil, err
	}
	if p.accept("(") {
		for {
			if err := p.tableElement(s); err != nil {
				return nil, err
			}
			if p.accept(")") {
				break
			}
			if !p.accept(",") {
				return nil, p.expected("',' or ')' after the definition in CREATE TABLE " + s.Name.String())
			}
		}
	}
	if p.accept("COMMENT") {
		c, err := p.stringLit("the table's comment in quotes")
		if err != nil {
			return nil, err
		}
		s.Comment = &c
	}
	if p.acceptSeq("PARTITIONED", "BY") {
		if s.PartitionBy, err = p.identList("a column name", "partition columns"); err != nil {
			return nil, err
		}
	}
	if p.peek().is("WITH") {
		p.next()
		if s.Options, err = p.options(); err != nil {
			return nil, err
		}
	}
	if p.peek().is("LIKE") {
		return nil, unsupported(p.peek(), "CREATE TABLE ... LIKE")
	}
	if p.accept("AS") {
		if s.As, err = p.query(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// options parses ('k' = 'v', ...) of a WITH clause.
func (p *parser) options() ([]ast.Option, error) {
	if _, err := p.expect("(", "after WITH"); err != nil {
		return nil, err
	}
	opts := []ast.Option{}
	if p.accept(")") {
		return opts, nil
	}
	for {
		o, err := p.option("in WITH")
		if err != nil {
			return nil, err
		}
		opts = append(opts, o)
		if p.accept(")") {
			return opts, nil
		}
		if !p.accept(",") {
			return nil, p.expected("',' or ')' after the option " + ast.QuoteString(o.Key))
		}
	}
}

// tableElement parses one column, watermark or primary key of CREATE
// TABLE into s.
func (p *parser) tableElement(s *ast.CreateTable) error {
	t := p.peek()
	switch {
	case t.is("WATERMARK") && p.peekAt(1).is("FOR"):
		p.next()
		p.next()
		col, err := p.name("the name of the watermark's time column")
		if err != nil {
			return err
		}
		if _, err := p.expect("AS", "before the watermark's expression"); err != nil {
			return err
		}
		e, err := p.expr()
		if err != nil {
			return err
		}
		s.Watermarks = append(s.Watermarks, ast.Watermark{Pos: t.pos, Column: col, Expr: e})
		return nil
	case t.is("CONSTRAINT"), t.is("PRIMARY") && p.peekAt(1).is("KEY"):
		if s.PrimaryKey != nil {
			return errorAt(t, "a table has one primary key; %s defines a second one", s.Name)
		}
		k := &ast.PrimaryKey{Pos: t.pos}
		if p.accept("CONSTRAINT") {
			id, err := p.ident("a constraint name")
			if err != nil {
				return err
			}
			k.Constraint = &id
		}
		if _, err := p.expect("PRIMARY", "after the constraint's name"); err != nil {
			return err
		}
		if _, err := p.expect("KEY", "after PRIMARY"); err != nil {
			return err
		}
		var err error
		if k.Columns, err = p.identList("a column name", "primary key's columns"); err != nil {
			return err
		}
		if err := p.notEnforced(); err != nil {
			return err
		}
		s.PrimaryKey = k
		return nil
	}
	c, err := p.column()
	if err != nil {
		return err
	}
	s.Columns = append(s.Columns, c)
	return nil
}

// notEnforced parses the NOT ENFORCED Flink requires after a primary key.
func (p *parser) notEnforced() error {
	if !p.acceptSeq("NOT", "ENFORCED") {
		return p.expected("NOT ENFORCED after the primary key (Flink does not enforce primary keys)")
	}
	return nil
}

// column parses a physical, computed or metadata column.
func (p *parser) column() (ast.Column, error) {
	name, err := p.ident("a column name, WATERMARK FOR or PRIMARY KEY")
	if err != nil {
		return ast.Column{}, err
	}
	c := ast.Column{Pos: name.Pos, Name: name, Kind: ast.Physical}
	if p.accept("AS") {
		c.Kind = ast.Computed
		if c.Expr, err = p.expr(); err != nil {
			return ast.Column{}, err
		}
	} else {
		if c.Type, err = p.dataType("a type for the column " + name.String()); err != nil {
			return ast.Column{}, err
		}
		if p.accept("METADATA") {
			c.Kind = ast.Metadata
			if p.accept("FROM") {
				k, err := p.stringLit("the metadata key in quotes")
				if err != nil {
					return ast.Column{}, err
				}
				c.MetadataKey = &k
			}
			c.Virtual = p.accept("VIRTUAL")
		}
	}
	if p.peek().is("PRIMARY") {
		p.next()
		if _, err := p.expect("KEY", "after PRIMARY"); err != nil {
			return ast.Column{}, err
		}
		if err := p.notEnforced(); err != nil {
			return ast.Column{}, err
		}
		c.PrimaryKey = true
	}
	if p.accept("COMMENT") {
		s, err := p.stringLit("the column's comment in quotes")
		if err != nil {
			return ast.Column{}, err
		}
		c.Comment = &s
	}
	return c, nil
}

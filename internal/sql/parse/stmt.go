package parse

import (
	"github.com/weir-stream/weir/internal/sql/ast"
)

// script parses statements separated by semicolons up to the end.
func (p *parser) script() ([]ast.Stmt, error) {
	var stmts []ast.Stmt
	for {
		for p.accept(";") {
		}
		if p.peek().kind == tokEOF {
			return stmts, nil
		}
		s, err := p.statement()
		if err != nil {
			return nil, err
		}
		stmts = append(stmts, s)
		if !p.accept(";") && p.peek().kind != tokEOF {
			return nil, p.expected("';' or the end of the input after the statement")
		}
	}
}

// unsupportedStatements are the first words of Flink statements weir
// does not support.
var unsupportedStatements = map[string]bool{
	"DROP": true, "ALTER": true, "USE": true, "SHOW": true, "DESCRIBE": true, "DESC": true,
	"LOAD": true, "UNLOAD": true, "BEGIN": true, "EXECUTE": true, "DELETE": true, "UPDATE": true,
	"TRUNCATE": true, "ANALYZE": true, "CALL": true, "ADD": true, "REMOVE": true,
}

// statement parses one statement.
func (p *parser) statement() (ast.Stmt, error) {
	t := p.peek()
	switch {
	case t.is("CREATE"):
		return p.create()
	case t.is("INSERT"):
		return p.insert()
	case t.is("SELECT"), t.is("WITH"), t.is("VALUES"), t.is("("):
		q, err := p.query()
		if err != nil {
			return nil, err
		}
		return &ast.QueryStmt{Pos: t.pos, Query: q}, nil
	case t.is("SET"):
		return p.set()
	case t.is("RESET"):
		p.next()
		s := &ast.Reset{Pos: t.pos}
		if p.peek().kind == tokString {
			k := p.next().text
			s.Key = &k
		}
		return s, nil
	case t.is("EXPLAIN"):
		return p.explain()
	case t.kind == tokWord && unsupportedStatements[t.upper]:
		what := t.upper
		if n := p.peekAt(1); n.kind == tokWord {
			what += " " + n.upper
		}
		return nil, unsupported(t, "the statement "+what)
	}
	return nil, p.expected("a statement (CREATE, INSERT, SELECT, WITH, VALUES, SET, RESET or EXPLAIN)")
}

// set parses SET ['key' = 'value'].
func (p *parser) set() (ast.Stmt, error) {
	t := p.next()
	s := &ast.Set{Pos: t.pos}
	if p.peek().kind == tokEOF || p.peek().is(";") {
		return s, nil
	}
	o, err := p.option("after SET")
	if err != nil {
		return nil, err
	}
	s.Option = &o
	return s, nil
}

// option parses 'key' = 'value'. Flink also takes an unquoted key in
// SET; the value must be a string.
func (p *parser) option(context string) (ast.Option, error) {
	t := p.peek()
	key, err := p.stringLit("a quoted option key " + context + " (as in 'key' = 'value')")
	if err != nil {
		return ast.Option{}, err
	}
	if _, err := p.expect("=", "after the option key "+ast.QuoteString(key)); err != nil {
		return ast.Option{}, err
	}
	value, err := p.stringLit("a quoted value for the option " + ast.QuoteString(key))
	if err != nil {
		return ast.Option{}, err
	}
	return ast.Option{Pos: t.pos, Key: key, Value: value}, nil
}

// explainDetails are the words EXPLAIN takes before its statement.
var explainDetails = map[string]bool{
	"ESTIMATED_COST": true, "CHANGELOG_MODE": true, "PLAN_ADVICE": true, "JSON_EXECUTION_PLAN": true,
}

// explain parses EXPLAIN [PLAN FOR | detail, ...] statement.
func (p *parser) explain() (ast.Stmt, error) {
	t := p.next()
	s := &ast.Explain{Pos: t.pos}
	if p.acceptSeq("PLAN", "FOR") {
		s.PlanFor = true
	} else {
		for p.peek().kind == tokWord && explainDetails[p.peek().upper] {
			s.Details = append(s.Details, p.next().upper)
			if !p.accept(",") {
				break
			}
		}
	}
	if p.peek().is("EXPLAIN") {
		return nil, p.expected("a statement to explain")
	}
	stmt, err := p.statement()
	if err != nil {
		return nil, err
	}
	s.Stmt = stmt
	return s, nil
}

// ifNotExists parses an optional IF NOT EXISTS.
func (p *parser) ifNotExists() bool { return p.acceptSeq("IF", "NOT", "EXISTS") }

// create parses CREATE [TEMPORARY [SYSTEM]] TABLE|VIEW|FUNCTION.
func (p *parser) create() (ast.Stmt, error) {
	t := p.next()
	temporary := p.accept("TEMPORARY")
	system := temporary && p.accept("SYSTEM")
	kw := p.peek()
	switch {
	case kw.is("TABLE") && !system:
		p.next()
		return p.createTable(t, temporary)
	case kw.is("VIEW") && !system:
		p.next()
		return p.createView(t, temporary)
	case kw.is("FUNCTION"):
		p.next()
		return p.createFunction(t, temporary, system)
	case kw.kind == tokWord && (kw.upper == "CATALOG" || kw.upper == "DATABASE" || kw.upper == "MODEL"):
		return nil, unsupported(kw, "CREATE "+kw.upper)
	}
	if system {
		return nil, p.expected("FUNCTION after CREATE TEMPORARY SYSTEM")
	}
	return nil, p.expected("TABLE, VIEW or FUNCTION after CREATE")
}

// createView parses the rest of CREATE VIEW name [(cols)] AS query.
func (p *parser) createView(t token, temporary bool) (ast.Stmt, error) {
	s := &ast.CreateView{Pos: t.pos, Temporary: temporary, IfNotExists: p.ifNotExists()}
	var err error
	if s.Name, err = p.name("a view name"); err != nil {
		return nil, err
	}
	if p.peek().is("(") {
		if s.Columns, err = p.identList("a column name", "view's column names"); err != nil {
			return nil, err
		}
	}
	if _, err := p.expect("AS", "before the view's query"); err != nil {
		return nil, err
	}
	if s.Query, err = p.query(); err != nil {
		return nil, err
	}
	return s, nil
}

// createFunction parses the rest of CREATE FUNCTION name AS 'class'
// [LANGUAGE JAVA|SCALA|PYTHON].
func (p *parser) createFunction(t token, temporary, system bool) (ast.Stmt, error) {
	s := &ast.CreateFunction{Pos: t.pos, Temporary: temporary, System: system, IfNotExists: p.ifNotExists()}
	var err error
	if s.Name, err = p.name("a function name"); err != nil {
		return nil, err
	}
	if _, err := p.expect("AS", "before the function's class name"); err != nil {
		return nil, err
	}
	if s.Class, err = p.stringLit("the function's class name in quotes"); err != nil {
		return nil, err
	}
	if p.accept("LANGUAGE") {
		l := p.peek()
		if l.kind != tokWord || l.upper != "JAVA" && l.upper != "SCALA" && l.upper != "PYTHON" {
			return nil, p.expected("JAVA, SCALA or PYTHON after LANGUAGE")
		}
		s.Language = p.next().upper
	}
	if p.peek().is("USING") {
		return nil, unsupported(p.peek(), "CREATE FUNCTION ... USING JAR")
	}
	return s, nil
}

// insert parses INSERT INTO|OVERWRITE name [(cols)] query.
func (p *parser) insert() (ast.Stmt, error) {
	t := p.next()
	s := &ast.Insert{Pos: t.pos}
	switch {
	case p.accept("INTO"):
	case p.accept("OVERWRITE"):
		s.Overwrite = true
	default:
		return nil, p.expected("INTO or OVERWRITE after INSERT")
	}
	var err error
	if s.Table, err = p.name("a table name"); err != nil {
		return nil, err
	}
	if p.peek().is("PARTITION") {
		return nil, unsupported(p.peek(), "INSERT with a static PARTITION")
	}
	if p.peek().is("(") && !p.peekAt(1).is("SELECT") && !p.peekAt(1).is("WITH") && !p.peekAt(1).is("VALUES") && !p.peekAt(1).is("(") {
		if s.Columns, err = p.identList("a column name", "column names of the INSERT"); err != nil {
			return nil, err
		}
	}
	if s.Query, err = p.query(); err != nil {
		return nil, err
	}
	return s, nil
}

package tables

import (
	"math/big"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/nats"
	"github.com/weir-stream/weir/connectors/postgres"
	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/internal/sql/types"
)

var postgresSpec = &spec{
	Connector: Connector{
		Name: "postgres",
		Doc: "A PostgreSQL table (connectors/postgres, sink only): appended exactly-once by two-phase commit, " +
			"or, for a query that updates its result, upserted by the primary key.",
		Sink: true,
		Options: []Option{
			{Name: "url", Required: true, Doc: "the connection: postgres://user:pass@host:5432/db, key=value pairs as libpq takes them, or a jdbc:postgresql:// URL"},
			{Name: "table-name", Required: true, Doc: "the PostgreSQL table, name or schema.name; it must exist, with a column of each of the table's names"},
			{Name: "username", Doc: "the user, if the URL has none"},
			{Name: "password", Doc: "the password, if the URL has none"},
			{Name: "sink.buffer-flush.max-rows", Default: "10000", Doc: "rows buffered before they are copied to the server"},
		},
	},
	sink: postgresSink,
}

// postgresSink appends rows (exactly-once with checkpoints, by prepared
// transactions) or, when updating, upserts them by the table's primary
// key (idempotent) and drops -U rows, as the +U that follows replaces
// them. It cannot apply a delete: a -D row fails the job.
func postgresSink(t Table, o options, updating bool) (connector.Sink[row.Row], error) {
	stored := t.stored()
	var names []string
	var conv []func(row.Value) any
	for _, i := range stored {
		c := t.Columns[i]
		if c.Metadata != "" || len(c.Path) > 1 {
			return nil, t.columnErr(c, "the postgres connector writes only top-level physical columns")
		}
		names = append(names, c.Path[0])
		conv = append(conv, pgValue(c.Type))
	}
	batch, err := o.int("sink.buffer-flush.max-rows", 1, 1<<24)
	if err != nil {
		return nil, err
	}
	opts := postgres.Options[row.Row]{URL: pgURL(o), Table: o.get("table-name"), Columns: names, BatchRows: int(batch),
		Row: func(r row.Row) []any {
			out := make([]any, len(conv))
			for k, f := range conv {
				if !r.V[k].IsNull() {
					out[k] = f(r.V[k])
				}
			}
			return out
		}}
	if updating {
		if len(t.PrimaryKey) == 0 {
			return nil, t.errf(ErrOption, "a query that updates its result writes to PostgreSQL by upsert, which needs the table's PRIMARY KEY")
		}
		opts.Mode = postgres.Upsert
		for _, i := range t.PrimaryKey {
			opts.Key = append(opts.Key, t.Columns[i].Path[0])
		}
	}
	sink, err := postgres.New(opts)
	if err != nil {
		return nil, t.errf(ErrOption, "%v", err)
	}
	if !updating {
		return sink, nil
	}
	refuse := connector.ConfigError(t.errf(ErrUnsupported, "the postgres connector cannot apply deletes (-D rows) yet"))
	return mapSink(connector.Sink[row.Row](sink), dropUpdateBefore(refuse)), nil
}

// pgURL returns the connection string: a jdbc:postgresql:// URL turned
// into a postgres:// one, with username and password added.
func pgURL(o options) string {
	u := strings.TrimPrefix(o.get("url"), "jdbc:")
	if !strings.HasPrefix(u, "postgres") {
		return u
	}
	if user := o.get("username"); user != "" && !strings.Contains(u, "@") {
		cred := user
		if pw := o.get("password"); pw != "" {
			cred += ":" + pw
		}
		scheme, rest, _ := strings.Cut(u, "://")
		u = scheme + "://" + cred + "@" + rest
	}
	return u
}

// pgValue returns how a non-NULL value of type t goes to pgx.
func pgValue(t types.Type) func(row.Value) any {
	switch t.Kind {
	case types.Boolean:
		return func(v row.Value) any { return v.Bool() }
	case types.Int:
		return func(v row.Value) any { return int32(v.I) }
	case types.Double:
		return func(v row.Value) any { return v.Float() }
	case types.Decimal:
		return func(v row.Value) any {
			return pgtype.Numeric{Int: big.NewInt(v.I), Exp: -t.Scale, Valid: true}
		}
	case types.Varchar:
		return func(v row.Value) any { return v.S }
	case types.Timestamp:
		return func(v row.Value) any { return time.UnixMilli(v.I).UTC() }
	case types.Interval:
		return func(v row.Value) any { return time.Duration(v.I) * time.Millisecond }
	}
	return func(v row.Value) any { return v.I }
}

var natsSpec = &spec{
	Connector: Connector{
		Name: "nats",
		Doc:  "A NATS JetStream subject (connectors/nats, sink only): JSON messages, published exactly-once with checkpoints.",
		Sink: true,
		Options: []Option{
			{Name: "url", Required: true, Doc: "the server, nats://host:4222 (several separated by commas)"},
			{Name: "subject", Required: true, Doc: "the subject; a stream must capture it"},
			{Name: "format", Required: true, Doc: "json or avro"},
		},
	},
	sink: func(t Table, o options, updating bool) (connector.Sink[row.Row], error) {
		if err := checkFormat(t, o, "format", "json", "avro"); err != nil {
			return nil, err
		}
		var cols []Column
		for _, i := range t.stored() {
			c := t.Columns[i]
			if c.Metadata != "" {
				return nil, t.columnErr(c, "metadata %q cannot be written; declare the column VIRTUAL", c.Metadata)
			}
			cols = append(cols, c)
		}
		f, err := newRowFormat(t, cols, nil, o.get("format") == "avro", updating)
		if err != nil {
			return nil, err
		}
		s, err := nats.NewSink(nats.SinkOptions[row.Row]{ConnOptions: nats.ConnOptions{URL: o.get("url")},
			Subject: o.get("subject"), Format: f})
		if err != nil {
			return nil, t.errf(ErrOption, "%v", err)
		}
		return s, nil
	},
}

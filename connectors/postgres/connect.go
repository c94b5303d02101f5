package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// connect opens a connection, retrying with exponential backoff (100ms
// doubling to 5s) while the server cannot be reached, for at most
// Options.ConnectTimeout. An error the server itself returns (bad
// password, no such database) is not retried.
func (s *Sink[T]) connect(ctx context.Context) (*pgx.Conn, error) {
	deadline := time.Now().Add(s.opts.ConnectTimeout)
	wait := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		conn, err := pgx.ConnectConfig(ctx, s.cfg.Copy())
		if err == nil {
			return conn, nil
		}
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) || ctx.Err() != nil {
			return nil, fmt.Errorf("postgres: connecting to database %s at %s:%d: %w", s.cfg.Database, s.cfg.Host, s.cfg.Port, err)
		}
		if time.Now().Add(wait).After(deadline) {
			return nil, fmt.Errorf("postgres: cannot reach database %s at %s:%d after %d attempts over %v: %w",
				s.cfg.Database, s.cfg.Host, s.cfg.Port, attempt, s.opts.ConnectTimeout, err)
		}
		if s.opts.OnRetry != nil {
			s.opts.OnRetry(attempt, err, wait)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("postgres: connecting to database %s at %s:%d: %w", s.cfg.Database, s.cfg.Host, s.cfg.Port, ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, 5*time.Second)
	}
}

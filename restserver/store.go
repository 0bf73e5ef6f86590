package restserver

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/XSAM/otelsql"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	_ "modernc.org/sqlite" // pure-Go SQLite driver, registered as "sqlite"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// store is the SQLite database, and the one place that holds SQL: every
// statement of the service is in a store method or a store function of the
// store*.go files, and handlers call those. Store functions that take a
// querier run inside the caller's transaction; store methods run their own.
//
// Writes go through one connection (write, MaxOpenConns 1) and every write
// transaction starts with BEGIN IMMEDIATE, so write transactions are
// serialized and a read-check-insert (booking capacity, credit-note
// remaining amounts) inside one is atomic. Reads use the read pool; for
// ":memory:" both are the same single connection.
type store struct {
	write *sql.DB
	read  *sql.DB
}

// querier is what both *sql.DB and *sql.Tx offer.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// openStore opens (creating if needed) the database at path, enables WAL,
// foreign keys and a busy timeout, and applies the embedded migrations that
// are not applied yet. path ":memory:" opens a private in-memory database.
// With a tracer provider, each statement run for a traced request is a span
// (sqlOpen).
func openStore(ctx context.Context, path string, tp trace.TracerProvider) (*store, error) {
	open := func(dsn string) (*sql.DB, error) { return sqlOpen(dsn, tp) }
	pragmas := "_pragma=foreign_keys(1)&_pragma=busy_timeout(10000)&_txlock=immediate"
	if path == ":memory:" {
		db, err := open("file::memory:?" + pragmas)
		if err != nil {
			return nil, err
		}
		db.SetMaxOpenConns(1)
		db.SetMaxIdleConns(1)
		db.SetConnMaxLifetime(0)
		db.SetConnMaxIdleTime(0)
		s := &store{write: db, read: db}
		if err := s.migrate(ctx); err != nil {
			db.Close()
			return nil, err
		}
		return s, nil
	}
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + pragmas + "&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"
	w, err := open(dsn)
	if err != nil {
		return nil, err
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxIdleTime(0)
	w.SetConnMaxLifetime(0)
	if err := w.PingContext(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	r, err := open(dsn + "&_pragma=query_only(1)")
	if err != nil {
		w.Close()
		return nil, err
	}
	r.SetMaxOpenConns(8)
	r.SetMaxIdleConns(8)
	s := &store{write: w, read: r}
	if err := s.migrate(ctx); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// sqlOpen opens the SQLite database dsn; with tp, through otelsql: a span
// per statement (and transaction) run with a context that carries a valid
// span, named by its method ("sql.conn.query"), with db.system.name sqlite
// and the statement text; nothing for statements outside a traced request
// (migrations, demo data, token renewal).
func sqlOpen(dsn string, tp trace.TracerProvider) (*sql.DB, error) {
	if tp == nil {
		return sql.Open("sqlite", dsn)
	}
	return otelsql.Open("sqlite", dsn, otelsql.WithTracerProvider(tp),
		otelsql.WithAttributes(attribute.String("db.system.name", "sqlite")),
		otelsql.WithSpanOptions(otelsql.SpanOptions{
			OmitConnResetSession: true, OmitRows: true, OmitConnPrepare: true,
			SpanFilter: func(ctx context.Context, _ otelsql.Method, _ string, _ []driver.NamedValue) bool {
				return trace.SpanContextFromContext(ctx).IsValid()
			},
		}))
}

func (s *store) close() error {
	err := s.write.Close()
	if s.read != s.write {
		err = errors.Join(err, s.read.Close())
	}
	return err
}

// migrate applies migrations/NNN_*.sql in name order, each in its own
// transaction, recording applied versions in schema_version.
func (s *store) migrate(ctx context.Context) error {
	if _, err := s.write.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL)`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	for _, name := range names {
		base := strings.TrimPrefix(name, "migrations/")
		num, _, ok := strings.Cut(base, "_")
		version, err := strconv.Atoi(num)
		if !ok || err != nil {
			return fmt.Errorf("migrate: bad migration name %q", base)
		}
		var n int
		if err := s.write.QueryRowContext(ctx, `SELECT count(*) FROM schema_version WHERE version = ?`, version).Scan(&n); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		if n > 0 {
			continue
		}
		body, err := migrationFiles.ReadFile(name)
		if err != nil {
			return err
		}
		err = s.tx(ctx, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, string(body)); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version, name) VALUES (?, ?)`, version, base)
			return err
		})
		if err != nil {
			return fmt.Errorf("migrate %s: %w", base, err)
		}
	}
	return nil
}

// tx runs fn in a write transaction (BEGIN IMMEDIATE), committing when fn
// returns nil and rolling back otherwise.
func (s *store) tx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// ping checks that the database answers.
func (s *store) ping(ctx context.Context) error { return s.read.PingContext(ctx) }

// setting returns the value stored under key, creating it with gen() when
// it is absent.
func (s *store) setting(ctx context.Context, key string, gen func() []byte) ([]byte, error) {
	var v []byte
	err := s.tx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(&v)
		if errors.Is(err, sql.ErrNoRows) {
			v = gen()
			_, err = tx.ExecContext(ctx, `INSERT INTO settings (key, value) VALUES (?, ?)`, key, v)
		}
		return err
	})
	return v, err
}

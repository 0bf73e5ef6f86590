package restserver

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"time"
)

// Every API object is stored as a record: a row of its table with id,
// network_id, create_date, the JSON document (doc) and the indexed columns
// its lists filter on. The functions below are the generic record
// statements; the store_<area>.go files build on them.

// record is one row of a record table: the indexed columns besides id,
// network_id, create_date and doc are in cols.
type record struct {
	table      string
	id         string
	network    string
	createDate time.Time
	cols       map[string]any
	doc        any
}

// insert writes rec; doc is encoded as JSON.
func insert(ctx context.Context, q querier, rec record) error {
	doc, err := json.Marshal(rec.doc)
	if err != nil {
		return err
	}
	names := []string{"id", "network_id", "create_date", "doc"}
	args := []any{rec.id, rec.network, micros(rec.createDate), string(doc)}
	keys := make([]string, 0, len(rec.cols))
	for k := range rec.cols {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		names = append(names, k)
		args = append(args, rec.cols[k])
	}
	ph := strings.TrimSuffix(strings.Repeat("?,", len(names)), ",")
	_, err = q.ExecContext(ctx, "INSERT INTO "+rec.table+" ("+strings.Join(names, ",")+") VALUES ("+ph+")", args...)
	return err
}

// updateDoc replaces the doc of the record id in network.
func updateDoc(ctx context.Context, q querier, table, network, id string, doc any) error {
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	res, err := q.ExecContext(ctx, "UPDATE "+table+" SET doc = ? WHERE network_id = ? AND id = ?", string(b), network, id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return errNotFound
	}
	return nil
}

// errNotFound is returned by the storage helpers when no row matches.
var errNotFound = errors.New("not found")

// getDoc decodes the doc of record id in network into v; errNotFound when
// there is none (a record of another network is not found either).
func getDoc(ctx context.Context, q querier, table, network, id string, v any) error {
	var doc string
	err := q.QueryRowContext(ctx, "SELECT doc FROM "+table+" WHERE network_id = ? AND id = ?", network, id).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return errNotFound
	}
	if err != nil {
		return err
	}
	return json.Unmarshal([]byte(doc), v)
}

// exists reports whether record id is in network.
func exists(ctx context.Context, q querier, table, network, id string) (bool, error) {
	var n int
	err := q.QueryRowContext(ctx, "SELECT count(*) FROM "+table+" WHERE network_id = ? AND id = ?", network, id).Scan(&n)
	return n > 0, err
}

// mustExist is exists as an error: errNotFound when record id is not in
// network.
func mustExist(ctx context.Context, q querier, table, network, id string) error {
	ok, err := exists(ctx, q, table, network, id)
	if err == nil && !ok {
		err = errNotFound
	}
	return err
}

// docs runs a query whose one column is a doc and returns the docs in the
// query's order (an empty, non-nil list when there is none).
func docs(ctx context.Context, q querier, query string, args ...any) ([]json.RawMessage, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []json.RawMessage{}
	for rows.Next() {
		var doc string
		if err := rows.Scan(&doc); err != nil {
			return nil, err
		}
		out = append(out, json.RawMessage(doc))
	}
	return out, rows.Err()
}

// pageRequest is the window of a paged list: at most limit items after the cursor
// (nil: from the start).
type pageRequest struct {
	limit int
	after *cursor
}

// dateRange bounds create_date, both ends inclusive, in Unix microseconds
// (nil: unbounded).
type dateRange struct {
	gte, lte *int64
}

// listSpec describes one paged list query over a record table.
type listSpec struct {
	table   string
	network string
	where   []string // extra conditions, each with its args in args
	args    []any
	page    pageRequest
}

// filter adds the condition column = v when v is not empty.
func (ls *listSpec) filter(column, v string) {
	if v != "" {
		ls.where, ls.args = append(ls.where, column+" = ?"), append(ls.args, v)
	}
}

// created adds the bounds of r on create_date.
func (ls *listSpec) created(r dateRange) {
	if r.gte != nil {
		ls.where, ls.args = append(ls.where, "create_date >= ?"), append(ls.args, *r.gte)
	}
	if r.lte != nil {
		ls.where, ls.args = append(ls.where, "create_date <= ?"), append(ls.args, *r.lte)
	}
}

// listPage returns up to limit docs of the list in (create_date DESC, rowid
// DESC) order after the cursor, and the cursor of the last one when more
// follow (nil on the last page).
func listPage(ctx context.Context, q querier, ls listSpec) ([]json.RawMessage, *cursor, error) {
	where := append([]string{"network_id = ?"}, ls.where...)
	args := append([]any{ls.network}, ls.args...)
	if ls.page.after != nil {
		// The cursor names its item by (create_date, id); the tie-break
		// among equal create_dates is that item's rowid, looked up here
		// and never given out.
		where = append(where, "(create_date < ? OR (create_date = ? AND rowid < (SELECT rowid FROM "+ls.table+" WHERE network_id = ? AND id = ?)))")
		args = append(args, ls.page.after.createDate, ls.page.after.createDate, ls.network, ls.page.after.id)
	}
	args = append(args, ls.page.limit+1)
	rows, err := q.QueryContext(ctx, "SELECT doc, create_date, id FROM "+ls.table+" WHERE "+strings.Join(where, " AND ")+
		" ORDER BY create_date DESC, rowid DESC LIMIT ?", args...)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var (
		docs []json.RawMessage
		last cursor
		more bool
	)
	for rows.Next() {
		if len(docs) == ls.page.limit {
			more = true
			break
		}
		var doc string
		if err := rows.Scan(&doc, &last.createDate, &last.id); err != nil {
			return nil, nil, err
		}
		docs = append(docs, json.RawMessage(doc))
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	if !more {
		return nonNil(docs), nil, nil
	}
	return docs, &last, nil
}

// nonNil makes an empty list encode as [] rather than null.
func nonNil(docs []json.RawMessage) []json.RawMessage {
	if docs == nil {
		return []json.RawMessage{}
	}
	return docs
}

func micros(t time.Time) int64 { return t.UnixMicro() }

// newID returns a random version-4 uuid, the id of a new record.
func newID() string {
	var b [16]byte
	rand.Read(b[:])
	return formatUUID(b)
}

func formatUUID(b [16]byte) string {
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

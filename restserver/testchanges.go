package restserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Test changes (Config.TestEndpoints only)
//
// The real system changes orders, transactions, visits and comments outside
// the API (payments settle, visitors check in at the desk). These endpoints
// make such changes, so that what polls the API sees them:
//
//	POST /_test/{table}/{id}/set   body: the document fields to set, e.g.
//	                               {"status": "completed"} or
//	                               {"checkInDate": "2026-01-02T10:00:00Z"};
//	                               answers 200 {"id"}
//	POST /_test/{table}/{id}/copy  a new record like {id}, created now,
//	                               with the body's fields set; answers 201
//	                               {"id"} (a new order, payment, comment,
//	                               redemption)
//
// {table} is one of changeTables. Setting "status" also sets the record's
// status column (the lists' filter); a set touches updateDate when the
// document has one.

// changeTables are the tables the test changes may touch.
var changeTables = []string{"orders", "transactions", "visits", "comments", "redemptions", "resources", "events", "products", "credit_notes"}

func (s *Server) testChanges(mux *http.ServeMux) {
	mux.HandleFunc("POST /_test/{table}/{id}/{change}", func(w http.ResponseWriter, r *http.Request) {
		table, id, change := r.PathValue("table"), r.PathValue("id"), r.PathValue("change")
		if !slices.Contains(changeTables, table) || (change != "set" && change != "copy") {
			writeError(w, r, s.log, notFoundf("no test change %s of %s", change, table))
			return
		}
		var fields map[string]any
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<16))
		if err == nil && len(body) > 0 {
			err = json.Unmarshal(body, &fields)
		}
		if err != nil {
			writeError(w, r, s.log, invalidf("the body must be a JSON object of document fields"))
			return
		}
		newID, err := s.db.change(r.Context(), table, id, change == "copy", fields, s.now().UTC())
		switch {
		case errors.Is(err, errNotFound):
			writeError(w, r, s.log, notFoundf("no %s record %s", table, id))
		case err != nil:
			writeError(w, r, s.log, err)
		case change == "copy":
			writeJSON(w, http.StatusCreated, map[string]string{"id": newID})
		default:
			writeJSON(w, http.StatusOK, map[string]string{"id": id})
		}
	})
}

// change sets fields in the document of table's record id, or, with copy,
// inserts a copy of it created at now with fields set, and returns the id
// of the record changed or made.
func (st *store) change(ctx context.Context, table, id string, copy bool, fields map[string]any, now time.Time) (string, error) {
	tx, err := st.write.BeginTx(ctx, nil)
	if err != nil {
		return "", err
	}
	defer func() { _ = tx.Rollback() }()
	rows, err := tx.QueryContext(ctx, "SELECT * FROM "+table+" WHERE id = ?", id)
	if err != nil {
		return "", err
	}
	cols, _ := rows.Columns()
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	found := rows.Next()
	if found {
		err = rows.Scan(ptrs...)
	}
	rows.Close()
	if err != nil {
		return "", err
	}
	if !found {
		return "", errNotFound
	}
	col := func(name string) int { return slices.Index(cols, name) }
	var doc map[string]any
	switch d := vals[col("doc")].(type) {
	case string:
		err = json.Unmarshal([]byte(d), &doc)
	case []byte:
		err = json.Unmarshal(d, &doc)
	}
	if err != nil {
		return "", err
	}
	stamp := now.Format(time.RFC3339Nano)
	if copy {
		id = newID()
		if _, ok := doc["id"]; ok {
			doc["id"] = id
		}
		doc["createDate"] = stamp
		vals[col("id")] = id
		vals[col("create_date")] = micros(now)
	}
	if _, ok := doc["updateDate"]; ok {
		doc["updateDate"] = stamp
	}
	for k, v := range fields {
		doc[k] = v
		if i := col(k); i >= 0 && k != "id" && k != "doc" {
			vals[i] = v
		}
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return "", err
	}
	vals[col("doc")] = string(b)
	if copy {
		ph := strings.TrimSuffix(strings.Repeat("?,", len(cols)), ",")
		_, err = tx.ExecContext(ctx, "INSERT INTO "+table+" ("+strings.Join(cols, ",")+") VALUES ("+ph+")", vals...)
	} else {
		set, args := "doc = ?", []any{vals[col("doc")]}
		if i := col("status"); i >= 0 {
			set += ", status = ?"
			args = append(args, vals[i])
		}
		_, err = tx.ExecContext(ctx, "UPDATE "+table+" SET "+set+" WHERE id = ?", append(args, id)...)
	}
	if err != nil {
		return "", err
	}
	return id, tx.Commit()
}

package restserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/workspacenet/facade/restserver/wire"
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
// {table} is one of changeTypes. Setting "status" also sets the record's
// status column (the lists' filter); a set touches updateDate when the
// document has one.
//
// A change holds to what the API serves today, as the real system's do:
// each field is a field of the table's wire type, of its JSON type (a
// timestamp RFC 3339), `id` is not changed, and an enumerated field takes
// one of the values the spec lists (changeValues). Anything else is a 400
// {message, type} naming the field, and changes nothing. A value or a field
// of the API's future (a status it may add) is put in an answer by the
// hooks' rewrite fault instead, never stored.

// changeTypes are the tables the test changes may touch, with the wire type
// of their documents.
var changeTypes = map[string]reflect.Type{
	"orders":       reflect.TypeFor[wire.Order](),
	"transactions": reflect.TypeFor[wire.Transaction](),
	"visits":       reflect.TypeFor[wire.Visit](),
	"comments":     reflect.TypeFor[wire.Comment](),
	"redemptions":  reflect.TypeFor[wire.Redemption](),
	"resources":    reflect.TypeFor[wire.Resource](),
	"events":       reflect.TypeFor[wire.Event](),
	"products":     reflect.TypeFor[wire.Product](),
	"credit_notes": reflect.TypeFor[wire.CreditNote](),
}

// refundThresholds are the values of a resource's or event's
// refundThreshold (upstream-facts.md, "Value lists").
var refundThresholds = []string{"noRefund", "zeroMinutes", "fifteenMinutes", "thirtyMinutes", "oneHour", "twoHours",
	"fourHours", "sixHours", "twelveHours", "oneDay", "twoDays", "oneWeek", "twoWeeks", "fourWeeks"}

// changeValues are, by table, the values an enumerated field of a change may
// take (a dotted path for a nested field): the spec's closed enumerations
// (States and transitions) and the public reference's lists of
// upstream-facts.md.
var changeValues = map[string]map[string][]string{
	"orders":       {"status": orderStatuses},
	"transactions": {"status": transactionStatuses, "type": transactionTypes},
	"resources": {"type": resTypes, "visibility": visibility, "bookingPermission": visibility, "preparationMinutes": prepMins,
		"refundThreshold": refundThresholds, "autoRelease.interval": {"fiveMinutes", "tenMinutes", "fifteenMinutes"},
		"checkIn.interval": {"zeroMinutes", "fiveMinutes", "tenMinutes", "fifteenMinutes"}},
	"events": {"visibilityType": {"public", "admins", "networkMembers", "members"}, "applicationType": {"purchase", "none"},
		"refundThreshold": refundThresholds},
	"products":     {"visibility": {"public", "admins", "members", "networkMembers"}, "refundPolicy": {"noRefund", "statusNew"}},
	"credit_notes": {"reason": creditNoteReasons, "status": {"issued", "voided"}, "type": {"prePayment", "postPayment", "mixed"}},
}

// checkChange returns the 400 of a change of table whose body (the JSON
// object fields) the API could not serve today, nil for one it could.
func checkChange(table string, body []byte, fields map[string]any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil // a copy as it is
	}
	if _, ok := fields["id"]; ok {
		return invalidf("%s.id: cannot be changed", table)
	}
	dst := reflect.New(changeTypes[table]).Interface()
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return fieldError(table, body, dst, err)
	}
	values := changeValues[table]
	for _, path := range slices.Sorted(maps.Keys(values)) {
		var v any = fields
		for key := range strings.SplitSeq(path, ".") {
			m, _ := v.(map[string]any)
			v = m[key]
		}
		if s, ok := v.(string); v != nil && (!ok || !slices.Contains(values[path], s)) {
			return invalidf("%s.%s: must be one of %s", table, path, strings.Join(values[path], ", "))
		}
	}
	return nil
}

func (s *Server) testChanges(mux *http.ServeMux) {
	mux.HandleFunc("POST /_test/{table}/{id}/{change}", func(w http.ResponseWriter, r *http.Request) {
		table, id, change := r.PathValue("table"), r.PathValue("id"), r.PathValue("change")
		if changeTypes[table] == nil || (change != "set" && change != "copy") {
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
		if err := checkChange(table, body, fields); err != nil {
			writeError(w, r, s.log, err)
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

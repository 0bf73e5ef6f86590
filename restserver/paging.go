package restserver

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/workspacenet/facade/internal/ids"
)

// Page sizes.
const (
	defaultLimit = 25
	maxLimit     = 100
)

// limitParam reads the "limit" query parameter. With coerce (credit notes,
// orders) a missing or invalid value is 25 and a value above 100 is 100;
// without (transactions, redemptions) anything but an integer 1..100 is a
// 400. A missing limit is 25 in both cases.
func limitParam(q url.Values, coerce bool) (int, error) {
	v := q.Get("limit")
	if v == "" {
		return defaultLimit, nil
	}
	n, err := strconv.Atoi(v)
	switch {
	case coerce && (err != nil || n < 1):
		return defaultLimit, nil
	case coerce && n > maxLimit:
		return maxLimit, nil
	case err != nil || n < 1 || n > maxLimit:
		return 0, invalidf("limit: must be an integer from 1 to 100")
	}
	return n, nil
}

// cursor is the position after the last item of a page, in the list order
// (create_date DESC, rowid DESC).
type cursor struct {
	createDate int64
	rowid      int64
}

// pageToken is the signed payload of a nextPageToken. It binds the route,
// the network and the filters, so a token is only valid for the list it
// came from.
type pageToken struct {
	Route   string `json:"r"`
	Network string `json:"n"`
	Filters string `json:"f"`
	Date    int64  `json:"d"`
	Rowid   int64  `json:"i"`
}

// canonicalFilters renders filters (empty values dropped) in a stable form.
func canonicalFilters(filters map[string]string) string {
	v := url.Values{}
	for k, f := range filters {
		if f != "" {
			v.Set(k, f)
		}
	}
	return v.Encode()
}

// encodePageToken signs the position c of a list: base64url(JSON payload) "."
// base64url(HMAC-SHA256(payload)) with the database's paging secret.
func (s *Server) encodePageToken(route, network string, filters map[string]string, c cursor) string {
	p, _ := json.Marshal(pageToken{Route: route, Network: network, Filters: canonicalFilters(filters), Date: c.createDate, Rowid: c.rowid})
	body := base64.RawURLEncoding.EncodeToString(p)
	m := hmac.New(sha256.New, s.pageKey)
	m.Write([]byte(body))
	return body + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// decodePageToken verifies a nextPageToken for this route, network and
// filters. Any modified, foreign or malformed token is a 400.
func (s *Server) decodePageToken(tok, route, network string, filters map[string]string) (*cursor, error) {
	if tok == "" {
		return nil, nil
	}
	bad := invalidf("nextPageToken: invalid page token")
	body, sig, ok := strings.Cut(tok, ".")
	if !ok {
		return nil, bad
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil {
		return nil, bad
	}
	m := hmac.New(sha256.New, s.pageKey)
	m.Write([]byte(body))
	if !hmac.Equal(got, m.Sum(nil)) {
		return nil, bad
	}
	raw, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil {
		return nil, bad
	}
	var p pageToken
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, bad
	}
	if p.Route != route || p.Network != network {
		return nil, bad
	}
	if p.Filters != canonicalFilters(filters) {
		return nil, invalidf("nextPageToken: the page token was issued for other filters; repeat the same filters")
	}
	return &cursor{createDate: p.Date, rowid: p.Rowid}, nil
}

// listSpec describes one paged list query over a record table.
type listSpec struct {
	table   string
	network string
	where   []string // extra conditions, each with its args in args
	args    []any
	limit   int
	after   *cursor
}

// listPage returns up to limit docs of the list in (create_date DESC, rowid
// DESC) order after the cursor, and the cursor of the last one when more
// follow (nil on the last page).
func listPage(ctx context.Context, q querier, ls listSpec) ([]json.RawMessage, *cursor, error) {
	where := append([]string{"network_id = ?"}, ls.where...)
	args := append([]any{ls.network}, ls.args...)
	if ls.after != nil {
		where = append(where, "(create_date < ? OR (create_date = ? AND rowid < ?))")
		args = append(args, ls.after.createDate, ls.after.createDate, ls.after.rowid)
	}
	args = append(args, ls.limit+1)
	rows, err := q.QueryContext(ctx, "SELECT doc, create_date, rowid FROM "+ls.table+" WHERE "+strings.Join(where, " AND ")+
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
		if len(docs) == ls.limit {
			more = true
			break
		}
		var doc string
		if err := rows.Scan(&doc, &last.createDate, &last.rowid); err != nil {
			return nil, nil, err
		}
		docs = append(docs, json.RawMessage(doc))
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	if !more {
		return docs, nil, nil
	}
	return docs, &last, nil
}

// dateRange reads name[gte] and name[lte] (RFC 3339, both inclusive) into
// SQL conditions on create_date and canonical filter values; lte before gte
// is a 400.
func dateRange(q url.Values, name string, filters map[string]string, ls *listSpec) error {
	var bounds [2]int64
	for i, op := range []string{"gte", "lte"} {
		key := name + "[" + op + "]"
		v := q.Get(key)
		if v == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return invalidf("%s: must be an RFC 3339 timestamp", key)
		}
		bounds[i] = t.UnixMicro()
		filters[key] = strconv.FormatInt(bounds[i], 10)
		ls.where = append(ls.where, map[string]string{"gte": "create_date >= ?", "lte": "create_date <= ?"}[op])
		ls.args = append(ls.args, bounds[i])
	}
	if filters[name+"[gte]"] != "" && filters[name+"[lte]"] != "" && bounds[0] > bounds[1] {
		return invalidf("%s[lte]: must not be before %s[gte]", name, name)
	}
	return nil
}

// uuidParam reads an optional uuid query parameter, lowercased.
func uuidParam(q url.Values, name string) (string, error) {
	v := q.Get(name)
	if v == "" {
		return "", nil
	}
	if !ids.IsUUID(v) {
		return "", invalidf("%s: must be a uuid", name)
	}
	return strings.ToLower(v), nil
}

// requiredUUIDParam is uuidParam for a parameter the operation requires.
func requiredUUIDParam(q url.Values, name string) (string, error) {
	v, err := uuidParam(q, name)
	if err == nil && v == "" {
		err = invalidf("%s: is required", name)
	}
	return v, err
}

// searchQueryNext renders the ready-made query string of the next page: the
// given filters plus limit and nextPageToken (no leading "?").
func searchQueryNext(params map[string]string, limit int, token string) string {
	v := url.Values{}
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if params[k] != "" {
			v.Set(k, params[k])
		}
	}
	v.Set("limit", strconv.Itoa(limit))
	v.Set("nextPageToken", token)
	return v.Encode()
}

package restserver

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

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

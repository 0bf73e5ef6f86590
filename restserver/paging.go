package restserver

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"net/url"
	"sort"
	"strconv"
)

// cursor is the position after the last item of a page, in the list order
// (create_date DESC, rowid DESC), named by that item's own sort key: its
// create_date and its id (listPage finds the id's row for the tie-break).
// The global rowid, which counts the rows of every network, never leaves the
// database.
type cursor struct {
	createDate int64
	id         string
}

// A nextPageToken is base64url(nonce || AES-256-GCM(plaintext)) under a key
// derived (HKDF-SHA256) from the database's paging secret, with a random
// nonce and the route and network as additional data. The plaintext is
// version (1 byte) || SHA-256(canonical filters)[:16] || create_date (8 bytes,
// big endian) || id. A token reveals nothing (not the position, not a
// counter), and any modified, forged or foreign token fails to open.
const (
	pageTokenVersion = 2
	pageFiltersLen   = 16
	pageTokenInfo    = "restserver nextPageToken v2"
	maxPageTokenLen  = 1024
)

// pageTokenAD binds a token to its route and network.
func pageTokenAD(route, network string) []byte {
	return []byte(route + "\x00" + network)
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

func filtersHash(filters map[string]string) []byte {
	h := sha256.Sum256([]byte(canonicalFilters(filters)))
	return h[:pageFiltersLen]
}

// encodePageToken seals the position c of a list (see pageTokenVersion).
func (s *Server) encodePageToken(route, network string, filters map[string]string, c cursor) string {
	plain := make([]byte, 0, 1+pageFiltersLen+8+len(c.id))
	plain = append(plain, pageTokenVersion)
	plain = append(plain, filtersHash(filters)...)
	plain = binary.BigEndian.AppendUint64(plain, uint64(c.createDate))
	plain = append(plain, c.id...)
	return base64.RawURLEncoding.EncodeToString(s.pageBox.Seal(nil, plain, pageTokenAD(route, network)))
}

// decodePageToken opens a nextPageToken for this route, network and
// filters. Any modified, foreign or malformed token is a 400.
func (s *Server) decodePageToken(tok, route, network string, filters map[string]string) (*cursor, error) {
	if tok == "" {
		return nil, nil
	}
	bad := invalidf("nextPageToken: invalid page token")
	if len(tok) > maxPageTokenLen {
		return nil, bad
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(tok)
	if err != nil {
		return nil, bad
	}
	plain, err := s.pageBox.Open(raw, pageTokenAD(route, network))
	if err != nil || len(plain) <= 1+pageFiltersLen+8 || plain[0] != pageTokenVersion {
		return nil, bad
	}
	if string(plain[1:1+pageFiltersLen]) != string(filtersHash(filters)) {
		return nil, invalidf("nextPageToken: the page token was issued for other filters; repeat the same filters")
	}
	c := &cursor{
		createDate: int64(binary.BigEndian.Uint64(plain[1+pageFiltersLen:])),
		id:         string(plain[1+pageFiltersLen+8:]),
	}
	return c, nil
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

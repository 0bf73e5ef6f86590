package restserver

import (
	"encoding/json"
	"slices"
	"strconv"
)

// List pages are written without re-encoding their items: each item is a
// document as the store keeps it, compact JSON the service itself encoded,
// so it is copied as is. (encoding/json would scan and compact every
// document again: most of the time of a 100-transaction page.)

// jsonAppender is a response body that appends its own JSON encoding
// (writeJSON uses it instead of encoding/json). It must write exactly what
// json.Marshal would (TestDocPagesEncodeAsMarshal).
type jsonAppender interface {
	appendJSON(b []byte) []byte
}

// appendDocPage appends {"<key>":[docs...],"nextPageToken":next,
// "searchQueryNext":searchNext}, the tokens only when set: the encoding of
// the page types below.
func appendDocPage(b []byte, key string, docs []json.RawMessage, next, searchNext string) []byte {
	n := len(key) + len(next) + len(searchNext) + 64
	for _, d := range docs {
		n += len(d) + 1
	}
	b = slices.Grow(b, n)
	b = append(b, `{"`...)
	b = append(b, key...)
	b = append(b, `":`...)
	if docs == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, d := range docs {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, d...)
		}
		b = append(b, ']')
	}
	b = appendToken(b, "nextPageToken", next)
	b = appendToken(b, "searchQueryNext", searchNext)
	return append(b, '}')
}

// appendToken appends ,"name":"value" unless value is empty. Page tokens
// are URL-safe base64 (no character JSON escapes); anything else is quoted
// by encoding/json's rules.
func appendToken(b []byte, name, value string) []byte {
	if value == "" {
		return b
	}
	b = append(b, `,"`...)
	b = append(b, name...)
	b = append(b, `":`...)
	for i := 0; i < len(value); i++ {
		if c := value[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(value)
			return append(b, q...)
		}
	}
	return strconv.AppendQuote(b, value)
}

func (p transactionsPage) appendJSON(b []byte) []byte {
	return appendDocPage(b, "transactions", p.Transactions, p.NextPageToken, "")
}

func (p ordersPage) appendJSON(b []byte) []byte {
	return appendDocPage(b, "orders", p.Orders, p.NextPageToken, "")
}

func (p creditNotesPage) appendJSON(b []byte) []byte {
	return appendDocPage(b, "creditNotes", p.CreditNotes, p.NextPageToken, p.SearchQueryNext)
}

func (p redemptionsPage) appendJSON(b []byte) []byte {
	return appendDocPage(b, "redemptions", p.Redemptions, p.NextPageToken, p.SearchQueryNext)
}

package restserver

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/workspacenet/facade/restserver/wire"
)

// List pages are written without re-encoding their items: each item is a
// document as the store keeps it, compact JSON the service itself encoded,
// so it is copied as is. (encoding/json would scan and compact every
// document again: most of the time of a 100-transaction page.)

// jsonAppender is a response body that appends its own JSON encoding
// (writeJSON uses it instead of encoding/json).
type jsonAppender interface {
	appendJSON(b []byte) ([]byte, error)
}

// The list pages write exactly what json.Marshal would
// (TestDocPagesEncodeAsMarshal).

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
		b = appendDocs(b, docs)
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

func (p transactionsPage) appendJSON(b []byte) ([]byte, error) {
	return appendDocPage(b, "transactions", p.Transactions, p.NextPageToken, ""), nil
}

func (p ordersPage) appendJSON(b []byte) ([]byte, error) {
	return appendDocPage(b, "orders", p.Orders, p.NextPageToken, ""), nil
}

func (p creditNotesPage) appendJSON(b []byte) ([]byte, error) {
	return appendDocPage(b, "creditNotes", p.CreditNotes, p.NextPageToken, p.SearchQueryNext), nil
}

func (p redemptionsPage) appendJSON(b []byte) ([]byte, error) {
	return appendDocPage(b, "redemptions", p.Redemptions, p.NextPageToken, p.SearchQueryNext), nil
}

// invoiceItemsBody is the answer of GET /billing/invoices/v1/{id}/items:
// {"invoice": the invoice with "items" (its items) and "itemsCount",
// "invoiceItems": its items}. The items are written as stored, twice,
// instead of decoded and encoded twice; the invoice is encoded without
// them and they are added as its last member. The same JSON as encoding
// the invoice with its items decoded, up to the order of the invoice's
// members (TestInvoiceItemsBodyAsBefore).
type invoiceItemsBody struct {
	invoice *wire.Invoice // Items nil
	items   []json.RawMessage
}

func (v invoiceItemsBody) appendJSON(b []byte) ([]byte, error) {
	inv, err := json.Marshal(v.invoice)
	if err != nil {
		return nil, err
	}
	n := len(inv) + 64
	for _, d := range v.items {
		n += 2*len(d) + 2
	}
	b = slices.Grow(b, n)
	b = append(b, `{"invoice":`...)
	if len(v.items) == 0 { // "items" is omitted when empty
		b = append(b, inv...)
	} else {
		b = append(b, inv[:len(inv)-1]...) // without its closing brace
		if len(inv) > 2 {
			b = append(b, ',')
		}
		b = append(b, `"items":`...)
		b = appendDocs(b, v.items)
		b = append(b, '}')
	}
	b = append(b, `,"invoiceItems":`...)
	b = appendDocs(b, v.items)
	return append(b, '}'), nil
}

// appendDocs appends docs as a JSON array ([] for none).
func appendDocs(b []byte, docs []json.RawMessage) []byte {
	b = append(b, '[')
	for i, d := range docs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, d...)
	}
	return append(b, ']')
}

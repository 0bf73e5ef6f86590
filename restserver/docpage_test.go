package restserver

import (
	"encoding/json"
	"testing"
)

// TestDocPagesEncodeAsMarshal: a list page written by appendJSON is
// byte for byte what json.Marshal writes for it, whatever its documents
// and tokens.
func TestDocPagesEncodeAsMarshal(t *testing.T) {
	docs := []json.RawMessage{
		json.RawMessage(`{"id":"a","title":"caf\u00e9 \u003cb\u003e","amount":12.5,"tags":["x"],"n":null}`),
		json.RawMessage(`{"id":"b","nested":{"createDate":"2026-01-02T03:04:05Z"},"ok":true}`),
	}
	tokens := []string{"", "eyJhIjoxfQ-_x", `odd "token" <&> é` + "\n"}
	for _, d := range [][]json.RawMessage{nil, {}, docs[:1], docs} {
		for _, next := range tokens {
			for _, search := range tokens {
				for _, body := range []jsonAppender{
					transactionsPage{Transactions: d, NextPageToken: next},
					ordersPage{Orders: d, NextPageToken: next},
					creditNotesPage{CreditNotes: d, NextPageToken: next, SearchQueryNext: search},
					redemptionsPage{Redemptions: d, NextPageToken: next, SearchQueryNext: search},
				} {
					want, err := json.Marshal(body)
					if err != nil {
						t.Fatal(err)
					}
					if got := body.appendJSON(nil); string(got) != string(want) {
						t.Errorf("%T:\n got %s\nwant %s", body, got, want)
					}
				}
			}
		}
	}
}

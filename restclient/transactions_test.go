package restclient

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

var transactionPartials = map[string][]string{
	".Booking.Resource": {"ID", "Title"},
	".Invoice":          {"ID", "Title"},
	".Order.Product":    {"ID", "Title"},
	".Plan":             {"ID", "Title"},
	".Ticket.Event":     {"EndDate", "ID", "StartDate", "Title"},
}

func TestListTransactions(t *testing.T) {
	u := newUpstream(t)
	tx := fixture(t, "transaction.json")
	u.handle(OpListTransactions.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		wantRequest{method: "GET", path: OpListTransactions.Route, query: url.Values{
			"locationRef":     {"loc-1"},
			"status":          {"succeeded"},
			"type":            {"booking"},
			"createDate[gte]": {"2021-05-01T00:00:00Z"},
			"createDate[lte]": {"2021-05-31T23:59:59.5Z"},
			"limit":           {"50"},
			"nextPageToken":   {"tok 1"},
		}}.check(t, r)
		// Bracket keys travel percent-encoded, as url.Values encodes them.
		if !strings.Contains(r.URL.RawQuery, "createDate%5Bgte%5D=2021-05-01T00%3A00%3A00Z") {
			t.Errorf("raw query %s", r.URL.RawQuery)
		}
		w.Write([]byte(`{"transactions":[` + tx + `],"nextPageToken":"next"}`))
	})
	gte := mustTime(t, "2021-05-01T02:00:00+02:00")
	lte := mustTime(t, "2021-05-31T23:59:59.5Z")
	got, resp, err := u.client().Transactions.ListTransactions(ctxT(t), &TransactionListOptions{
		LocationRef: "loc-1", Status: TransactionStatusSucceeded, Type: TransactionTypeBooking,
		CreateDate:  DateRange{GTE: gte, LTE: lte},
		ListOptions: ListOptions{Limit: 50, NextPageToken: "tok 1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || resp.NextPageToken != "next" || resp.SearchQueryNext != "" {
		t.Fatalf("%d transactions, paging %q %q", len(got), resp.NextPageToken, resp.SearchQueryNext)
	}
	assertComplete(t, got[0], transactionPartials)
	assertRoundTrip(t, got[0], tx)
	if *got[0].Status != TransactionStatusSucceeded || *got[0].Type != TransactionTypeBooking {
		t.Errorf("status %v type %v", *got[0].Status, *got[0].Type)
	}
}

func TestListTransactionsNilOptions(t *testing.T) {
	u := newUpstream(t)
	u.serveJSON(OpListTransactions.Pattern(), wantRequest{method: "GET", path: OpListTransactions.Route}, 200, `{}`)
	got, resp, err := u.client().Transactions.ListTransactions(ctxT(t), nil)
	if err != nil || len(got) != 0 || resp.NextPageToken != "" {
		t.Fatalf("got %v %v %v", got, resp, err)
	}
}

func TestAllTransactions(t *testing.T) {
	u := newUpstream(t)
	var tokens []string
	u.handle(OpListTransactions.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		tokens = append(tokens, q.Get("nextPageToken"))
		if q.Get("status") != "failed" || q.Get("limit") != "2" {
			t.Errorf("filters lost: %v", q)
		}
		switch q.Get("nextPageToken") {
		case "start":
			w.Write([]byte(`{"transactions":[{"id":"1"},{"id":"2"}],"nextPageToken":"p2"}`))
		case "p2":
			w.Write([]byte(`{"transactions":[{"id":"3"},{"id":"4"}],"nextPageToken":"p3"}`))
		case "p3":
			w.Write([]byte(`{"transactions":[]}`))
		}
	})
	c := u.client()
	opts := &TransactionListOptions{LocationRef: "l", Status: TransactionStatusFailed, ListOptions: ListOptions{Limit: 2, NextPageToken: "start"}}
	var ids []string
	for tx, err := range c.Transactions.AllTransactions(ctxT(t), opts) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tx.ID)
	}
	if !slices.Equal(ids, []string{"1", "2", "3", "4"}) || !slices.Equal(tokens, []string{"start", "p2", "p3"}) {
		t.Errorf("ids %v tokens %v", ids, tokens)
	}
	if opts.NextPageToken != "start" {
		t.Error("caller's options modified")
	}

	// Stopping early fetches no further page.
	tokens = nil
	for range c.Transactions.AllTransactions(ctxT(t), opts) {
		break
	}
	if len(tokens) != 1 {
		t.Errorf("fetched %v after break", tokens)
	}
}

func TestAllTransactionsErrors(t *testing.T) {
	u := newUpstream(t)
	u.handle(OpListTransactions.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Query().Get("nextPageToken") {
		case "":
			w.Write([]byte(`{"transactions":[{"id":"1"}],"nextPageToken":"same"}`))
		case "same":
			if r.URL.Query().Get("locationRef") == "loop" {
				w.Write([]byte(`{"transactions":[{"id":"2"}],"nextPageToken":"same"}`))
				return
			}
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"message":"bad token","type":"invalid_request"}`))
		}
	})
	c := u.client()
	var n int
	var last error
	for tx, err := range c.Transactions.AllTransactions(ctxT(t), &TransactionListOptions{LocationRef: "x"}) {
		if err != nil {
			last = err
			if tx != nil {
				t.Error("item with error")
			}
			continue
		}
		n++
	}
	if n != 1 || !IsBadRequest(last) {
		t.Errorf("n=%d err=%v", n, last)
	}
	n, last = 0, nil
	for _, err := range c.Transactions.AllTransactions(ctxT(t), &TransactionListOptions{LocationRef: "loop"}) {
		if err != nil {
			last = err
			break
		}
		n++
	}
	if n != 2 || last == nil || !strings.Contains(last.Error(), "repeated") {
		t.Errorf("n=%d err=%v", n, last)
	}
}

package restclient_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/workspacenet/facade/restclient"
)

// recorder keeps the 2xx bodies a client receives, labelled by the test.
type recorder struct {
	label  string
	bodies []recorded
}

type recorded struct {
	label string
	body  []byte
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || resp.StatusCode/100 != 2 {
		return resp, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	r.bodies = append(r.bodies, recorded{r.label, b})
	resp.Body = io.NopCloser(bytes.NewReader(b))
	resp.ContentLength = int64(len(b))
	return resp, nil
}

// TestGeneratedDecodersOnTheDemoData: every demo response of the local REST
// service of the routes with generated decoders (every page of every list,
// every object by id) decodes to what encoding/json makes of it.
func TestGeneratedDecodersOnTheDemoData(t *testing.T) {
	_, url, m := demoService(t)
	rec := &recorder{}
	c, err := restclient.NewClient(url, restclient.WithBearerToken(m.BearerToken, m.NetworkID),
		restclient.WithHTTPClient(&http.Client{Transport: rec}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	check := func(label string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", label, err)
		}
	}
	page := restclient.ListOptions{Limit: 100}
	for _, loc := range m.IDs["location"] {
		rec.label = "transactions"
		for _, err := range c.Transactions.AllTransactions(ctx, &restclient.TransactionListOptions{LocationRef: loc, ListOptions: page}) {
			check("transactions", err)
		}
		rec.label = "orders"
		for _, err := range c.Shop.AllOrders(ctx, &restclient.OrderListOptions{LocationRef: loc, ListOptions: page}) {
			check("orders", err)
		}
		rec.label = "creditNotes"
		for _, err := range c.Billing.AllCreditNotes(ctx, &restclient.CreditNoteListOptions{LocationRef: loc, ListOptions: page}) {
			check("creditNotes", err)
		}
		rec.label = "products"
		_, _, err := c.Shop.ListProducts(ctx, &restclient.ProductListOptions{LocationRef: loc})
		check("products", err)
	}
	// The routes that take one demo id: every id of its kind.
	for _, byID := range []struct {
		kind, label string
		get         func(id string) error
	}{
		{"product", "product", func(id string) error { _, _, err := c.Shop.GetProduct(ctx, id); return err }},
		{"invoice", "invoiceItems", func(id string) error { _, _, err := c.Billing.ListInvoiceItems(ctx, id); return err }},
		{"resource", "resource", func(id string) error { _, _, err := c.Resources.GetResource(ctx, id); return err }},
		{"event", "event", func(id string) error { _, _, err := c.Events.GetEvent(ctx, id); return err }},
		{"post", "comments", func(id string) error { _, _, err := c.Feed.ListComments(ctx, id); return err }},
		{"visit", "visit", func(id string) error { _, _, err := c.Visitors.GetVisit(ctx, id); return err }},
	} {
		rec.label = byID.label
		for _, id := range m.IDs[byID.kind] {
			check(byID.label, byID.get(id))
		}
	}
	seen := map[string]int{}
	for _, r := range rec.bodies {
		restclient.SameAsEncodingJSON(t, r.label, r.body)
		if r.label == "invoiceItems" || r.label == "resource" {
			restclient.SameAsEncodingJSON(t, r.label+"Lazy", r.body)
		}
		seen[r.label]++
	}
	for _, label := range []string{"transactions", "orders", "creditNotes", "products", "product", "invoiceItems", "resource", "event", "comments"} {
		if seen[label] == 0 {
			t.Errorf("no %s body seen", label)
		}
	}
	t.Logf("bodies compared: %v", seen)
}

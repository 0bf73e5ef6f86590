package graph_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/restclient"
)

// The invoice fields restclient.ListInvoiceItemsLazily leaves undecoded
// until a field reads them, with every sub-field.
const invoiceDeferredFields = `
  taxes { amount inclusive rate taxableAmount }
  baseAmounts { amountDue appliedBalance currencyCode postPaymentCreditNotesAmount prePaymentCreditNotesAmount
    subtotalAmount subtotalExcludingTaxAmount taxes { amount inclusive rate taxableAmount } totalAmount totalExcludingTaxAmount }
  company { id billingAddress businessAddress { city countryCode line1 line2 postalCode state } createDate
    credits { expiring permanent } dayPasses { expiring } deleteDate legalName locationRef metadata notes subscriptionRef taxId title }
  customer { id title type user { id about email name phoneNumber photoUrl surname } }
  customerAddress { city countryCode line1 line2 postalCode state }
  payments { createDate method { paymentGateway { gateway label } type } price { money { currencyCode grossAmount } type }
    refundable refunds { money { id createDate currencyCode grossAmount } type } status transactionRef }
  transaction { id amount createDate paymentMethod { label type } status refund { amount createDate }
    refunds { id amount createDate currencyCode } }
  user { id about email name phoneNumber photoUrl surname }
  items { id description totalAmount quantity discounts { subscriptionId } period { startDate endDate } tax { amount rate } }`

var invoiceDeferredNames = []string{"taxes", "baseAmounts", "company", "customer", "customerAddress", "payments", "transaction", "user", "items"}

// TestInvoiceDecodedOnRead: an invoice loaded by id decodes its objects and
// arrays when a field reads them; every such field of every demo invoice
// shows what the REST service holds, alone or after another field of the
// same request read the invoice's scalars from the same call.
func TestInvoiceDecodedOnRead(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	creds := env.Bearer()
	rc, ctx := env.REST(t, creds)
	seen := map[string]int{}
	for _, id := range env.Manifest.IDs["invoice"] {
		want, _, err := rc.Billing.ListInvoiceItems(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		d := mustRun(t, env, creds, `query($id: ID!) { invoice(id: $id) { id number `+invoiceDeferredFields+` } }`, map[string]any{"id": id})
		expectCalls(t, env, calls{restclient.OpListInvoiceItems: 1})
		inv := get(d, "invoice")
		sameFields(t, "invoice "+id, inv, want.Invoice, append([]string{"id", "number"}, invoiceDeferredNames...)...)
		for _, f := range invoiceDeferredNames {
			if g := get(inv, f); g != nil && !(isList(g) && len(g.([]any)) == 0) {
				seen[f]++
			}
		}
	}
	for _, f := range invoiceDeferredNames {
		if seen[f] == 0 {
			t.Errorf("no demo invoice has %s: the comparison proves nothing for it", f)
		}
	}

	// One request: the credit notes' invoices read for their scalars, then
	// the first one's deferred fields: one call per invoice, right values.
	loc := env.ID(t, "location", 0)
	notes, _, err := rc.Billing.ListCreditNotes(ctx, &restclient.CreditNoteListOptions{LocationRef: loc, ListOptions: restclient.ListOptions{Limit: 10}})
	if err != nil || len(notes) == 0 {
		t.Fatalf("credit notes: %v (%d)", err, len(notes))
	}
	id := *notes[0].InvoiceRef
	want, _, err := rc.Billing.ListInvoiceItems(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	d := mustRun(t, env, creds, `query($l: ID!, $id: ID!) {
	  creditNotes(locationId: $l, first: 10) { nodes { invoice { id number status amountDue } } }
	  invoice(id: $id) { id `+invoiceDeferredFields+` } }`, map[string]any{"l": loc, "id": id})
	invoices := distinct(d, "creditNotes.nodes.*.invoice.id")
	expectCalls(t, env, calls{restclient.OpListCreditNotes: 1, restclient.OpListInvoiceItems: int64(len(invoices))})
	sameFields(t, "invoice after its scalars", get(d, "invoice"), want.Invoice, append([]string{"id"}, invoiceDeferredNames...)...)
	sameFields(t, "credit note's invoice", get(d, "creditNotes.nodes.0.invoice"), want.Invoice, "id", "number", "status", "amountDue")
}

func isList(v any) bool { _, ok := v.([]any); return ok }

// quantityAsString makes every invoice body's item quantities strings: JSON
// of the wrong type for the invoice's items only.
type quantityAsString struct{}

var quantity = regexp.MustCompile(`"quantity":([0-9.]+)`)

func (quantityAsString) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusOK || !strings.HasSuffix(req.URL.Path, "/items") {
		return resp, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	b = quantity.ReplaceAll(b, []byte(`"quantity":"$1"`))
	resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
	resp.Header.Del("Content-Length")
	return resp, nil
}

// TestInvoiceWrongTypeErrorsWhenRead: a value of the wrong type in a part of
// an invoice that is decoded on read is the error of the fields that read
// it (naming the upstream call, as any body that cannot be read), and of no
// other field.
func TestInvoiceWrongTypeErrorsWhenRead(t *testing.T) {
	env := testenv.New(t, testenv.Options{ClientOpts: []restclient.Option{
		restclient.WithHTTPClient(&http.Client{Transport: quantityAsString{}})}})
	creds := env.Bearer()
	id := env.ID(t, "invoice", 0)
	vars := map[string]any{"id": id}

	d := mustRun(t, env, creds, `query($id: ID!) { invoice(id: $id) { id number status totalAmount } }`, vars)
	if str(d, "invoice.id") != id || str(d, "invoice.number") == "" {
		t.Fatalf("scalars: %s", pretty(d))
	}
	expectCalls(t, env, calls{restclient.OpListInvoiceItems: 1})

	for _, field := range []string{"items { id }", "company { id }"} {
		r := run(t, env, creds, `query($id: ID!) { invoice(id: $id) { id number `+field+` } }`, vars)
		expectCalls(t, env, calls{restclient.OpListInvoiceItems: 1})
		name, _, _ := strings.Cut(field, " ")
		if len(r.Errors) != 1 {
			t.Fatalf("%s: errors %+v", field, r.Errors)
		}
		e := r.Errors[0]
		up, _ := e.Extensions["upstream"].(map[string]any)
		if e.Code() != errcode.UpstreamUnavailable || e.PathString() != "invoice."+name || up["method"] != "GET" || up["path"] != restclient.OpListInvoiceItems.Route {
			t.Errorf("%s: error %+v, want %s at invoice.%s naming GET /billing/invoices/v1/{id}/items", field, e, errcode.UpstreamUnavailable, name)
		}
		var v any
		if err := json.Unmarshal(r.Data, &v); err != nil {
			t.Fatal(err)
		}
		if str(v, "invoice.number") == "" {
			t.Errorf("%s: the invoice's scalars are lost: %s", field, pretty(v))
		}
	}
}

// The resource fields restclient.GetResourceLazily leaves undecoded until a
// field reads them, with sub-fields.
const resourceDeferredFields = `
  image { key }
  autoRelease { enabled interval }
  checkIn { interval }
  confirmationEmail { bookingCreatedByAdmin bookingCreatedByMember bookingCreatedByNetworkMember bookingCreatedByPublic template }
  credits { enabled price tiers { flatAmount from unitAmount upTo } }
  money { enabled price tiers { flatAmount from unitAmount upTo } }
  dynamicPricing { deltaAbove deltaBelow enabled }
  duration { max min public { enabled max min } }
  externalCalendar { id twoWaySyncEnabled }
  plans { enabled tiers { id entire commitmentCycles credits dayPasses description period price title
    plan { id commitmentCycles credits dayPasses period price title } } }
  schedule { enabled default { closedDays } public { closedDays enabled } }`

var resourceDeferredNames = []string{"image", "autoRelease", "checkIn", "confirmationEmail", "credits", "money",
	"dynamicPricing", "duration", "externalCalendar", "plans", "schedule"}

// TestResourceDecodedOnRead: a resource loaded by id (and its parent)
// decodes its objects when a field reads them; every such field of every
// demo resource shows what the REST service holds.
func TestResourceDecodedOnRead(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	creds := env.Bearer()
	rc, ctx := env.REST(t, creds)
	seen := map[string]int{}
	for _, id := range env.Manifest.IDs["resource"] {
		want, _, err := rc.Resources.GetResource(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		d := mustRun(t, env, creds, `query($id: ID!) { resource(id: $id) { id title capacity `+resourceDeferredFields+` } }`, map[string]any{"id": id})
		r := get(d, "resource")
		sameFields(t, "resource "+id, r, want, append([]string{"id", "title", "capacity"}, resourceDeferredNames...)...)
		for _, f := range resourceDeferredNames {
			if get(r, f) != nil {
				seen[f]++
			}
		}
	}
	for _, f := range resourceDeferredNames {
		if seen[f] == 0 {
			t.Errorf("no demo resource has %s: the comparison proves nothing for it", f)
		}
	}
}

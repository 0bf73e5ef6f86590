package restclient

import (
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// lazyInvoiceItems decodes body as ListInvoiceItemsLazily does and
// completes it: the decoder the differential tests compare with
// encoding/json (decoders()["invoiceLazy"]). It also checks what the
// lazy decoding alone gave: every field it decodes equal to the completed
// value's, every field it defers nil, and Complete's answer the same from
// the InvoiceItems and from its Invoice; a difference is an error, which
// the differential tests report.
func lazyInvoiceItems(body []byte) (any, pageInfo, error) {
	v := new(InvoiceItems)
	if err := v.decodeLazily(body, http.MethodGet, "/r"); err != nil {
		return nil, pageInfo{}, err
	}
	whole, err := v.Complete()
	if err != nil {
		return nil, pageInfo{}, err
	}
	if err := sameUndeferred(v, whole); err != nil {
		return nil, pageInfo{}, err
	}
	return whole, pageInfo{}, nil
}

// sameUndeferred reports how lazy, decoded by ListInvoiceItemsLazily,
// differs from its completed value whole beyond the deferred fields.
func sameUndeferred(lazy, whole *InvoiceItems) error {
	if (lazy.Invoice == nil) != (whole.Invoice == nil) {
		return errors.New("lazy: invoice nil in one decoding only")
	}
	if lazy.lazy == nil {
		if lazy != whole {
			return errors.New("lazy: nothing deferred, yet Complete made another value")
		}
		return nil
	}
	if lazy.Items != nil {
		return errors.New("lazy: invoiceItems decoded")
	}
	if lazy.Invoice == nil {
		return nil
	}
	inv, err := lazy.Invoice.Complete()
	if err != nil || inv != whole.Invoice {
		return errors.New("lazy: the invoice's Complete is not the InvoiceItems' invoice")
	}
	return sameScalars(lazy.Invoice, whole.Invoice)
}

// sameScalars reports how lazy, a struct decoded by a lazy decoder, differs
// from whole, its completed value: the fields lazy decoders decode must be
// equal, the others nil in lazy.
func sameScalars[T any](lazy, whole *T) error {
	got, want := reflect.ValueOf(lazy).Elem(), reflect.ValueOf(whole).Elem()
	for i := range got.NumField() {
		f := got.Type().Field(i)
		if !f.IsExported() {
			continue
		}
		if deferredField(f.Type) {
			if !got.Field(i).IsZero() {
				return errors.New("lazy: field " + f.Name + " decoded")
			}
		} else if !reflect.DeepEqual(got.Field(i).Interface(), want.Field(i).Interface()) {
			return errors.New("lazy: field " + f.Name + " differs from the whole decoding")
		}
	}
	return nil
}

// lazyChecks are, by the key of a row's answer, the checks of its lazy
// decoder (decoders()): each decodes a body lazily, completes it, checks
// the lazy value against the completed one, and returns the completed one.
var lazyChecks = map[string]parseFunc{"resource": lazyResource, "invoice": lazyInvoiceItems}

// lazyResource decodes body as GetResourceLazily does and completes it,
// checking the lazy value against the completed one (sameScalars).
func lazyResource(body []byte) (any, pageInfo, error) {
	lv, _, err := OpGetResource.lazy(body)
	if err != nil {
		return nil, pageInfo{}, err
	}
	v := lv.(*Resource)
	whole, err := v.Complete()
	if err != nil {
		return nil, pageInfo{}, err
	}
	if v.lazy == nil {
		if whole != v {
			return nil, pageInfo{}, errors.New("lazy: nothing deferred, yet Complete made another value")
		}
	} else if err := sameScalars(v, whole); err != nil {
		return nil, pageInfo{}, err
	}
	return whole, pageInfo{}, nil
}

// deferredField reports whether the lazy decoders leave a field of type t
// undecoded: objects, arrays and raw JSON.
func deferredField(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Slice:
		return true
	case reflect.Pointer:
		return t.Elem().Kind() == reflect.Struct && t.Elem() != timestampType
	}
	return false
}

// An invoice's body of the demo's shape: scalars, objects, and its items
// twice.
const lazyBody = `{"invoice":{"id":"inv-1","number":"N-1","status":"paid","totalAmount":12.5,` +
	`"company":{"id":"c","title":"C"},"customer":{"id":"u","title":"U"},"taxes":[{"amount":1}],` +
	`"payments":[{"status":"ok"}],"items":[{"id":"a","quantity":2}]},"invoiceItems":[{"id":"a","quantity":2}]}`

func TestListInvoiceItemsLazily(t *testing.T) {
	var route = OpListInvoiceItems.Route
	serve := func(t *testing.T, body string) *Client {
		u := newUpstream(t)
		u.serveJSON("GET "+route, wantRequest{method: "GET", path: "/billing/invoices/v1/inv-1/items"}, http.StatusOK, body)
		return u.client()
	}
	wantDecodeError := func(t *testing.T, what string, err error) {
		t.Helper()
		var de *DecodeError
		if !errors.As(err, &de) || de.Method != http.MethodGet || de.Route != route {
			t.Fatalf("%s: %v, want a *DecodeError naming GET %s", what, err, route)
		}
	}

	t.Run("scalars now, the rest on Complete, once", func(t *testing.T) {
		c := serve(t, lazyBody)
		got, _, err := c.Billing.ListInvoiceItemsLazily(ctxT(t), "inv-1")
		if err != nil {
			t.Fatal(err)
		}
		inv := got.Invoice
		if inv.ID != "inv-1" || *inv.Number != "N-1" || *inv.Status != "paid" || *inv.TotalAmount != 12.5 {
			t.Fatalf("scalars: %+v", inv)
		}
		if inv.Company != nil || inv.Customer != nil || inv.Taxes != nil || inv.Payments != nil || inv.Items != nil || got.Items != nil {
			t.Fatalf("deferred fields decoded: %+v %+v", inv, got.Items)
		}
		want, _, err := c.Billing.ListInvoiceItems(ctxT(t), "inv-1")
		if err != nil {
			t.Fatal(err)
		}
		// Concurrent first reads (the race detector watches) get one value.
		var wg sync.WaitGroup
		wholes := make([]*Invoice, 8)
		for i := range wholes {
			wg.Go(func() {
				w, err := inv.Complete()
				if err != nil {
					t.Error(err)
				}
				wholes[i] = w
			})
		}
		wg.Wait()
		for _, w := range wholes {
			if w != wholes[0] {
				t.Fatal("Complete decoded twice")
			}
		}
		if !reflect.DeepEqual(wholes[0], want.Invoice) {
			t.Errorf("completed invoice\n%+v\nListInvoiceItems\n%+v", wholes[0], want.Invoice)
		}
		all, err := got.Complete()
		if err != nil || !reflect.DeepEqual(all, want) || all.Invoice != wholes[0] {
			t.Errorf("completed items: %v %+v, want %+v", err, all, want)
		}
		if inv.Company != nil || got.Items != nil {
			t.Error("Complete modified the lazy value")
		}
	})

	t.Run("a wrong type in a deferred field: an error on Complete only", func(t *testing.T) {
		for _, body := range []string{
			strings.Replace(lazyBody, `"payments":[{"status":"ok"}]`, `"payments":[{"status":1}]`, 1),
			strings.Replace(lazyBody, `"company":{"id":"c","title":"C"}`, `"company":"c"`, 1),
			strings.Replace(lazyBody, `"invoiceItems":[{"id":"a","quantity":2}]`, `"invoiceItems":[{"id":"a","quantity":"2"}]`, 1),
			strings.Replace(lazyBody, `"invoiceItems":[{"id":"a","quantity":2}]`, `"invoiceItems":[null]`, 1),
		} {
			c := serve(t, body)
			if _, _, err := c.Billing.ListInvoiceItems(ctxT(t), "inv-1"); err == nil {
				t.Fatalf("ListInvoiceItems accepted %s", body)
			}
			got, _, err := c.Billing.ListInvoiceItemsLazily(ctxT(t), "inv-1")
			if err != nil {
				t.Fatalf("%s: %v", body, err)
			}
			if got.Invoice.ID != "inv-1" || *got.Invoice.Number != "N-1" {
				t.Fatalf("scalars: %+v", got.Invoice)
			}
			for range 2 { // the error stays
				_, err = got.Invoice.Complete()
				wantDecodeError(t, "Invoice.Complete", err)
				_, err = got.Complete()
				wantDecodeError(t, "InvoiceItems.Complete", err)
			}
		}
	})

	t.Run("malformed JSON in a deferred field: an error at once", func(t *testing.T) {
		for _, body := range []string{
			strings.Replace(lazyBody, `"payments":[{"status":"ok"}]`, `"payments":[{"status":"ok"]`, 1),
			strings.Replace(lazyBody, `"invoiceItems":[{"id":"a","quantity":2}]`, `"invoiceItems":[{"id":"a","quantity":2.}]`, 1),
			strings.Replace(lazyBody, `"taxes":[{"amount":1}]`, `"taxes":[{"amount":1},]`, 1),
		} {
			_, _, err := serve(t, body).Billing.ListInvoiceItemsLazily(ctxT(t), "inv-1")
			wantDecodeError(t, body, err)
		}
	})

	t.Run("nothing deferred", func(t *testing.T) {
		got, _, err := serve(t, `{"invoice":{"id":"inv-1","number":"N-1"}}`).Billing.ListInvoiceItemsLazily(ctxT(t), "inv-1")
		if err != nil {
			t.Fatal(err)
		}
		if w, err := got.Complete(); w != got || err != nil {
			t.Errorf("Complete: %p %v, want the value itself", w, err)
		}
		if w, err := got.Invoice.Complete(); w != got.Invoice || err != nil {
			t.Errorf("Invoice.Complete: %p %v, want the value itself", w, err)
		}
	})

	t.Run("eager values complete to themselves", func(t *testing.T) {
		got, _, err := serve(t, lazyBody).Billing.ListInvoiceItems(ctxT(t), "inv-1")
		if err != nil {
			t.Fatal(err)
		}
		if w, err := got.Invoice.Complete(); w != got.Invoice || err != nil {
			t.Errorf("Complete: %p %v, want the value itself", w, err)
		}
		var inv Invoice
		if err := json.Unmarshal([]byte(`{"id":"x"}`), &inv); err != nil {
			t.Fatal(err)
		}
		if w, _ := inv.Complete(); w != &inv {
			t.Error("an invoice made elsewhere does not complete to itself")
		}
	})

	if _, _, err := serve(t, lazyBody).Billing.ListInvoiceItemsLazily(ctxT(t), ".."); err == nil {
		t.Error(`id ".." accepted`)
	}
}

func TestGetResourceLazily(t *testing.T) {
	var route = OpGetResource.Route
	body := `{"resource":{"id":"r-1","title":"Room","capacity":4,"money":{"price":10},"schedule":{"default":{"closedDays":["sun"]}}}}`
	serve := func(t *testing.T, body string) *Client {
		u := newUpstream(t)
		u.serveJSON("GET "+route, wantRequest{method: "GET", path: "/resources/v1/r-1"}, http.StatusOK, body)
		return u.client()
	}
	c := serve(t, body)
	got, _, err := c.Resources.GetResourceLazily(ctxT(t), "r-1")
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != "r-1" || *got.Title != "Room" || *got.Capacity != 4 || got.Money != nil || got.Schedule != nil {
		t.Fatalf("lazy resource %+v", got)
	}
	want, _, err := c.Resources.GetResource(ctxT(t), "r-1")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wholes := make([]*Resource, 4)
	for i := range wholes {
		wg.Go(func() { wholes[i], _ = got.Complete() })
	}
	wg.Wait()
	if wholes[0] == nil || wholes[1] != wholes[0] || wholes[3] != wholes[0] || !reflect.DeepEqual(wholes[0], want) {
		t.Fatalf("completed %+v, want %+v", wholes[0], want)
	}
	if w, _ := want.Complete(); w != want {
		t.Error("a resource decoded whole does not complete to itself")
	}

	// A wrong type where nothing is decoded yet: Complete's error only.
	got, _, err = serve(t, strings.Replace(body, `"closedDays":["sun"]`, `"closedDays":"sun"`, 1)).Resources.GetResourceLazily(ctxT(t), "r-1")
	if err != nil || *got.Title != "Room" {
		t.Fatalf("%v %+v", err, got)
	}
	_, err = got.Complete()
	var de *DecodeError
	if !errors.As(err, &de) || de.Method != http.MethodGet || de.Route != route {
		t.Fatalf("Complete: %v, want a *DecodeError naming GET %s", err, route)
	}
	// Malformed JSON there: the call's error.
	_, _, err = serve(t, strings.Replace(body, `["sun"]`, `["sun"`, 1)).Resources.GetResourceLazily(ctxT(t), "r-1")
	if !errors.As(err, &de) || de.Route != route {
		t.Fatalf("malformed: %v", err)
	}
}

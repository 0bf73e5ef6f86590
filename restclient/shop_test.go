package restclient

import (
	"net/http"
	"net/url"
	"slices"
	"testing"
)

func TestListProducts(t *testing.T) {
	u := newUpstream(t)
	p := fixture(t, "product.json")
	u.serveJSON(OpListProducts.Pattern(), wantRequest{method: "GET", path: OpListProducts.Route, query: url.Values{"locationRef": {"loc-1"}}},
		http.StatusOK, `{"products":[`+p+`,`+p+`]}`)
	got, _, err := u.client().Shop.ListProducts(ctxT(t), &ProductListOptions{LocationRef: "loc-1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d products", len(got))
	}
	assertComplete(t, got[1], nil)
	assertRoundTrip(t, got[1], p)
}

func TestListProductsNilOptions(t *testing.T) {
	u := newUpstream(t)
	u.serveJSON(OpListProducts.Pattern(), wantRequest{method: "GET", path: OpListProducts.Route}, http.StatusOK, `{"products":null}`)
	got, _, err := u.client().Shop.ListProducts(ctxT(t), nil)
	if err != nil || got != nil {
		t.Fatalf("%v %v", got, err)
	}
}

func TestGetProduct(t *testing.T) {
	u := newUpstream(t)
	obs := &observations{}
	p := fixture(t, "product.json")
	u.serveJSON(OpGetProduct.Pattern(), wantRequest{method: "GET", path: "/shop/products/v1/prod-1"}, http.StatusOK, `{"product":`+p+`}`)
	c := u.client()
	got, _, err := c.Shop.GetProduct(obs.ctx(t), "prod-1")
	if err != nil {
		t.Fatal(err)
	}
	assertComplete(t, got, nil)
	assertRoundTrip(t, got, p)
	checkObserved(t, obs, "GET", OpGetProduct.Route, 200)
	if _, _, err := c.Shop.GetProduct(obs.ctx(t), ""); err == nil {
		t.Error("empty id accepted")
	}
}

var orderPartials = map[string][]string{
	".Option":  {"ID", "Title"},
	".Product": {"CreateDate", "Description", "ID", "Media", "Title"},
}

func TestListOrders(t *testing.T) {
	u := newUpstream(t)
	o := fixture(t, "order.json")
	u.serveJSON(OpListOrders.Pattern(), wantRequest{method: "GET", path: OpListOrders.Route, query: url.Values{
		"locationRef": {"loc-1"}, "status": {"inProgress"}, "createDate[lte]": {"2021-06-01T00:00:00Z"}, "limit": {"100"},
	}}, http.StatusOK, `{"orders":[`+o+`],"nextPageToken":"n2"}`)
	lte := mustTime(t, "2021-06-01T00:00:00Z")
	got, resp, err := u.client().Shop.ListOrders(ctxT(t), &OrderListOptions{
		LocationRef: "loc-1", Status: OrderStatusInProgress, CreateDate: DateRange{LTE: lte}, ListOptions: ListOptions{Limit: 100},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || resp.NextPageToken != "n2" {
		t.Fatalf("%d orders, next %q", len(got), resp.NextPageToken)
	}
	assertComplete(t, got[0], orderPartials)
	assertRoundTrip(t, got[0], o)
	if *got[0].Number != 1001 || *got[0].Status != OrderStatusInProgress {
		t.Error("unexpected values")
	}
}

func TestAllOrders(t *testing.T) {
	u := newUpstream(t)
	u.handle(OpListOrders.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("nextPageToken") == "" {
			w.Write([]byte(`{"orders":[{"id":"o1"}],"nextPageToken":"b"}`))
			return
		}
		w.Write([]byte(`{"orders":[{"id":"o2"}]}`))
	})
	var ids []string
	for o, err := range u.client().Shop.AllOrders(ctxT(t), nil) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, o.ID)
	}
	if !slices.Equal(ids, []string{"o1", "o2"}) {
		t.Errorf("ids %v", ids)
	}
}

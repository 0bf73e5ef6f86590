package restclient

import (
	"net/http"
	"net/url"
	"slices"
	"testing"
)

func TestListRedemptions(t *testing.T) {
	u := newUpstream(t)
	rd := fixture(t, "redemption.json")
	u.serveJSON(OpListRedemptions.Pattern(), wantRequest{method: "GET", path: OpListRedemptions.Route, query: url.Values{
		"couponRef": {"c-1"}, "promocodeRef": {"p-1"}, "limit": {"5"}, "nextPageToken": {"t"},
	}}, http.StatusOK, `{"redemptions":[`+rd+`],"nextPageToken":"t2","searchQueryNext":"couponRef=c-1&nextPageToken=t2"}`)
	got, resp, err := u.client().Discounts.ListRedemptions(ctxT(t), &RedemptionListOptions{
		CouponRef: "c-1", PromocodeRef: "p-1", ListOptions: ListOptions{Limit: 5, NextPageToken: "t"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || resp.NextPageToken != "t2" || resp.SearchQueryNext != "couponRef=c-1&nextPageToken=t2" {
		t.Fatalf("%d, %q %q", len(got), resp.NextPageToken, resp.SearchQueryNext)
	}
	assertComplete(t, got[0], map[string][]string{".Customer.User": {"ID", "Name", "PhotoURL", "Surname"}})
	assertRoundTrip(t, got[0], rd)
	if !got[0].Promocode.Expiration.Date.Equal(mustTime(t, "2021-05-21T12:30:00Z")) {
		t.Error("promocode expiration object not decoded")
	}
}

func TestAllRedemptions(t *testing.T) {
	u := newUpstream(t)
	u.handle(OpListRedemptions.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("couponRef") != "c" {
			t.Error("filter lost")
		}
		if r.URL.Query().Get("nextPageToken") == "" {
			w.Write([]byte(`{"redemptions":[{"networkRef":"a"}],"nextPageToken":"b","searchQueryNext":"q"}`))
			return
		}
		w.Write([]byte(`{"redemptions":[{"networkRef":"b"}]}`))
	})
	var refs []string
	for r, err := range u.client().Discounts.AllRedemptions(ctxT(t), &RedemptionListOptions{CouponRef: "c"}) {
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, *r.NetworkRef)
	}
	if !slices.Equal(refs, []string{"a", "b"}) {
		t.Errorf("refs %v", refs)
	}
}

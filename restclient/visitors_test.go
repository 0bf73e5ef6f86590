package restclient

import (
	"net/http"
	"testing"
)

func TestCreateVisit(t *testing.T) {
	u := newUpstream(t)
	v := fixture(t, "visit.json")
	u.serveJSON(OpCreateVisit.Pattern(), wantRequest{
		method: "POST", path: OpCreateVisit.Route,
		body: `{"visit":{"date":"2021-05-21T10:00:00Z","locationRef":"loc-1","visitor":{"email":"g@example.com","name":"Grace"},"comment":"hi"}}`,
	}, http.StatusCreated, `{"visit":`+v+`}`)
	got, _, err := u.client().Visitors.CreateVisit(ctxT(t), &VisitCreateRequest{
		Date:        NewTimestamp(mustTime(t, "2021-05-21T10:00:00Z")),
		LocationRef: new("loc-1"),
		Visitor:     &Visitor{Email: new("g@example.com"), Name: new("Grace")},
		Comment:     new("hi"),
	})
	if err != nil {
		t.Fatal(err)
	}
	assertComplete(t, got, nil)
	assertRoundTrip(t, got, v)
	if *got.Code != "123456" {
		t.Errorf("code %q", *got.Code)
	}
	if _, _, err := u.client().Visitors.CreateVisit(ctxT(t), nil); err == nil {
		t.Error("nil request accepted")
	}
}

func TestGetVisit(t *testing.T) {
	u := newUpstream(t)
	v := fixture(t, "visit.json")
	u.serveJSON(OpGetVisit.Pattern(), wantRequest{method: "GET", path: "/visitors/visits/v1/v-1"}, http.StatusOK, `{"visit":`+v+`}`)
	got, _, err := u.client().Visitors.GetVisit(ctxT(t), "v-1")
	if err != nil {
		t.Fatal(err)
	}
	assertComplete(t, got, nil)
	assertRoundTrip(t, got, v)
	if _, _, err := u.client().Visitors.GetVisit(ctxT(t), ""); err == nil {
		t.Error("empty id accepted")
	}
}

func TestUpdateVisit(t *testing.T) {
	u := newUpstream(t)
	v := fixture(t, "visit.json")
	// Comment nil: absent from the body (left unchanged upstream).
	u.serveJSON(OpUpdateVisit.Pattern(), wantRequest{
		method: "PUT", path: "/visitors/visits/v1/v-1",
		body: `{"visit":{"date":"2021-05-22T09:00:00Z"}}`,
	}, http.StatusOK, `{"visit":`+v+`}`)
	c := u.client()
	got, _, err := c.Visitors.UpdateVisit(ctxT(t), "v-1", &VisitUpdateRequest{Date: NewTimestamp(mustTime(t, "2021-05-22T09:00:00Z"))})
	if err != nil {
		t.Fatal(err)
	}
	assertRoundTrip(t, got, v)
	if _, _, err := c.Visitors.UpdateVisit(ctxT(t), "v-1", nil); err == nil {
		t.Error("nil request accepted")
	}
	if _, _, err := c.Visitors.UpdateVisit(ctxT(t), "..", &VisitUpdateRequest{}); err == nil {
		t.Error(`id ".." accepted`)
	}
}

func TestCreateVisitRequest(t *testing.T) {
	u := newUpstream(t)
	v := fixture(t, "visit_request.json")
	u.serveJSON(OpCreateVisitRequest.Pattern(), wantRequest{
		method: "POST", path: OpCreateVisitRequest.Route,
		body: `{"request":{"locationRef":"loc-1","userRefHost":"u-1","visitor":{"email":"g@example.com","name":"Grace"}}}`,
	}, http.StatusCreated, `{"request":`+v+`}`)
	got, _, err := u.client().Visitors.CreateVisitRequest(ctxT(t), &VisitRequestCreateRequest{
		LocationRef: new("loc-1"), UserRefHost: new("u-1"),
		Visitor: &Visitor{Email: new("g@example.com"), Name: new("Grace")},
	})
	if err != nil {
		t.Fatal(err)
	}
	assertComplete(t, got, nil)
	assertRoundTrip(t, got, v)
	if _, _, err := u.client().Visitors.CreateVisitRequest(ctxT(t), nil); err == nil {
		t.Error("nil request accepted")
	}
}

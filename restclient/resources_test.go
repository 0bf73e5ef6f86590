package restclient

import (
	"net/http"
	"testing"
)

func TestCreateBooking(t *testing.T) {
	u := newUpstream(t)
	b := fixture(t, "booking.json")
	u.serveJSON(OpCreateBooking.Pattern(), wantRequest{
		method: "POST", path: OpCreateBooking.Route,
		body: `{"booking":{"resourceRef":"res-1","startDate":"2021-05-21T10:00:00Z","endDate":"2021-05-21T12:30:00Z","title":""}}`,
	}, http.StatusCreated, `{"booking":`+b+`}`)
	c := u.client()
	got, resp, err := c.Resources.CreateBooking(ctxT(t), &BookingCreateRequest{
		ResourceRef: new("res-1"),
		StartDate:   NewTimestamp(mustTime(t, "2021-05-21T12:00:00+02:00")),
		EndDate:     NewTimestamp(mustTime(t, "2021-05-21T12:30:00Z")),
		Title:       new(""), // an explicit empty title is sent
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusCreated {
		t.Errorf("status %d", resp.StatusCode)
	}
	assertComplete(t, got, nil)
	assertRoundTrip(t, got, b)
	if *got.Seats != 3 || !got.StartDate.Equal(mustTime(t, "2021-05-21T10:00:00Z")) {
		t.Errorf("seats %v start %v", *got.Seats, got.StartDate)
	}
	if _, _, err := c.Resources.CreateBooking(ctxT(t), nil); err == nil {
		t.Error("nil request accepted")
	}
}

func TestGetResource(t *testing.T) {
	u := newUpstream(t)
	obs := &observations{}
	r := fixture(t, "resource.json")
	u.handle(OpGetResource.Pattern(), func(w http.ResponseWriter, req *http.Request) {
		wantRequest{method: "GET", path: "/resources/v1/a%2Fb%20c%3F"}.check(t, req)
		if id := req.PathValue("id"); id != "a/b c?" {
			t.Errorf("id = %q", id)
		}
		w.Write([]byte(`{"resource":` + r + `}`))
	})
	c := u.client()
	got, _, err := c.Resources.GetResource(obs.ctx(t), "a/b c?")
	if err != nil {
		t.Fatal(err)
	}
	assertComplete(t, got, nil)
	assertRoundTrip(t, got, r)
	if *got.AccessVendor3GroupRef != 3 || got.Schedule.Public.Items[0].Days.Saturday == nil || *got.Schedule.Public.Items[0].Days.Saturday {
		t.Error("unexpected values")
	}
	checkObserved(t, obs, "GET", OpGetResource.Route, 200)
	for _, bad := range []string{"", ".", ".."} {
		if _, _, err := c.Resources.GetResource(obs.ctx(t), bad); err == nil {
			t.Errorf("id %q accepted", bad)
		}
	}
}

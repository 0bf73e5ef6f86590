package restserver

import (
	"database/sql"
	"math"
	"net/http"

	"github.com/workspacenet/facade/restclient"
)

// Booking rules: a booking takes one seat; bookings of a resource may
// overlap up to its capacity (missing or < 1 counts as 1).
const (
	bookingSeats = 1
	taxRate      = 20.0 // percent, prices include it
)

// getResource is GET /resources/v1/{id}.
func (s *Server) getResource(r *http.Request, c *caller) (int, any, error) {
	id, err := pathID(r, "id")
	if err != nil {
		return 0, nil, err
	}
	var res restclient.Resource
	if err := getDoc(r.Context(), s.db.read, "resources", c.network, id, &res); err != nil {
		return 0, nil, notFound(err, "resource not found")
	}
	return http.StatusOK, map[string]any{"resource": res}, nil
}

// createBooking is POST /resources/bookings/v1. In one write transaction it
// checks the resource's duration rules and that the overlapping bookings
// leave a seat, then stores the booking and, when it costs money, its
// transaction.
func (s *Server) createBooking(r *http.Request, c *caller) (int, any, error) {
	ctx := r.Context()
	var req restclient.BookingCreateRequest
	if err := decodeBody(r, "booking", &req); err != nil {
		return 0, nil, err
	}
	resourceID, err := refParam(req.ResourceRef, "booking.resourceRef")
	if err != nil {
		return 0, nil, err
	}
	if req.StartDate == nil || req.StartDate.IsZero() {
		return 0, nil, invalidf("booking.startDate: is required")
	}
	if req.EndDate == nil || req.EndDate.IsZero() {
		return 0, nil, invalidf("booking.endDate: is required")
	}
	start, end := req.StartDate.UTC(), req.EndDate.UTC()
	if !end.After(start) {
		return 0, nil, invalidf("booking.endDate: must be after booking.startDate")
	}
	owner := c.membership
	if req.MembershipRefOwner != nil {
		if owner, err = refParam(req.MembershipRefOwner, "booking.membershipRefOwner"); err != nil {
			return 0, nil, err
		}
	}
	if err := maxLen(req.Title, 200, "booking.title"); err != nil {
		return 0, nil, err
	}
	if err := maxLen(req.Memo, 2000, "booking.memo"); err != nil {
		return 0, nil, err
	}
	minutes := end.Sub(start).Minutes()
	now := s.now().UTC()
	var b restclient.Booking
	err = s.db.tx(ctx, func(tx *sql.Tx) error {
		var res restclient.Resource
		if err := getDoc(ctx, tx, "resources", c.network, resourceID, &res); err != nil {
			return notFound(err, "booking.resourceRef: resource not found")
		}
		if d := res.Duration; d != nil {
			if d.Min != nil && *d.Min > 0 && minutes < *d.Min {
				return invalidf("booking.endDate: the booking must last at least %g minutes", *d.Min)
			}
			if d.Max != nil && *d.Max > 0 && minutes > *d.Max {
				return invalidf("booking.endDate: the booking must last at most %g minutes", *d.Max)
			}
		}
		if st := deref(res.BookingStepMinutes, 0); st > 0 && math.Mod(minutes, st) != 0 {
			return invalidf("booking.endDate: the duration must be a multiple of %g minutes", st)
		}
		_, user, err := member(ctx, tx, c.network, owner)
		if err != nil {
			return notFound(err, "booking.membershipRefOwner: membership not found")
		}
		capacity := int(deref(res.Capacity, 1))
		if capacity < 1 {
			capacity = 1
		}
		var used int
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(seats), 0) FROM bookings
			WHERE network_id = ? AND resource_id = ? AND deleted = 0 AND start_date < ? AND end_date > ?`,
			c.network, resourceID, micros(end), micros(start)).Scan(&used); err != nil {
			return err
		}
		if used+bookingSeats > capacity {
			return conflictf("booking: the resource is fully booked between %s and %s (capacity %d)",
				start.Format("2006-01-02T15:04:05Z07:00"), end.Format("2006-01-02T15:04:05Z07:00"), capacity)
		}
		title := req.Title
		if title == nil {
			title = res.Title
		}
		b = restclient.Booking{
			ID: newID(), ResourceRef: new(resourceID), StartDate: restclient.NewTimestamp(start), EndDate: restclient.NewTimestamp(end),
			Title: title, Memo: req.Memo, MembershipRefOwner: new(owner), UserOwner: user, Seats: new(float64(bookingSeats)),
			Attendees:  []restclient.BookingAttendee{{MembershipRef: new(owner), User: user}},
			CreateDate: restclient.NewTimestamp(now), UpdateDate: restclient.NewTimestamp(now),
		}
		hours := minutes / 60
		var tr *restclient.Transaction
		switch {
		case res.Money != nil && deref(res.Money.Enabled, false) && deref(res.Money.Price, 0) > 0:
			amount := round2(*res.Money.Price * hours)
			net := round2(amount / (1 + taxRate/100))
			tr = &restclient.Transaction{
				ID: newID(), Amount: new(amount), CreateDate: restclient.NewTimestamp(now), CurrencyCode: new("EUR"),
				LocationRef: res.LocationRef, MembershipRef: new(owner), Status: new(restclient.TransactionStatusSucceeded),
				Type: new(restclient.TransactionTypeBooking), PaymentMethod: &restclient.PaymentMethod{Label: new("External"), Type: new("external")},
				Booking: &restclient.TransactionBooking{ID: b.ID, Resource: &restclient.Resource{ID: res.ID, Title: res.Title},
					Price: &restclient.PriceSplit{NetAmount: new(net), TaxAmount: new(round2(amount - net))}},
				User: user,
			}
			b.Payment = &restclient.ItemPayment{Amount: new(amount), CurrencyCode: new("EUR"), Status: new("succeeded"), Type: new("external"),
				Tax: &restclient.ItemPaymentTax{Inclusive: new(true), Rate: new(taxRate)}, TransactionRef: new(tr.ID)}
		case res.Credits != nil && deref(res.Credits.Enabled, false) && deref(res.Credits.Price, 0) > 0:
			b.Payment = &restclient.ItemPayment{Amount: new(round2(*res.Credits.Price * hours)), Status: new("succeeded"), Type: new("credits")}
		}
		if err := insert(ctx, tx, record{table: "bookings", id: b.ID, network: c.network, createDate: now, doc: b, cols: map[string]any{
			"location_id": deref(res.LocationRef, ""), "resource_id": resourceID, "start_date": micros(start), "end_date": micros(end), "seats": bookingSeats,
		}}); err != nil {
			return err
		}
		if tr != nil {
			return insert(ctx, tx, record{table: "transactions", id: tr.ID, network: c.network, createDate: now, doc: tr, cols: map[string]any{
				"location_id": deref(res.LocationRef, ""), "status": string(*tr.Status), "type": string(*tr.Type)}})
		}
		return nil
	})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, map[string]any{"booking": b}, nil
}
